package smf

// UE-requested PDU session establishment (TS 23.502 4.3.2.2.1), the SMF's
// part:
//
//	3   Nsmf_PDUSession_CreateSMContext Request from the AMF with the UE's
//	    PDU Session Establishment Request (create);
//	4   the UE's sm-data from the UDM and the SMF's UECM registration,
//	    asked at once;
//	5   CreateSMContext Response: Created, or a reject with the 5GSM cause;
//	7   SM policy from the PCF (Npcf_SMPolicyControl_Create) — or local
//	    policy when no PCF offers it — and the UE's address from the DNN's
//	    pool (establish, after the answer);
//	10  N4 Session Establishment with the UPF;
//	11  Namf_Communication_N1N2MessageTransfer: PDU Session Establishment
//	    Accept (N1) and PDU Session Resource Setup Request Transfer (N2);
//	    on a failure in 7-10 the transfer carries the Reject instead and
//	    everything allocated is released;
//	15  UpdateSMContext with the gNB's PDU Session Resource Setup Response
//	    Transfer (activated, in pdu_update.go);
//	16  N4 Session Modification: the downlink FAR gets the gNB's tunnel.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// gsmReject is an establishment the SMF refuses: the 5GSM cause for the
// UE and the status and TS 29.502 cause for the AMF.
type gsmReject struct {
	gsm    uint8
	status int
	cause  string
	detail string
}

func (r *gsmReject) Error() string { return fmt.Sprintf("5GSM #%d (%s): %s", r.gsm, r.cause, r.detail) }

func reject(gsm uint8, detail string, a ...any) *gsmReject {
	status, cause := http.StatusForbidden, "N1_SM_ERROR"
	switch gsm {
	case nasx.GSMCauseMissingOrUnknownDNN:
		cause = "DNN_DENIED"
	case nasx.GSMCauseServiceOptionNotSubscribed:
		cause = "SUBSCRIPTION_DENIED"
	case nasx.GSMCauseServiceOptionNotSupported:
		cause = "SNSSAI_DENIED"
	case nasx.GSMCauseUnknownPDUSessionType, nasx.GSMCausePDUSessionTypeIPv4OnlyAllowed:
		cause = "PDUTYPE_DENIED"
	case nasx.GSMCauseNotSupportedSSCMode:
		cause = "SSC_DENIED"
	case nasx.GSMCauseNetworkFailure:
		status, cause = http.StatusGatewayTimeout, "NETWORK_FAILURE"
	case nasx.GSMCauseInsufficientResources:
		status, cause = http.StatusInternalServerError, "INSUFFICIENT_RESOURCES"
	case nasx.GSMCauseInvalidMandatoryInformation, nasx.GSMCauseMessageTypeNonExistent, nasx.GSMCauseInvalidPDUSessionIdentity:
		status = http.StatusBadRequest
	}
	return &gsmReject{gsm: gsm, status: status, cause: cause, detail: fmt.Sprintf(detail, a...)}
}

// create runs steps 3-4: checks the request and the subscription, then
// registers the session. It returns the context, or a *gsmReject.
func (n *NF) create(ctx context.Context, d *models.SmfPduSessionSmContextCreateData, n1 []byte) (*smContext, nasx.GSM, error) {
	g, err := checkEstablishmentRequest(d, n1)
	if err != nil {
		return nil, g, err
	}
	c := &smContext{supi: d.Supi, psi: g.PDUSessionID, pti: g.PTI, dnn: d.Dnn, servingNfID: d.ServingNfId,
		statusURI: d.SmContextStatusUri, anType: d.AnType, ratType: d.RatType, plmn: d.ServingNetwork,
		wantsDNS: g.WantsDNSv4, ipv4Only: g.PDUSessionType == nasx.PDUSessionTypeIPv4v6, weights: n.env.Config.SMF.QoS}
	if d.SNssai != nil {
		c.snssai = *d.SNssai
	}
	if err := n.checkServed(c); err != nil {
		return nil, g, err
	}
	// TS 23.502 4.3.2.2.1 step 3: a PDU session ID already in use is
	// released locally, before step 4: its UECM deregistration must reach
	// the UDM ahead of the new session's registration. No status
	// notification: the AMF, which asked for the new one, would take it
	// for the new session's.
	if old := n.ctxs.take(c.owner()); old != nil {
		n.teardown(ctx, old, "replaced by a new establishment")
	}
	if err := n.subscriptionAndRegistration(ctx, c); err != nil {
		return nil, g, err
	}
	if old := n.ctxs.add(c); old != nil { // one created meanwhile
		n.teardown(ctx, old, "replaced by a new establishment")
	}
	return c, g, nil
}

