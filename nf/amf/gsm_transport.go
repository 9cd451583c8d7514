package amf

// 5GSM messages in UL NAS Transport (TS 24.501 5.4.5.2.2): the AMF reads
// the routing information beside the message and forwards it to the SMF.
//
//	initial request       TS 23.502 4.3.2.2.1 steps 1-3   establish, onSMContextCreated
//	                      (S-NSSAI, DNN, SMF selection, Nsmf_PDUSession_CreateSMContext)
//	existing session,     TS 23.502 4.3.3.2 step 1a,      forwardToSession, onSMContextUpdated
//	modification or none  4.3.4.2 step 1a (UpdateSMContext with the N1 part)
//
// What the AMF cannot forward goes back to the UE in DL NAS Transport with
// a 5GMM cause (TS 24.501 5.4.5.2.5, sendBack); a 5GSM rejection by the SMF
// goes to the UE as the SMF wrote it.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
)

// 5GMM causes of TS 24.501 9.11.3.2 for payloads not forwarded.
const (
	causeDNNNotInSlice = nasMessage.Cause5GMMDNNNotSupportedOrNotSubscribedInTheSlice // #91
)

// n1SM is one 5GSM message of UL NAS Transport with its routing information.
type n1SM struct {
	id          uint8
	requestType uint8 // 0: IE absent
	snssai      *models.Snssai
	dnn         string
	msg         []byte
}

// onN1SM routes a 5GSM message by its request type (TS 24.501 5.4.5.2.2).
func (n *NF) onN1SM(ue *ueContext, ul *nasMessage.ULNASTransport) (State, error) {
	if ul.PduSessionID2Value == nil {
		// TS 24.501 8.2.10.2: the UE includes the PDU session ID with N1 SM
		// information; without it nothing can be routed or sent back
		// (7.6.2: conditional IE error, 5GMM Status #100).
		return ue.state, statusError(nasx.CauseConditionalIEError, errors.New("UL NAS Transport with N1 SM information but no PDU session ID"))
	}
	m := readN1SM(ul)
	if m.id < 1 || m.id > 15 {
		// TS 24.007 11.2.3.1b: 0 is "no PDU session identity assigned", 16-255 reserved.
		return ue.state, n.sendBack(m, nasx.CausePayloadNotForwarded, fmt.Errorf("PDU session ID %d is not assignable", m.id))
	}
	switch m.requestType {
	case nasMessage.ULNASTransportRequestTypeInitialRequest:
		return n.establish(ue, m)
	case nasMessage.ULNASTransportRequestTypeInitialEmergencyRequest, nasMessage.ULNASTransportRequestTypeExistingEmergencyPduSession:
		// Emergency services are not offered (TS 23.501 5.16.4: no SMF is
		// configured for them): SMF selection fails.
		return ue.state, n.sendBack(m, nasx.CausePayloadNotForwarded, errors.New("emergency PDU sessions are not offered"))
	}
	return n.forwardToSession(ue, m)
}

// readN1SM reads the IEs of 8.2.10 that route a 5GSM message. An optional
// IE that does not decode is treated as absent (TS 24.501 7.7.2).
func readN1SM(ul *nasMessage.ULNASTransport) n1SM {
	m := n1SM{id: ul.GetPduSessionID2Value(), msg: ul.GetPayloadContainerContents()}
	if ul.RequestType != nil {
		m.requestType = ul.RequestType.GetRequestTypeValue()
	}
	if ul.SNSSAI != nil {
		l := int(ul.SNSSAI.GetLen())
		if l <= len(ul.SNSSAI.Octet) {
			if list, err := nasx.NSSAIModels(append([]byte{byte(l)}, ul.SNSSAI.Octet[:l]...)); err == nil && len(list) == 1 {
				m.snssai = &list[0]
			}
		}
	}
	if ul.DNN != nil {
		m.dnn = ul.DNN.GetDNN()
	}
	return m
}

