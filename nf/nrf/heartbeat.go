package nrf

// NF heartbeats (TS 29.510 5.2.2.3.2): every NF sends NFUpdate at the
// heartBeatTimer the NRF assigned; one silent for longer is SUSPENDED, no
// longer discovered, and its subscribers are told.

import (
	"context"
	"time"

	"github.com/free5gc/openapi/models"
)

// grace is how long past its heartbeat period an NF may stay silent: half
// a period, so one heartbeat delayed by a busy NF or network does not
// suspend it, and a dead NF is still gone within two periods.
func grace(period time.Duration) time.Duration { return period / 2 }

// sweepsPerPeriod: how often per heartbeat period silent NFs are looked
// for; a dead NF is suspended at most period/4 after its deadline.
const sweepsPerPeriod = 4

// watchHeartbeats suspends silent NFs until ctx ends.
func (n *NF) watchHeartbeats(ctx context.Context) {
	if n.heartbeat <= 0 {
		return
	}
	t := time.NewTicker(n.heartbeat / sweepsPerPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.suspendSilent(n.now())
		}
	}
}

// suspendSilent suspends the NFs whose heartbeat is overdue at now and
// notifies their subscribers (NF_PROFILE_CHANGED, nfStatus SUSPENDED).
func (n *NF) suspendSilent(now time.Time) {
	for _, p := range n.reg.suspendSilent(now, grace) {
		n.log.Warn("NF missed its heartbeats: suspended", "nfInstanceId", p.NfInstanceId, "nfType", p.NfType)
		n.notify(models.NotificationEventType_PROFILE_CHANGED, p)
	}
}