// subscriptionAndRegistration is step 4: the UE's sm-data and the SMF's
// UECM registration, asked of the UDM at once since neither needs the
// other's answer (one round trip less on every establishment). A
// registration made for a request the subscription refuses is withdrawn.
func (n *NF) subscriptionAndRegistration(ctx context.Context, c *smContext) error {
	var subErr error
	var wg sync.WaitGroup
	wg.Add(1)
	n.workers.Go(func() {
		defer wg.Done()
		subErr = contained(func() error { return n.checkSubscription(ctx, c) })
	})
	regErr := n.registerUECM(ctx, c)
	wg.Wait()
	if subErr == nil {
		return regErr
	}
	if c.uecmRegistered {
		if err := n.peers.deregisterSMF(ctx, c.supi, c.psi); err != nil {
			n.log.Warn("UECM deregistration after a refused subscription", "supi", c.supi, "psi", c.psi, "err", err)
		}
		c.uecmRegistered = false
	}
	return subErr
}

// contained runs f, turning a panic into an error: on a goroutine of its
// own, nothing else would recover it, and a bug must cost one session,
// never the SMF.
func contained(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// checkEstablishmentRequest reads the UE's request (TS 24.501 6.4.1.2)
// and what the SMF supports of it: IPv4 (IPv4v6 is answered with IPv4
// and #50), SSC mode 1.
func checkEstablishmentRequest(d *models.SmfPduSessionSmContextCreateData, n1 []byte) (nasx.GSM, error) {
	g, err := nasx.DecodeGSM(n1)
	var ge *nasx.GSMError
	switch {
	case errors.As(err, &ge):
		return g, reject(ge.Cause, "%v", ge.Err)
	case g.Type != nas.MsgTypePDUSessionEstablishmentRequest:
		return g, reject(nasx.GSMCauseMessageNotCompatibleWithState, "5GSM message type %d in CreateSMContext", g.Type)
	case g.PDUSessionID < 1 || g.PDUSessionID > 15 || (d.PduSessionId != 0 && d.PduSessionId != int32(g.PDUSessionID)):
		// TS 24.007 11.2.3.1b: values 1-15; the AMF's pduSessionId must match.
		return g, reject(nasx.GSMCauseInvalidPDUSessionIdentity, "PDU session identity %d (the AMF says %d)", g.PDUSessionID, d.PduSessionId)
	case d.Supi == "":
		return g, reject(nasx.GSMCauseInvalidMandatoryInformation, "supi missing")
	case g.PDUSessionType == nasx.PDUSessionTypeIPv6:
		return g, reject(nasx.GSMCausePDUSessionTypeIPv4OnlyAllowed, "PDU session type IPv6: this SMF allocates IPv4 only")
	case g.PDUSessionType != 0 && g.PDUSessionType != nasx.PDUSessionTypeIPv4 && g.PDUSessionType != nasx.PDUSessionTypeIPv4v6:
		return g, reject(nasx.GSMCauseUnknownPDUSessionType, "PDU session type %d not supported", g.PDUSessionType)
	case g.SSCMode != 0 && g.SSCMode != nasx.SSCMode1:
		return g, reject(nasx.GSMCauseNotSupportedSSCMode, "SSC mode %d: only SSC mode 1 is supported", g.SSCMode)
	}
	return g, nil
}

// checkServed: the DNN has a pool here (#27, TS 24.501 6.4.1.4.2) and
// the slice is one the core serves (#32).
func (n *NF) checkServed(c *smContext) error {
	p, ok := n.pools.of(c.dnn)
	if c.dnn == "" || !ok {
		return reject(nasx.GSMCauseMissingOrUnknownDNN, "DNN %q is not served by this SMF", c.dnn)
	}
	c.pool = p
	s, err := domain.SNSSAIFromModel(c.snssai)
	if err != nil {
		return reject(nasx.GSMCauseServiceOptionNotSupported, "S-NSSAI: %v", err)
	}
	if domain.ContainsSNSSAI(n.env.Config.SNSSAIs, s) {
		return nil
	}
	return reject(nasx.GSMCauseServiceOptionNotSupported, "S-NSSAI %s is not served by this SMF", s)
}

// checkSubscription reads the UE's sm-data (step 4): the DNN must be
// subscribed in the slice (#33), and its session AMBR and default QoS
// are kept as what the PCF starts from.
func (n *NF) checkSubscription(ctx context.Context, c *smContext) error {
	data, err := n.peers.smData(ctx, c.supi, c.snssai, c.dnn)
	if err != nil {
		return reject(nasx.GSMCauseNetworkFailure, "UDM sm-data: %v", err)
	}
	conf, ok := dnnConfiguration(data, c.snssai, c.dnn)
	if !ok {
		return reject(nasx.GSMCauseServiceOptionNotSubscribed, "%s has no subscription to DNN %s in slice %d/%s", c.supi, c.dnn, c.snssai.Sst, c.snssai.Sd)
	}
	return c.applySubscription(conf)
}

// dnnConfiguration finds the DNN's configuration in the slice's sm-data.
func dnnConfiguration(data []models.SessionManagementSubscriptionData, snssai models.Snssai, dnn string) (models.DnnConfiguration, bool) {
	for _, d := range data {
		if d.SingleNssai == nil || !domain.SameModelSNSSAI(*d.SingleNssai, snssai) {
			continue
		}
		for name, conf := range d.DnnConfigurations {
			if domain.DNN(name).Equal(domain.DNN(dnn)) {
				return conf, true
			}
		}
	}
	return models.DnnConfiguration{}, false
}

// applySubscription sets the default flow and session AMBR the
// subscription gives (TS 23.501 5.7.2.7, 5.7.2.6).
func (c *smContext) applySubscription(conf models.DnnConfiguration) error {
	f := qosFlow{QFI: defaultQFI, FiveQI: defaultFiveQI, ARP: arpOrDefault(nil), RuleID: 1, Precedence: defaultPrecedence}
	if q := conf.Var5gQosProfile; q != nil && q.Var5qi > 0 && q.Var5qi < 256 {
		f.FiveQI, f.ARP = uint8(q.Var5qi), arpOrDefault(q.Arp)
	}
	c.flows = []qosFlow{f}
	if a := conf.SessionAmbr; a != nil {
		return c.setAMBR(a)
	}
	return nil
}

func (c *smContext) setAMBR(a *models.Ambr) error {
	up, errUp := parseBitRate(a.Uplink)
	down, errDown := parseBitRate(a.Downlink)
	if err := errors.Join(errUp, errDown); err != nil {
		return reject(nasx.GSMCauseNetworkFailure, "session AMBR: %v", err)
	}
	c.ambrUp, c.ambrDown = up, down
	return nil
}

// registerUECM registers the SMF for the session at the UDM (step 4,
// TS 29.503 5.3.2.2.3).
func (n *NF) registerUECM(ctx context.Context, c *smContext) error {
	snssai, plmn := c.snssai, n.env.PLMN()
	err := n.peers.registerSMF(ctx, c.supi, c.psi, models.SmfRegistration{SmfInstanceId: n.id, PduSessionId: int32(c.psi),
		SingleNssai: &snssai, Dnn: c.dnn, PlmnId: &plmn})
	if err != nil {
		return reject(nasx.GSMCauseNetworkFailure, "UDM UECM registration: %v", err)
	}
	c.uecmRegistered = true
	return nil
}

// establish runs steps 7-11 after CreateSMContext was answered.
func (n *NF) establish(ctx context.Context, c *smContext) {
	c.mu.Lock()
	if c.state != stateEstablishing {
		// Released (ReleaseSMContext, a replacing establishment) before
		// the rest of the establishment ran: nothing to set up.
		c.mu.Unlock()
		return
	}
	n1, n2, err := n.setUp(ctx, c)
	c.mu.Unlock()
	if err != nil {
		n.failEstablishment(ctx, c, err)
		return
	}
	err = n.peers.transfer(ctx, n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai,
		n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_SETUP_REQ})
	if err != nil && n.stop.Err() != nil {
		return // the SMF is stopping: the lease stays for its next run
	}
	if err != nil {
		// The UE cannot be told; its session is released here and the
		// AMF learns it from the status notification.
		n.log.Warn("PDU session establishment: N1N2MessageTransfer failed", "supi", c.supi, "psi", c.psi, "err", err)
		n.releaseLocally(ctx, c, "N1N2MessageTransfer failed")
		return
	}
	n.m.accepted()
	n.log.Info("PDU session accepted", "supi", c.supi, "psi", c.psi, "dnn", c.dnn, "ue_ip", c.ueIP, "ul_teid", c.ul.TEID)
}