// sendBack is the verdict on a 5GSM message the AMF does not forward (TS
// 24.501 5.4.5.2.5): the message goes back to the UE in DL NAS Transport
// with its PDU session ID and the 5GMM cause, so that the UE stops waiting
// for its 5GSM timer. The causes used: #90 (no SMF selectable, no routing
// context, the SMF failing without a 5GSM answer) and #91 (DNN not
// subscribed in the slice). #28 "restricted service area" needs service
// area restrictions and #22 with back-off S-NSSAI/DNN congestion control,
// neither of which this AMF applies, so neither is sent.
func (n *NF) sendBack(m n1SM, cause uint8, err error) error {
	n.metrics.notForwarded.WithLabelValues(payloadName(nasx.PayloadN1SMInformation)).Inc()
	back := &nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: m.msg, PDUSessionID: m.id, Cause: cause}
	return &gmmError{kind: replyNotForwarded, cause: cause, back: back, err: err}
}

// establish: TS 23.502 4.3.2.2.1 steps 2-3. The S-NSSAI is checked here;
// the DNN needs the UE's SMF selection subscription data and the SMF the
// NRF, so both, and CreateSMContext, run off the UE's key (smCall).
func (n *NF) establish(ue *ueContext, m n1SM) (State, error) {
	snssai, err := n.sessionSlice(ue, m)
	if err != nil {
		return ue.state, err
	}
	if old := ue.pdu.get(m.id); old != nil {
		// TS 23.502 4.3.2.2.1 step 3 (and TS 24.501 6.4.1.2): an initial
		// request for a PDU session ID in use replaces that session; its
		// SM context is released first.
		n.releaseSMContext(ue.supi, old, models.SmfPduSessionSmContextReleaseData{
			Cause: models.SmfPduSessionCause_REL_DUE_TO_DUPLICATE_SESSION_ID})
		ue.pdu.remove(m.id)
	}
	s := &PDUSession{ID: m.id, SNSSAI: snssai, DNN: m.dnn, StatusTag: newStatusTag()}
	ue.pdu.put(s)
	n.claimProcedure(ue, sessionKey(m.id), kindPDUEstablishment)
	data := n.createData(ue, s)
	sess, supi, plmn, known, local := n.opts.Sessions, ue.supi, n.env.PLMN(), ue.pdu.selection, n.localDNN()
	var picked struct {
		sel      *models.SmfSelectionSubscriptionData
		dnn, smf string
	}
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		picked.sel = known
		if picked.sel == nil {
			if sel, err := sess.SMFSelectionData(ctx, supi, plmn); err == nil {
				picked.sel = &sel
			} else {
				n.log.Info("SMF selection subscription data unavailable; DNN not checked", "supi", supi, "err", err)
			}
		}
		var err error
		if picked.dnn, err = pickDNN(picked.sel, snssai, m.dnn, local); err != nil {
			return SMAnswer{}, err
		}
		if picked.smf, err = sess.SelectSMF(ctx, snssai, picked.dnn); err != nil {
			return SMAnswer{}, err
		}
		data.Dnn = picked.dnn
		return sess.CreateSMContext(ctx, picked.smf, data, m.msg)
	}, func(ue *ueContext, a SMAnswer, err error) {
		if ue.pdu.get(m.id) == s {
			s.DNN, s.SMFURI = picked.dnn, picked.smf
			if picked.sel != nil {
				ue.pdu.selection = picked.sel
			}
		}
		n.onSMContextCreated(ue, s, m, a, err)
	}, func(a SMAnswer, err error) {
		if err == nil {
			n.releaseSMContext(supi, &PDUSession{ID: m.id, ContextURI: a.ContextURI}, models.SmfPduSessionSmContextReleaseData{})
		}
	})
	return ue.state, nil
}

// sessionSlice is the S-NSSAI of a new session: the UE's, which must be in
// its allowed NSSAI, or the default (TS 23.502 4.3.2.2.1 step 2: the AMF
// picks one; here the first of the allowed NSSAI, which lists the
// subscribed defaults first when the UE requested none).
func (n *NF) sessionSlice(ue *ueContext, m n1SM) (models.Snssai, error) {
	if m.snssai != nil {
		if !containsSNSSAI(ue.allowed, *m.snssai) {
			// No SMF may be selected for a slice the UE is not allowed
			// (TS 23.501 5.15.5.3): selection fails.
			return models.Snssai{}, n.sendBack(m, nasx.CausePayloadNotForwarded,
				fmt.Errorf("S-NSSAI %s is not in the allowed NSSAI", snssaiString(*m.snssai)))
		}
		return *m.snssai, nil
	}
	if len(ue.allowed) == 0 {
		return models.Snssai{}, n.sendBack(m, nasx.CausePayloadNotForwarded, errors.New("no allowed S-NSSAI"))
	}
	return ue.allowed[0], nil
}

