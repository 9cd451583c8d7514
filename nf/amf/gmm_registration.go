package amf

// Registration: TS 23.502 4.2.2.2.2 (initial, with SUCI or 5G-GUTI) and
// TS 24.501 5.5.1.2 / 5.5.1.3 (mobility and periodic registration update).
// The steps of 4.2.2.2.2, in the order they run:
//
//	1-3    Registration Request          onRegistrationRequest, registerWithGUTI
//	6-7    Identity Request/Response     askIdentity, onIdentityResponse
//	8-9    authentication, security mode gmm_auth.go
//	14-16  UDM (UECM, SDM), NSSF, PCF    completeRegistration, onPeersAnswer,
//	       (AM policy), asked at once    registration_peers.go
//	21     Registration Accept           acceptRegistration
//	22     Registration Complete         onRegistrationComplete
//
// Each SBI step waits for its answer in a state of its own (sbi_call.go).

import (
	"errors"
	"fmt"
	"time"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

const sbiTimeout = 10 * time.Second

// parseRegistration validates a Registration Request (TS 24.501 8.2.6) and
// returns what the procedure needs, or the cause to reject it with.
func parseRegistration(rr *nasMessage.RegistrationRequest) (registration, error) {
	r := registration{
		regType:  rr.NgksiAndRegistrationType5GS.GetRegistrationType5GS(),
		ngKSI:    rr.NgksiAndRegistrationType5GS.GetNasKeySetIdentifiler(),
		followOn: rr.NgksiAndRegistrationType5GS.GetFOR() == 1,
	}
	id, err := nasx.ParseMobileIdentity(rr.MobileIdentity5GS.Buffer)
	if err != nil {
		return r, rejectRegistration(nasx.CauseInvalidMandatoryInfo, fmt.Errorf("5GS mobile identity: %w", err))
	}
	r.identity = id
	if rr.UESecurityCapability != nil {
		r.secCap = nasx.SecurityCapability{Raw: append([]byte(nil), rr.UESecurityCapability.Buffer...)}
	}
	switch r.regType {
	case nasMessage.RegistrationType5GSInitialRegistration:
		// TS 24.501 8.2.6.4: the UE security capability is included in initial registration.
		if !r.secCap.Valid() {
			return r, rejectRegistration(nasx.CauseInvalidMandatoryInfo, errors.New("no UE security capability"))
		}
	case nasMessage.RegistrationType5GSMobilityRegistrationUpdating, nasMessage.RegistrationType5GSPeriodicRegistrationUpdating:
	default:
		// Emergency registration is not offered (TS 24.501 5.5.1.2.5, #5GS services not allowed).
		return r, rejectRegistration(nasx.Cause5GSServicesNotAllowed, fmt.Errorf("registration type %d", r.regType))
	}
	if rr.RequestedNSSAI != nil {
		if r.requested, err = nasx.NSSAIModels(rr.RequestedNSSAI.Buffer); err != nil {
			return r, rejectRegistration(nasx.CauseSemanticallyIncorrect, err)
		}
	}
	if rr.NASMessageContainer != nil {
		r.container = append([]byte(nil), rr.NASMessageContainer.Buffer...)
	}
	return r, nil
}

// onRegistrationRequest starts (or restarts) registration.
func (n *NF) onRegistrationRequest(ue *ueContext, in *input) (State, error) {
	n.stopTimer(ue)
	n.cancelCall(ue)
	if ue.state != StateDeregistered && ue.state != StateRegistered {
		// TS 24.501 5.5.1.2.8 d): a new request aborts the running procedure.
		n.finishProcedure(ue, procRegistration, resultFailure)
	}
	reg, err := parseRegistration(in.msg.m.RegistrationRequest)
	if err != nil {
		return ue.state, err
	}
	if reg.regType == nasMessage.RegistrationType5GSInitialRegistration || !reg.secCap.Valid() {
		reg.secCap = pick(reg.secCap, ue.reg.secCap)
	}
	reg.verified = in.msg.verified
	ue.reg = reg
	n.startProcedure(ue)
	ue.auth = authState{}

	switch reg.identity.Type {
	case nasx.IdentitySUCI:
		ue.suci = reg.identity.SUCI
		return n.startAuthentication(ue)
	case nasx.IdentityGUTI:
		return n.registerWithGUTI(ue, reg.identity.GUTI, in.msg.raw)
	default:
		return n.askIdentity(ue)
	}
}

func pick(a, b nasx.SecurityCapability) nasx.SecurityCapability {
	if a.Valid() {
		return a
	}
	return b
}

// registerWithGUTI: a UE known by its 5G-GUTI skips authentication when its
// request passes the integrity check of the context we keep (TS 24.501
// 5.5.1.2.2, TS 33.501 6.4.6); otherwise it is authenticated again, or
// identified when the GUTI is unknown (TS 24.501 5.4.3).
func (n *NF) registerWithGUTI(ue *ueContext, g nasx.GUTI, raw []byte) (State, error) {
	connected := ue.guti != nil && *ue.guti == g && ue.sec != nil && ue.sec.confirmed
	if !connected && !n.adoptIdle(ue, g, raw) {
		return n.askIdentity(ue)
	}
	// TS 23.502 4.2.3.3: a UE that registers instead of answering the
	// paging ends it; the SMFs re-arm their buffering (paging.go).
	n.failPaged(ue, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
	if ue.reg.verified {
		if !ue.reg.secCap.Valid() {
			ue.reg.secCap = ue.capability
		}
		if err := n.readContainer(ue); err != nil {
			return ue.state, err
		}
		return n.acceptRegistration(ue)
	}
	ue.sec = nil
	return n.startAuthentication(ue)
}

// readContainer takes the non-cleartext IEs from the NAS message container
// of a request that passed the integrity check: the whole request, ciphered
// with the request's COUNT (TS 24.501 4.4.6).
func (n *NF) readContainer(ue *ueContext) error {
	if ue.reg.container == nil {
		return nil
	}
	plain, err := ue.sec.nas.DecipherContainer(ue.reg.container)
	if err != nil {
		return err
	}
	return n.readFullRequest(ue, plain)
}

// adoptIdle takes over the parked context of a UE known by g and checks the
// request's integrity with it.
func (n *NF) adoptIdle(ue *ueContext, g nasx.GUTI, raw []byte) bool {
	if !n.assigned(g) {
		return false
	}
	old, _ := n.ues.takeIdleIf(g.TMSI, func(*ueContext) bool { return true })
	if old == nil {
		return false
	}
	n.adopt(ue, old)
	n.endPagedProcedure(ue, ratelimit.ResultFailure) // registering, not answering a paging (limiter_events.go)
	ue.reg.verified = ue.sec.verifies(raw)
	return true
}

// adoptIdleIfVerified takes over the parked context of a UE known by g only
// when raw passes its integrity check; otherwise the context stays parked,
// untouched. known says whether g names a parked context at all.
func (n *NF) adoptIdleIfVerified(ue *ueContext, g nasx.GUTI, raw []byte) (known, adopted bool) {
	if !n.assigned(g) {
		return false, false
	}
	old, known := n.ues.takeIdleIf(g.TMSI, func(old *ueContext) bool { return old.sec.verifies(raw) })
	if old == nil {
		return known, false
	}
	n.adopt(ue, old)
	n.endPagedProcedure(ue, ratelimit.ResultFailure) // deregistering, not answering a paging (limiter_events.go)
	ue.reg.verified = true
	return true, true
}

// assigned says whether g is a 5G-GUTI of this AMF (TS 23.003 2.10.1).
func (n *NF) assigned(g nasx.GUTI) bool {
	return g.GUAMI == n.guami
}

// adopt moves the 5GMM context of a parked UE onto ue's N2 connection;
// the SUPI through the table, which indexes connected UEs by it.
func (n *NF) adopt(ue, old *ueContext) {
	n.ues.setSUPI(ue, old.supi)
	ue.adopt(old)
}

// adopt moves the 5GMM context of a parked UE, but its SUPI (NF.adopt),
// onto this N2 connection.
func (ue *ueContext) adopt(old *ueContext) {
	ue.suci, ue.pei, ue.guti = old.suci, old.pei, old.guti
	ue.sec, ue.allowed, ue.ambrUL, ue.ambrDL = old.sec, old.allowed, old.ambrUL, old.ambrDL
	ue.policyID, ue.udmRegistered, ue.registered = old.policyID, old.udmRegistered, old.registered
	ue.capability = old.capability
	ue.pdu = old.pdu
	ue.stored = old.stored
	ue.takePaging(old) // paging.go: the transfers kept while it was paged
	if ue.reg.regType != nasMessage.RegistrationType5GSInitialRegistration {
		// TS 23.501 5.4.4.1: the radio capability is kept while the UE stays
		// registered, not across an initial registration.
		ue.radioCapability = old.radioCapability
	}
}

// askIdentity: TS 24.501 5.4.3.2, Identity Request for the SUCI, T3570.
func (n *NF) askIdentity(ue *ueContext) (State, error) {
	req, err := nasx.BuildIdentityRequest(nasx.IdentitySUCI)
	if err != nil {
		return ue.state, err
	}
	if err := n.sendGuarded(ue, req, false, T3570); err != nil {
		return ue.state, err
	}
	return StateIdentification, nil
}

// onIdentityResponse: TS 24.501 5.4.3.4.
func (n *NF) onIdentityResponse(ue *ueContext, in *input) (State, error) {
	n.stopTimer(ue)
	id, err := nasx.ParseMobileIdentity(in.msg.m.IdentityResponse.MobileIdentity.Buffer)
	if err != nil || id.Type != nasx.IdentitySUCI {
		return ue.state, rejectRegistration(nasx.CauseUEIdentityCannotBeDerived, fmt.Errorf("identity response: %v %v", id.Type, err))
	}
	ue.suci = id.SUCI
	return n.startAuthentication(ue)
}

// completeRegistration runs TS 23.502 4.2.2.2.2 steps 14-16 once security
// is established: the UDM (UECM registration, SDM Get and Subscribe), the
// NSSF and the PCF, asked at once (registration_peers.go). onPeersAnswer
// goes on when all have answered.
func (n *NF) completeRegistration(ue *ueContext) (State, error) {
	n.call(ue, EvPeersAnswer, n.registrationPeersOf(ue).ask)
	return StateAwaitingPeers, nil
}

// onPeersAnswer derives the allowed NSSAI and the UE-AMBR from the
// subscription and keeps the AM policy association; without one the UE is
// registered all the same (TS 23.502 4.16.1.2: optional for registration).
func (n *NF) onPeersAnswer(ue *ueContext, in *input) (State, error) {
	a := n.answer(ue, in)
	if a == nil {
		return ue.state, nil
	}
	// Kept before any reject, so that releasing the UE undoes them (cleanupSBI).
	if a.udm.registered {
		ue.udmRegistered = true
	}
	if a.policyID != "" {
		ue.policyID = a.policyID
	}
	if a.udm.smfSelection != nil {
		ue.pdu.selection = a.udm.smfSelection // read once per registration (pdu_session.go)
	}
	if a.err != nil {
		return ue.state, n.subscriberError(a.err)
	}
	am := a.udm.am
	ue.allowed = n.allowedFrom(a.udm.slices, ue.reg.requested, am.Nssai)
	if len(ue.allowed) == 0 {
		// TS 24.501 5.5.1.2.5: #62 no network slices available.
		return ue.state, rejectRegistration(nasx.CauseNoNetworkSlicesAvailable, errors.New("allowed NSSAI empty"))
	}
	if am.SubscribedUeAmbr != nil {
		ue.ambrUL, ue.ambrDL = parseBitRate(am.SubscribedUeAmbr.Uplink), parseBitRate(am.SubscribedUeAmbr.Downlink)
	}
	if a.policyErr != nil {
		n.log.Warn("AM policy association failed; continuing", "supi", ue.supi, "err", a.policyErr)
	}
	return n.assignGUTIAndAccept(ue)
}

// assignGUTIAndAccept gives a new 5G-GUTI on initial registration (TS 24.501
// 5.5.1.2.4) and accepts.
func (n *NF) assignGUTIAndAccept(ue *ueContext) (State, error) {
	if ue.guti == nil || ue.reg.regType == nasMessage.RegistrationType5GSInitialRegistration {
		ue.guti = &nasx.GUTI{GUAMI: n.guami, TMSI: n.ues.allocTMSI()}
	}
	return n.acceptRegistration(ue)
}

// The answers to a failed AUSF/UDM call during registration. None is
// Authentication Reject: that makes the UE consider its USIM invalid until
// switched off (TS 24.501 5.4.1.3.5), which only a wrong RES* justifies.

// authenticationError maps a failed Nausf_UEAuthentication_Authenticate: a
// SUCI the UDM cannot resolve (400 MANDATORY_IE_INCORRECT, 403
// AUTHENTICATION_REJECTED for an unknown home network key or a MAC tag
// that does not verify, 501 UNSUPPORTED_PROTECTION_SCHEME; TS 29.503
// 6.3.3.2.3.1) is #9, the UE identity cannot be derived by the network
// (TS 24.501 5.5.1.2.5: the UE forgets its 5G-GUTI and may register again).
// The AUSF's own 403 SERVING_NETWORK_NOT_AUTHORIZED is this network's
// configuration, not the UE's identity.
func (n *NF) authenticationError(err error) error {
	status, cause := sbi.StatusOf(err), sbi.CauseOf(err)
	if (status == 400 || status == 403 || status == 501) && cause != sbi.CauseServingNetworkNotAuthorized {
		return rejectRegistration(nasx.CauseUEIdentityCannotBeDerived, err)
	}
	return n.subscriberError(err)
}

// subscriberError maps a failed AUSF/UDM call on the subscriber: an unknown
// subscriber gets the configured cause (#3 or #7, TS 24.501 5.5.1.2.5).
func (n *NF) subscriberError(err error) error {
	if sbi.StatusOf(err) == 404 {
		return rejectRegistration(uint8(n.cfg.AMF.NAS.UnknownSubscriberCause), err)
	}
	return n.peerError(err)
}

// peerError maps a peer's failure that says nothing about the UE: a peer
// that cannot be reached, times out or answers 5xx is a passing fault of the
// core (reply.go backs the UE off); any other answer is #111.
func (n *NF) peerError(err error) error {
	if status := sbi.StatusOf(err); status == 0 || status >= 500 {
		return &gmmError{kind: replyBackOff, cause: nasx.CauseCongestion, err: err}
	}
	return rejectRegistration(nasx.CauseProtocolErrorUnspecified, err)
}

func (n *NF) policyRequest(ue *ueContext) models.PcfAmPolicyControlPolicyAssociationRequest {
	return models.PcfAmPolicyControlPolicyAssociationRequest{
		NotificationUri: n.callbackURI("/namf-callback/v1/am-policy/" + ue.supi),
		Supi:            ue.supi, Pei: ue.pei, AccessType: models.AccessType__3_GPP_ACCESS, RatType: models.RatType_NR,
		ServingPlmn: ptr(n.guami.PLMN.ToModelNid()),
		UserLoc:     &models.UserLocation{NrLocation: &models.NrLocation{Tai: ptr(ue.tai.ToModel())}},
		Guami:       ptr(n.guami.ToModel()),
	}
}

func ptr[T any](v T) *T { return &v }

func (n *NF) callbackURI(path string) string {
	return "http://" + n.cfg.AdvertisedAddr(n.cfg.AMF.SBIPort) + path
}

// allowedNSSAI is requested ∩ subscribed ∩ served; without a request, the
// default subscribed S-NSSAIs ∩ served (TS 23.501 5.15.5.2.1).
func (n *NF) allowedNSSAI(requested []models.Snssai, sub *models.Nssai) []models.Snssai {
	var subscribed, defaults []models.Snssai
	if sub != nil {
		subscribed = append(append(subscribed, sub.DefaultSingleNssais...), sub.SingleNssais...)
		defaults = sub.DefaultSingleNssais
	}
	want := requested
	if len(want) == 0 {
		want = defaults
	}
	var out []models.Snssai
	for _, s := range want {
		if containsSNSSAI(subscribed, s) && containsSNSSAI(n.servedSlices(), s) && !containsSNSSAI(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func containsSNSSAI(list []models.Snssai, s models.Snssai) bool {
	for _, x := range list {
		if domain.SameModelSNSSAI(x, s) {
			return true
		}
	}
	return false
}

func (n *NF) servedSlices() []models.Snssai {
	return domain.SNSSAIsToModels(n.cfg.SNSSAIs)
}

// acceptRegistration sends Registration Accept (T3550): inside Initial
// Context Setup Request with KgNB when the gNB has no context for the UE yet
// (TS 23.502 4.2.2.2.2 step 21; TS 38.413 8.3.1), else in Downlink NAS
// Transport (a registration update in CM-CONNECTED).
func (n *NF) acceptRegistration(ue *ueContext) (State, error) {
	n.releaseOnInitialRegistration(ue)
	plain, err := nasx.BuildRegistrationAccept(nasx.RegistrationAccept{GUTI: ue.guti, TAIs: n.tais,
		Allowed: ue.allowed, T3512: n.cfg.AMF.NAS.T3512})
	if err != nil {
		return ue.state, err
	}
	if ue.contextSetup {
		if err := n.sendGuarded(ue, plain, false, T3550); err != nil {
			return ue.state, err
		}
		return StateRegistering, nil
	}
	pdu, err := ue.sec.protect(plain, false)
	if err != nil {
		return ue.state, err
	}
	ics, err := n.initialContext(ue, pdu)
	if err != nil {
		return ue.state, err
	}
	if err := n.sendToUE(ue, ics); err != nil {
		return ue.state, err
	}
	ue.contextSetup = true
	n.startTimer(ue, T3550, plain, false)
	return StateRegistering, nil
}

// initialContext builds the Initial Context Setup Request carrying nasPDU.
func (n *NF) initialContext(ue *ueContext, nasPDU []byte, sessions ...ngapx.SessionResource) ([]byte, error) {
	// TS 33.501 A.9 / 6.9.2.1.1: KgNB from KAMF and the uplink NAS COUNT of
	// the last uplink message verified under this context (the Security Mode
	// Complete, or the integrity-checked Registration Request).
	kgnb, err := n.opts.Crypto.KgNB(ue.sec.kamf, ue.sec.nas.ULCount())
	if err != nil {
		return nil, err
	}
	ue.sec.startNH(kgnb) // the handovers' next hops chain from it (ngap_handover_common.go)
	enc, integ := ue.reg.secCap.NRBits()
	eenc, einteg := ue.reg.secCap.EUTRABits()
	return ngapx.BuildInitialContextSetupRequest(ngapx.InitialContext{AMFUEID: ue.amfID, RANUEID: ue.ranID,
		GUAMI: n.guami, Allowed: ue.allowed, NREncryption: enc, NRIntegrity: integ, EUTRAEncryption: eenc,
		EUTRAIntegrity: einteg, KgNB: kgnb, AMBRUL: ue.ambrUL, AMBRDL: ue.ambrDL, NASPDU: nasPDU, Sessions: sessions,
		// TS 23.501 5.4.4.1: the kept capability spares the gNB asking the
		// UE again (and the AMF its UE Radio Capability Info Indication).
		RadioCapability: ue.radioCapability})
}

// onRegistrationComplete: TS 24.501 5.5.1.2.4 — stop T3550; then tell the UE
// the network name (Configuration Update Command, no acknowledgement; 5.4.4).
func (n *NF) onRegistrationComplete(ue *ueContext, _ *input) (State, error) {
	n.stopTimer(ue)
	if !ue.registered {
		ue.registered = true
		n.metrics.registered.Inc()
	}
	n.finishProcedure(ue, procRegistration, resultSuccess)
	net := n.cfg.AMF.Network
	if net.Full != "" || net.Short != "" {
		n.sendPlainOrProtected(ue, n.built("ConfigurationUpdateCommand")(nasx.BuildConfigurationUpdateCommand(net.Full, net.Short)))
	}
	n.persistUE(ue) // after the last downlink of the procedure: its COUNTs are final
	return n.releaseUnlessFollowOn(ue)
}

// onStatus logs a 5GMM Status from the UE (TS 24.501 5.4.5).
func (n *NF) onStatus(ue *ueContext, in *input) (State, error) {
	if in.msg != nil && in.msg.m.Status5GMM != nil {
		n.log.Info("5GMM Status from UE", "amfUeNgapId", ue.amfID, "cause", in.msg.m.Status5GMM.Cause5GMM.GetCauseValue())
	}
	return ue.state, nil
}