// setUp allocates the session (steps 7-10) and builds the Accept and the
// setup request transfer; on an error whatever it allocated is freed by
// failEstablishment.
func (n *NF) setUp(ctx context.Context, c *smContext) (n1, n2 []byte, err error) {
	ip, err := c.pool.allocate(c.owner())
	if err != nil {
		return nil, nil, reject(nasx.GSMCauseInsufficientResources, "%v", err)
	}
	c.ueIP = ip
	if err := n.applyPolicy(ctx, c); err != nil {
		return nil, nil, err
	}
	if err := n.establishN4(ctx, c); err != nil {
		return nil, nil, err
	}
	c.state = stateActivating
	n1, err = n.buildAccept(c)
	if err != nil {
		return nil, nil, reject(nasx.GSMCauseNetworkFailure, "%v", err)
	}
	n2, err = ngapx.BuildPDUSessionResourceSetupRequestTransfer(c.setupTransfer())
	if err != nil {
		return nil, nil, reject(nasx.GSMCauseNetworkFailure, "%v", err)
	}
	return n1, n2, nil
}

// applyPolicy is step 7: the PCF's SM policy decision, or local policy
// (the subscription's) when no PCF offers SM policy control.
func (n *NF) applyPolicy(ctx context.Context, c *smContext) error {
	d, uri, err := n.peers.createPolicy(ctx, n.policyContext(c))
	switch {
	case errors.Is(err, errNoPCF):
		n.log.Debug("no PCF for SM policy: local policy", "supi", c.supi, "err", err)
		return nil
	case err != nil:
		return reject(nasx.GSMCauseNetworkFailure, "PCF SM policy: %v", err)
	}
	c.policyURI = uri
	if err := c.applyDecision(d); err != nil {
		return reject(nasx.GSMCauseNetworkFailure, "PCF SM policy decision: %v", err)
	}
	return nil
}