// localDNN is the DNN the AMF picks when neither the UE nor its
// subscription names one: the first DNN of the configuration (TS 23.502
// 4.3.2.2.1 step 2, "locally configured DNN").
func (n *NF) localDNN() string {
	if len(n.cfg.DNNs) > 0 {
		return n.cfg.DNNs[0]
	}
	return ""
}

// pickDNN checks the UE's DNN against its subscription, or picks the
// default DNN of the S-NSSAI (TS 23.502 4.3.2.2.1 step 2). A DNN the
// subscription does not hold for the S-NSSAI is #91 (TS 24.501
// 5.4.5.2.5). Without subscription data the DNN goes to the SMF unchecked:
// the SMF checks it against the session management subscription itself
// (step 4) and rejects with its 5GSM cause.
func pickDNN(sel *models.SmfSelectionSubscriptionData, snssai models.Snssai, dnn, local string) (string, error) {
	if sel == nil {
		if dnn == "" {
			dnn = local
		}
		if dnn == "" {
			return "", dnnError(snssai, "no DNN requested, none subscribed or configured")
		}
		return dnn, nil
	}
	infos, ok := sliceInfos(sel, snssai)
	if !ok {
		return "", dnnError(snssai, "no DNN subscribed in the slice")
	}
	if dnn == "" {
		if d := defaultDNN(infos); d != "" {
			return d, nil
		}
		if local != "" && subscribed(infos, local) {
			return local, nil
		}
		return "", dnnError(snssai, "no DNN requested and no default subscribed")
	}
	if !subscribed(infos, dnn) {
		return "", dnnError(snssai, "DNN "+dnn+" not subscribed")
	}
	return dnn, nil
}

func dnnError(snssai models.Snssai, why string) error {
	return &dnnRefusal{fmt.Errorf("S-NSSAI %s: %s", snssaiString(snssai), why)}
}

// dnnRefusal marks pickDNN's verdict: #91 for the UE.
type dnnRefusal struct{ error }

func (d *dnnRefusal) Unwrap() error { return d.error }

// sliceInfos finds the DNNs of snssai in the subscription. The map key is
// the S-NSSAI as a string (TS 29.503 6.1.6.2.10); stores write it as the
// hex SST followed by SD ("01010203", free5GC's) or as "SST-SD".
func sliceInfos(sel *models.SmfSelectionSubscriptionData, s models.Snssai) ([]models.DnnInfo, bool) {
	for k, v := range sel.SubscribedSnssaiInfos {
		if key, ok := parseSnssaiKey(k); ok && containsSNSSAI([]models.Snssai{key}, s) {
			return v.DnnInfos, true
		}
	}
	return nil, false
}

func parseSnssaiKey(k string) (models.Snssai, bool) {
	k = strings.TrimSpace(k)
	if strings.HasPrefix(k, "{") {
		var s models.Snssai
		return s, json.Unmarshal([]byte(k), &s) == nil
	}
	if sst, sd, ok := strings.Cut(k, "-"); ok {
		v, err := strconv.Atoi(sst)
		return models.Snssai{Sst: int32(v), Sd: strings.ToLower(sd)}, err == nil
	}
	b, err := hex.DecodeString(k)
	switch {
	case err != nil || (len(b) != 1 && len(b) != 4):
		return models.Snssai{}, false
	case len(b) == 1:
		return models.Snssai{Sst: int32(b[0])}, true
	}
	return models.Snssai{Sst: int32(b[0]), Sd: hex.EncodeToString(b[1:])}, true
}

func dnnOf(d models.DnnInfo) string {
	s, _ := d.Dnn.(string)
	return s
}

func defaultDNN(infos []models.DnnInfo) string {
	for _, d := range infos {
		if d.DefaultDnnIndicator && dnnOf(d) != "*" {
			return dnnOf(d)
		}
	}
	return ""
}

