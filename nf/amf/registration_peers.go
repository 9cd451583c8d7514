package amf

// The peer NF calls of TS 23.502 4.2.2.2.2 steps 14-16, asked at once.
//
// Once NAS security is set up, registration needs the UDM (step 14a
// Nudm_UECM_Registration, 14b Nudm_SDM_Get of the access and mobility and
// of the SMF selection subscription data, 14c Nudm_SDM_Subscribe), the
// NSSF (4.2.2.2.3, from the subscribed S-NSSAIs) and the PCF (step 16, AM
// policy association). Asked one after another they cost five round trips
// in a row, more than half of a lone registration. None of them needs
// another's answer except the two that read the subscription: the NSSF is
// asked for the subscribed S-NSSAIs, and step 14c subscribes after "a
// successful response" of step 14b. So four branches run at once:
//
//	UECM registration
//	SDM Get am-data, then (NSSF selection ‖ SDM Subscribe)
//	SDM Get smf-select-data
//	AM policy association create (skipped when the UE already has one)
//
// The two SDM Gets usually went out already while security mode ran
// (registration_prefetch.go); their branches then only wait for them.
//
// and the Registration Accept waits for all of them. What each failure
// means does not change: a failed UECM registration or SDM Get rejects
// the registration (gmm_registration.go maps the cause), an SDM subscription
// or AM policy association that fails is logged and the UE registered all
// the same (TS 23.502 4.16.1.2: optional for registration); without SMF
// selection data the UE's first PDU session establishment reads it
// (gsm_transport.go), as before, instead of having it ready. Whatever a
// rejected registration created at a peer in the meantime is undone: the
// UDM registration is purged and the AM policy association deleted
// (cleanupSBI, or the answer's undo when no handler takes it).

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"
	"github.com/l25gc/l25gc/internal/gopool"
)

// registrationPeers is what steps 14-16 ask of the peers, copied off the
// UE context so the calls never touch it.
type registrationPeers struct {
	n         *NF
	c         Consumer
	sessions  SessionConsumer
	supi      string
	plmn      models.PlmnId
	uecm      models.Amf3GppAccessRegistration
	sdm       models.SdmSubscription
	requested []models.Snssai
	tai       models.Tai
	// policy is the AM policy association to create; nil when the UE
	// keeps the one it has.
	policy *models.PcfAmPolicyControlPolicyAssociationRequest
	// prefetch holds the step 14b reads already asked during security
	// mode (registration_prefetch.go); nil: ask them here.
	prefetch *subscriptionPrefetch
}

// registrationPeersOf takes what the calls of steps 14-16 need from ue.
func (n *NF) registrationPeersOf(ue *ueContext) registrationPeers {
	supi, guami := ue.supi, n.guami.ToModel()
	q := registrationPeers{n: n, c: n.opts.Consumer, sessions: n.opts.Sessions,
		supi: supi, plmn: n.env.PLMN(), requested: ue.reg.requested, tai: ue.tai.ToModel(),
		uecm: models.Amf3GppAccessRegistration{AmfInstanceId: n.id,
			DeregCallbackUri:       n.callbackURI("/namf-callback/v1/" + supi + "/dereg-notify"),
			InitialRegistrationInd: ue.reg.regType == nasMessage.RegistrationType5GSInitialRegistration,
			Guami:                  &guami, RatType: models.RatType_NR, Pei: ue.pei},
		sdm: models.SdmSubscription{NfInstanceId: n.id,
			CallbackReference:     n.callbackURI("/namf-callback/v1/" + supi + "/sdm-notify"),
			MonitoredResourceUris: []string{supi + "/am-data"}, PlmnId: ptr(n.guami.PLMN.ToModel())}}
	if ue.policyID == "" {
		q.policy = ptr(n.policyRequest(ue))
	}
	q.prefetch = ue.reg.prefetch
	return q
}

// ask runs the four branches at once and joins their answers into one.
func (q registrationPeers) ask(ctx context.Context) sbiAnswer {
	var (
		uecmErr, amErr error
		am             models.AccessAndMobilitySubscriptionData
		slices         *models.AuthorizedNetworkSliceInfo
		policyID       string
		policyErr      error
		smfSelection   *models.SmfSelectionSubscriptionData
	)
	crash := concurrently(q.n.workers,
		func() { uecmErr = q.c.RegisterUECM(ctx, q.supi, q.uecm) },
		func() { am, slices, amErr = q.subscription(ctx) },
		func() { smfSelection = q.smfSelectionData(ctx) },
		func() { policyID, policyErr = q.createPolicy(ctx) },
	)
	a := sbiAnswer{policyID: policyID, policyErr: policyErr, undo: q.undo(uecmErr == nil, policyID)}
	a.udm.registered = uecmErr == nil
	if crash != nil {
		a.undo()
		panic(crash) // raised again on the call's goroutine, where runContained takes it
	}
	switch {
	case uecmErr != nil: // step 14a comes first in TS 23.502: its cause is the one the UE gets
		a.err = uecmErr
	case amErr != nil:
		a.err = amErr
	}
	a.udm.am, a.udm.slices, a.udm.smfSelection = am, slices, smfSelection
	return a
}