func (n *NF) policyContext(c *smContext) models.SmPolicyContextData {
	snssai, default5QI := c.snssai, c.flows[0]
	arp := default5QI.ARP
	return models.SmPolicyContextData{Supi: c.supi, PduSessionId: int32(c.psi), PduSessionType: models.PduSessionType_IPV4,
		Dnn: c.dnn, SliceInfo: &snssai, AccessType: c.anType, RatType: c.ratType, ServingNetwork: c.plmn,
		NotificationUri: n.apiRoot() + callbackPrefix + "sm-policies/" + c.ref, Ipv4Address: c.ueIP.String(),
		SubsSessAmbr: &models.Ambr{Uplink: bitRateString(c.ambrUp), Downlink: bitRateString(c.ambrDown)},
		SubsDefQos:   &models.SubscribedDefaultQos{Var5qi: int32(default5QI.FiveQI), Arp: &arp}, SmfId: n.id}
}

func (n *NF) apiRoot() string {
	cfg := n.env.Config
	return cfg.SBIScheme() + "://" + cfg.AdvertisedAddr(cfg.SMF.SBIPort)
}

func bitRateString(bps uint64) string { return fmt.Sprintf("%d Kbps", bps/1000) }

// establishN4 is step 10: the session's rules at the UPF, which picks the
// N3 F-TEID. A UPF that cannot be reached or refuses is #26 (TS 24.501
// 6.4.1.4.2).
func (n *NF) establishN4(ctx context.Context, c *smContext) error {
	n4, err := n.n4Client()
	if err != nil {
		return reject(nasx.GSMCauseInsufficientResources, "%v", err)
	}
	est, err := n4.Establish(ctx, n.upf, c.sessionRules(n.cpAddr))
	if err != nil {
		return reject(nasx.GSMCauseInsufficientResources, "UPF %s: %v", n.upf, err)
	}
	c.upSEID = est.UPSEID
	fteid, ok := est.FTEIDs[pdrUplink(defaultQFI)]
	if !ok || !fteid.IPv4.Is4() {
		n.deleteN4(ctx, c)
		return reject(nasx.GSMCauseInsufficientResources, "UPF %s chose no IPv4 F-TEID for the uplink PDR", n.upf)
	}
	c.ul = ngapx.Tunnel{IPv4: fteid.IPv4, TEID: fteid.TEID}
	return nil
}