// subscribed: DNN labels compare case-insensitively (TS 23.003 9.1); "*"
// is the wildcard DNN (TS 23.501 5.9.9... TS 29.503 DnnInfo).
func subscribed(infos []models.DnnInfo, dnn string) bool {
	for _, d := range infos {
		if !d.DnnBarred && (dnnOf(d) == "*" || strings.EqualFold(dnnOf(d), dnn)) {
			return true
		}
	}
	return false
}

// createData is the SmContextCreateData of TS 29.502 6.1.6.2.2 for s
// (the DNN is set once picked).
func (n *NF) createData(ue *ueContext, s *PDUSession) models.SmfPduSessionSmContextCreateData {
	return models.SmfPduSessionSmContextCreateData{
		Supi: ue.supi, Pei: ue.pei, PduSessionId: int32(s.ID), SNssai: &s.SNSSAI,
		ServingNfId: n.id, Guami: ptr(n.guami.ToModel()), ServingNetwork: ptr(n.guami.PLMN.ToModelNid()),
		RequestType: models.RequestType_INITIAL_REQUEST, AnType: models.AccessType__3_GPP_ACCESS, RatType: models.RatType_NR,
		UeLocation:         userLocation(ue),
		SmContextStatusUri: n.callbackURI(smContextStatusPath(ue.supi, s.ID, s.StatusTag)),
	}
}

func userLocation(ue *ueContext) *models.UserLocation {
	return &models.UserLocation{NrLocation: &models.NrLocation{Tai: ptr(ue.tai.ToModel())}}
}

// onSMContextCreated: TS 23.502 4.3.2.2.1 step 3. The SMF's answer comes
// back on the UE's key; the session it created is kept unless the UE
// asked again meanwhile (then the answer is stale and its context released).
func (n *NF) onSMContextCreated(ue *ueContext, s *PDUSession, m n1SM, a SMAnswer, err error) {
	if ue.pdu.get(s.ID) != s {
		if err == nil {
			n.releaseSMContext(ue.supi, &PDUSession{ID: s.ID, ContextURI: a.ContextURI}, models.SmfPduSessionSmContextReleaseData{})
		}
		n.sendBackEarlyN1(ue, s)
		return
	}
	if err != nil {
		ue.pdu.remove(s.ID)
		n.smFailed(ue, m, a, err)
		n.sendBackEarlyN1(ue, s)
		return
	}
	s.ContextURI = a.ContextURI
	n.persistUE(ue) // the session survives an AMF restart from now on
	n.log.Info("SM context created", "supi", ue.supi, "pduSessionId", s.ID, "snssai", snssaiString(s.SNSSAI), "dnn", s.DNN, "smf", s.SMFURI)
	if err := n.deliverSM(ue, s, a.N1, a.N2, a.N2Type); err != nil {
		n.log.Warn("SM answer not delivered", "supi", ue.supi, "pduSessionId", s.ID, "err", err)
	}
	early := s.early
	s.early = nil
	for _, o := range early {
		n.answerToSMF(ue, o)
	}
	n.forwardEarlyN1(ue, s)
}

// maxEarlyN1 bounds the 5GSM messages kept for a session in creation; a
// UE has at most one procedure of its own open per session (TS 24.501
// 6.4), so more is a misbehaving UE and goes back at once.
const maxEarlyN1 = 4

// forwardEarlyN1 sends the UE's 5GSM messages that came during the
// creation on to the SMF now that the SM context is known.
func (n *NF) forwardEarlyN1(ue *ueContext, s *PDUSession) {
	early := s.earlyN1
	s.earlyN1 = nil
	for _, m := range early {
		if _, err := n.forwardToSession(ue, m); err != nil {
			n.reply(ue, EvULNASTransport, err)
		}
	}
}

// sendBackEarlyN1: the creation failed or was replaced, so the messages
// that waited for it have no routing context (TS 24.501 5.4.5.2.5: #90).
func (n *NF) sendBackEarlyN1(ue *ueContext, s *PDUSession) {
	early := s.earlyN1
	s.earlyN1 = nil
	for _, m := range early {
		n.reply(ue, EvULNASTransport, n.sendBack(m, nasx.CausePayloadNotForwarded,
			fmt.Errorf("no SM context was created for PDU session %d", m.id)))
	}
}