// subscription is step 14b, then the NSSF (TS 23.502 4.2.2.2.3, from the
// subscribed S-NSSAIs) and step 14c, which both follow a successful Get.
func (q registrationPeers) subscription(ctx context.Context) (models.AccessAndMobilitySubscriptionData, *models.AuthorizedNetworkSliceInfo, error) {
	am, err := q.amData(ctx)
	if err != nil {
		return am, nil, err
	}
	var slices *models.AuthorizedNetworkSliceInfo
	crash := concurrently(q.n.workers,
		func() { slices = q.n.askNSSF(ctx, q.supi, q.requested, am.Nssai, q.tai) },
		func() {
			if err := q.c.SubscribeSDM(ctx, q.supi, q.sdm); err != nil {
				q.n.log.Warn("SDM subscribe failed; continuing", "supi", q.supi, "err", err)
			}
		},
	)
	if crash != nil {
		panic(crash)
	}
	return am, slices, nil
}

// amData is the access and mobility subscription (step 14b), read during
// security mode when it could be.
func (q registrationPeers) amData(ctx context.Context) (models.AccessAndMobilitySubscriptionData, error) {
	if q.prefetch == nil {
		return q.c.AMData(ctx, q.supi, q.plmn)
	}
	if err := q.prefetch.wait(ctx); err != nil {
		return models.AccessAndMobilitySubscriptionData{}, err
	}
	return q.prefetch.am, q.prefetch.amErr
}

// smfSelectionData is smfSelection, read during security mode when it
// could be.
func (q registrationPeers) smfSelectionData(ctx context.Context) *models.SmfSelectionSubscriptionData {
	if q.prefetch == nil {
		return q.smfSelection(ctx)
	}
	if q.prefetch.wait(ctx) != nil {
		return nil
	}
	return q.prefetch.smfSelection
}

// smfSelection is the SMF selection subscription data (step 14b), which
// the UE's PDU session establishments need (TS 23.502 4.3.2.2.1 step 2);
// nil when the UDM has none to give.
func (q registrationPeers) smfSelection(ctx context.Context) *models.SmfSelectionSubscriptionData {
	sel, err := q.sessions.SMFSelectionData(ctx, q.supi, q.plmn)
	if err != nil {
		q.n.log.Info("SMF selection subscription data unavailable at registration", "supi", q.supi, "err", err)
		return nil
	}
	return &sel
}

// createPolicy is step 16, unless the UE keeps its association.
func (q registrationPeers) createPolicy(ctx context.Context) (string, error) {
	if q.policy == nil {
		return "", nil
	}
	return q.c.CreateAMPolicy(ctx, *q.policy)
}

// undo reverses what the calls created when no handler takes the answer
// (the UE was released or restarted its registration meanwhile).
func (q registrationPeers) undo(registered bool, policyID string) func() {
	n, supi := q.n, q.supi
	return func() {
		// A newer context of the SUPI owns the UDM registration now.
		if registered && !n.ues.known(supi) {
			n.purgeUECM(supi)
		}
		n.deleteAMPolicy(supi, policyID)
	}
}

// concurrently runs each fn at once and waits for all: the first on the
// calling goroutine, which waits anyway and whose stack has already grown
// to what an SBI call's JSON decoding needs, the others on goroutines of
// their own (from workers). A panic in one is returned (the first, with its stack)
// rather than let loose on a goroutine nothing recovers: a bug in one
// call must cost one UE, never the AMF.
func concurrently(workers *gopool.Pool, fns ...func()) (crash any) {
	if len(fns) == 0 {
		return nil
	}
	var (
		wg   sync.WaitGroup
		once sync.Once
	)
	contained := func(fn func()) {
		defer func() {
			if r := recover(); r != nil {
				once.Do(func() { crash = fmt.Sprintf("%v\n%s", r, debug.Stack()) })
			}
		}()
		fn()
	}
	for _, fn := range fns[1:] {
		wg.Add(1)
		workers.Go(func() {
			defer wg.Done()
			contained(fn)
		})
	}
	contained(fns[0])
	wg.Wait()
	return crash
}
