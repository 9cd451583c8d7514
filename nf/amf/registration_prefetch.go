package amf

// Reading the subscription while security mode runs.
//
// Once the AUSF has confirmed the authentication (TS 33.501 6.1.3.2 step
// 11) the AMF knows the UE's SUPI, and the Security Mode Command/Complete
// exchange with the UE (TS 24.501 5.4.2) takes an N2 round trip. The two
// Nudm_SDM_Get reads of TS 23.502 4.2.2.2.2 step 14b — the access and
// mobility subscription and the SMF selection subscription data — change
// nothing at the UDM and need nothing from that exchange, so they are
// asked meanwhile; the registration's other calls (registration_peers.go)
// wait for step 14a/16 inputs the Security Mode Complete brings (the PEI,
// the full request's requested NSSAI) and still start after it. A read
// that failed fails the registration as it would have after security
// mode; a registration that ends or restarts meanwhile drops its reads.

import (
	"context"
	"errors"

	"github.com/free5gc/openapi/models"
)

// errPrefetchCrashed is the read's outcome when a bug panicked in it: the
// registration gets the answer of a failing core (reply.go backs the UE
// off), never the AMF.
var errPrefetchCrashed = errors.New("subscription read: internal error")

// subscriptionPrefetch is the outcome of the two reads, ready once done is
// closed. Its fields are written only before done closes.
type subscriptionPrefetch struct {
	done         chan struct{}
	am           models.AccessAndMobilitySubscriptionData
	amErr        error
	smfSelection *models.SmfSelectionSubscriptionData
}

// prefetchSubscription starts the step 14b reads of supi's subscription
// on a goroutine of their own, bounded like any SBI call of the UE.
func (n *NF) prefetchSubscription(supi string) *subscriptionPrefetch {
	p := &subscriptionPrefetch{done: make(chan struct{})}
	c, plmn := n.opts.Consumer, n.env.PLMN()
	q := registrationPeers{n: n, sessions: n.opts.Sessions, supi: supi, plmn: plmn}
	ctx, cancel := context.WithTimeout(n.calls, sbiTimeout)
	n.workers.Go(func() {
		defer close(p.done)
		defer cancel()
		crash := concurrently(n.workers,
			func() { p.am, p.amErr = c.AMData(ctx, supi, plmn) },
			func() { p.smfSelection = q.smfSelection(ctx) },
		)
		if crash != nil {
			n.log.Error("subscription read panicked", "supi", supi, "panic", crash)
			p.amErr, p.smfSelection = errPrefetchCrashed, nil
		}
	})
	return p
}

// wait returns once the reads are done, or ctx's error.
func (p *subscriptionPrefetch) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