// smFailed answers the UE for a 5GSM message that went nowhere: the SMF's
// own 5GSM answer (e.g. PDU Session Establishment Reject with its 5GSM
// cause) when it sent one, else the message back with #91 (a DNN refused
// by the subscription) or #90 (no SMF, or it failed without a 5GSM answer;
// TS 24.501 5.4.5.2.5).
func (n *NF) smFailed(ue *ueContext, m n1SM, a SMAnswer, err error) {
	n.releaseProcedure(ue, sessionKey(m.id), ratelimit.ResultReject)
	var dr *dnnRefusal
	switch {
	case a.N1 != nil:
		n.log.Info("SMF refused the 5GSM message", "supi", ue.supi, "pduSessionId", m.id, "err", err)
		if derr := n.deliverN1(ue, m.id, a.N1); derr != nil {
			n.log.Warn("5GSM answer not delivered", "supi", ue.supi, "pduSessionId", m.id, "err", derr)
		}
	case errors.As(err, &dr):
		n.reply(ue, EvULNASTransport, n.sendBack(m, causeDNNNotInSlice, err))
	default:
		n.reply(ue, EvULNASTransport, n.sendBack(m, nasx.CausePayloadNotForwarded, err))
	}
}

// forwardToSession: a 5GSM message for an existing session (modification,
// release, or the UE's answers to the network's commands) goes to the SMF
// serving it in UpdateSMContext (TS 23.502 4.3.3.2 step 1a, 4.3.4.2 step
// 1a; TS 29.502 5.2.2.3.2). Without a routing context for the ID the AMF
// cannot forward (TS 24.501 5.4.5.2.5).
func (n *NF) forwardToSession(ue *ueContext, m n1SM) (State, error) {
	s := ue.pdu.get(m.id)
	if s != nil && !s.created() && len(s.earlyN1) < maxEarlyN1 {
		// The creation is still running (TS 23.502 4.3.2.2.1 step 3): the
		// routing context exists once the SMF's 201 is read.
		s.earlyN1 = append(s.earlyN1, m)
		return ue.state, nil
	}
	if s == nil || !s.created() {
		return ue.state, n.sendBack(m, nasx.CausePayloadNotForwarded, fmt.Errorf("no PDU session routing context for PDU session %d", m.id))
	}
	if kind, ok := sessionKindOf(m.msg); ok {
		n.claimProcedure(ue, sessionKey(m.id), kind)
	}
	sess, uri := n.opts.Sessions, s.ContextURI
	data := models.SmfPduSessionSmContextUpdateData{UeLocation: userLocation(ue)}
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		return sess.UpdateSMContext(ctx, uri, data, m.msg, nil)
	}, func(ue *ueContext, a SMAnswer, err error) {
		n.onSMContextUpdated(ue, m, uri, a, err)
	}, nil)
	return ue.state, nil
}

// onSMContextUpdated delivers what the SMF answered to a forwarded 5GSM
// message: e.g. PDU Session Release Command with the N2 resource release
// (TS 23.502 4.3.4.2 step 3), or a modification command. uri is the SM
// context the message went to.
func (n *NF) onSMContextUpdated(ue *ueContext, m n1SM, uri string, a SMAnswer, err error) {
	s := ue.pdu.get(m.id)
	if s != nil && s.ContextURI != uri {
		// The UE has replaced the session meanwhile (a new establishment
		// with the ID, TS 24.501 6.4.1.2; e.g. right after its Release
		// Complete): the answer concerns a context it no longer has, and
		// the procedure now open on the ID is the new session's.
		n.log.Info("SMF answer for a replaced SM context dropped", "supi", ue.supi, "pduSessionId", m.id, "err", err)
		return
	}
	n.sessionUplinkDone(ue, m.id, m.msg, err)
	if err != nil {
		if isContextGone(err) {
			ue.pdu.remove(m.id) // the SMF no longer has it (TS 29.502 5.2.2.3.1: 404 CONTEXT_NOT_FOUND)
			n.persistUE(ue)
		}
		n.smFailed(ue, m, a, err)
		return
	}
	if s == nil {
		return
	}
	if err := n.deliverSM(ue, s, a.N1, a.N2, a.N2Type); err != nil {
		n.log.Warn("SM answer not delivered", "supi", ue.supi, "pduSessionId", m.id, "err", err)
	}
}