// buildAccept is the PDU Session Establishment Accept (TS 24.501 8.3.2).
func (n *NF) buildAccept(c *smContext) ([]byte, error) {
	a := nasx.EstablishmentAccept{PDUSessionID: c.psi, PTI: c.pti, UEIPv4: c.ueIP, AMBRDown: c.ambrDown, AMBRUp: c.ambrUp,
		SNSSAI: c.snssai, DNN: c.dnn}
	if c.ipv4Only {
		a.Cause = nasx.GSMCausePDUSessionTypeIPv4OnlyAllowed
	}
	if c.wantsDNS {
		a.DNS = c.pool.dns
	}
	for _, f := range c.flows {
		r, err := f.nasRule()
		if err != nil {
			return nil, err
		}
		a.Rules = append(a.Rules, r)
		a.Flows = append(a.Flows, f.nasFlow())
	}
	return nasx.BuildPDUSessionEstablishmentAccept(a)
}

func (c *smContext) setupTransfer() ngapx.SetupRequestTransfer {
	t := ngapx.SetupRequestTransfer{AMBRDown: c.ambrDown, AMBRUp: c.ambrUp, UL: c.ul}
	for _, f := range c.flows {
		t.Flows = append(t.Flows, f.ngapFlow())
	}
	return t
}

// failEstablishment releases what the establishment allocated and sends
// the UE the Reject through the AMF (step 11 with a failure).
func (n *NF) failEstablishment(ctx context.Context, c *smContext, err error) {
	var rej *gsmReject
	if !errors.As(err, &rej) {
		rej = reject(nasx.GSMCauseNetworkFailure, "%v", err)
	}
	n.m.rejected(rej.gsm)
	n.log.Warn("PDU session establishment rejected", "supi", c.supi, "psi", c.psi, "cause", rej.gsm, "err", rej.detail)
	n1, berr := nasx.BuildPDUSessionEstablishmentReject(c.psi, c.pti, rej.gsm)
	n.releaseLocally(ctx, c, "establishment failed")
	if berr != nil {
		return
	}
	if err := n.peers.transfer(ctx, n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai, n1: n1}); err != nil {
		n.log.Warn("PDU Session Establishment Reject: N1N2MessageTransfer failed", "supi", c.supi, "err", err)
	}
}

// writeCreateReject answers CreateSMContext with the Reject for the UE
// (TS 29.502 5.2.2.2.1: SmContextCreateError with n1SmMsg).
func writeCreateReject(w http.ResponseWriter, g nasx.GSM, rej *gsmReject) {
	body := models.SmContextCreateError{Error: &models.SmfPduSessionExtProblemDetails{
		Title: http.StatusText(rej.status), Status: int32(rej.status), Cause: rej.cause, Detail: rej.detail}}
	n1, err := nasx.BuildPDUSessionEstablishmentReject(g.PDUSessionID, g.PTI, rej.gsm)
	if err != nil {
		sbi.WriteProblem(w, rej.status, rej.cause, rej.detail)
		return
	}
	body.N1SmMsg = &models.RefToBinaryData{ContentId: contentIDN1}
	writeRelated(w, rej.status, body, sbi.Part{ContentID: contentIDN1, ContentType: sbi.ContentTypeNAS, Data: n1})
}

// writeRelated answers with JSON and binary parts (multipart/related).
func writeRelated(w http.ResponseWriter, status int, v any, parts ...sbi.Part) {
	body, ctype, err := sbi.EncodeRelated(v, parts...)
	if err != nil {
		sbi.WriteProblem(w, http.StatusInternalServerError, sbi.CauseSystemFailure, err.Error())
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
