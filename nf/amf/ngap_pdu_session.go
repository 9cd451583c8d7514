package amf

// NGAP PDU Session Resource procedures of the AMF (TS 38.413 8.2): the
// SMF's N1 and N2 SM information to the UE and gNB (TS 23.502 4.3.2.2.1
// step 12, 4.3.3.2 step 4, 4.3.4.2 step 4), and the gNB's answers back to
// the SMF in UpdateSMContext (4.3.2.2.1 step 14, 4.3.3.2 step 6, 4.3.4.2
// step 7).

import (
	"context"
	"errors"
	"fmt"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// errNoSecurity: a 5GSM message goes to the UE only integrity protected
// and ciphered (TS 24.501 4.4.4.2), so never before security mode.
var errNoSecurity = errors.New("UE has no NAS security context")

// dlN1 wraps a 5GSM message in DL NAS Transport (TS 24.501 8.2.11,
// payload "N1 SM information" with the PDU session ID).
func dlN1(id uint8, n1 []byte) ([]byte, error) {
	return nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: n1, PDUSessionID: id})
}

// protectN1 is dlN1 under the UE's security context, for a NAS-PDU inside
// a PDU Session Resource request.
func (n *NF) protectN1(ue *ueContext, id uint8, n1 []byte) ([]byte, error) {
	if ue.sec == nil {
		return nil, errNoSecurity
	}
	plain, err := dlN1(id, n1)
	if err != nil {
		return nil, err
	}
	return ue.sec.protect(plain, false)
}

// deliverN1 sends a 5GSM message alone, in Downlink NAS Transport.
func (n *NF) deliverN1(ue *ueContext, id uint8, n1 []byte) error {
	if ue.sec == nil {
		return errNoSecurity
	}
	plain, err := dlN1(id, n1)
	if err != nil {
		return err
	}
	return n.sendNAS(ue, plain, false)
}

// errUnknownN2Type: N2 SM information the AMF cannot send to the gNB in
// any of the requests of TS 38.413 8.2 (TS 29.518 6.1.6.3.3 lists what
// N1N2MessageTransfer may carry towards the RAN).
var errUnknownN2Type = errors.New("N2 SM information type not for a PDU Session Resource request")

// deliverSM sends the SMF's N1 and N2 SM information of session s: N2 in
// the PDU Session Resource request its type names, with the N1 inside as
// the NAS-PDU; N1 alone in Downlink NAS Transport.
func (n *NF) deliverSM(ue *ueContext, s *PDUSession, n1, n2 []byte, n2Type models.N2SmInfoType) error {
	n.sessionDownlink(ue, s.ID, n1)
	if n2 == nil {
		if n1 == nil {
			return nil
		}
		return n.deliverN1(ue, s.ID, n1)
	}
	var nasPDU []byte
	if n1 != nil {
		var err error
		if nasPDU, err = n.protectN1(ue, s.ID, n1); err != nil {
			return err
		}
	}
	b, err := sessionRequest(ue, s, nasPDU, n2, n2Type)
	if err != nil {
		return err
	}
	return n.sendToUE(ue, b)
}

// sessionRequest builds the PDU Session Resource request for n2Type.
func sessionRequest(ue *ueContext, s *PDUSession, nasPDU, n2 []byte, n2Type models.N2SmInfoType) ([]byte, error) {
	r := ngapx.SessionResourceRequest{AMFUEID: ue.amfID, RANUEID: ue.ranID,
		Sessions: []ngapx.SessionResource{{ID: int64(s.ID), NASPDU: nasPDU, SNSSAI: s.SNSSAI, Transfer: n2}}}
	switch n2Type {
	case models.N2SmInfoType_PDU_RES_SETUP_REQ:
		return ngapx.BuildPDUSessionResourceSetupRequest(r)
	case models.N2SmInfoType_PDU_RES_MOD_REQ:
		return ngapx.BuildPDUSessionResourceModifyRequest(r)
	case models.N2SmInfoType_PDU_RES_REL_CMD:
		// TS 38.413 9.2.1.3: the NAS-PDU of a release is message-level.
		r.NASPDU, r.Sessions[0].NASPDU = nasPDU, nil
		return ngapx.BuildPDUSessionResourceReleaseCommand(r)
	}
	return nil, fmt.Errorf("%w: %q", errUnknownN2Type, n2Type)
}

// onSessionResourceAnswer: the gNB's PDU Session Resource Setup, Modify or
// Release Response. Each session's transfer goes to its SMF in
// UpdateSMContext with the matching n2SmInfoType (TS 29.502 5.2.2.3.2,
// 5.2.2.3.3, 5.2.2.3.4).
func (n *NF) onSessionResourceAnswer(ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	outcomes, err := ngapx.ParsePDUSessionResourceAnswer(pdu)
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	for _, o := range outcomes {
		n.answerToSMF(ue, o)
	}
	return nil
}

// answerToSMF forwards one session's outcome; an outcome for a session the
// AMF does not know is logged (the SMF released it meanwhile).
func (n *NF) answerToSMF(ue *ueContext, o ngapx.SessionOutcome) {
	if o.ID < 1 || o.ID > 15 {
		n.log.Info("PDU Session Resource outcome for an unassignable PDU session ID", "amfUeNgapId", ue.amfID, "pduSessionId", o.ID)
		return
	}
	id := uint8(o.ID)
	s := ue.pdu.get(id)
	switch {
	case s == nil:
		n.log.Info("PDU Session Resource outcome for no PDU session", "amfUeNgapId", ue.amfID, "pduSessionId", id, "type", o.Type)
		return
	case !s.created():
		s.early = append(s.early, o)
		return
	}
	sess, uri := n.opts.Sessions, s.ContextURI
	data := models.SmfPduSessionSmContextUpdateData{N2SmInfoType: o.Type, UeLocation: userLocation(ue)}
	if o.Type == models.N2SmInfoType_PDU_RES_REL_RSP {
		// TS 29.502 5.2.2.3.4: the user plane of the session is released.
		data.UpCnxState = models.UpCnxState_DEACTIVATED
	}
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		return sess.UpdateSMContext(ctx, uri, data, nil, o.Transfer)
	}, func(ue *ueContext, a SMAnswer, err error) {
		n.onN2Forwarded(ue, id, uri, o.Type, a, err)
	}, nil)
}

// onN2Forwarded: the SMF's answer to a forwarded N2 outcome. An SMF that
// no longer has the context (404) ends the routing context; whatever it
// sends on (a 5GSM message after a failed setup) is delivered. An answer
// about a context the UE has replaced meanwhile (uri no longer the
// session's) touches nothing.
func (n *NF) onN2Forwarded(ue *ueContext, id uint8, uri string, t models.N2SmInfoType, a SMAnswer, err error) {
	s := ue.pdu.get(id)
	if s != nil && s.ContextURI != uri {
		n.log.Info("SMF answer for a replaced SM context dropped", "supi", ue.supi, "pduSessionId", id, "type", t, "err", err)
		return
	}
	n.sessionN2Done(ue, id, t, err)
	if err != nil {
		n.log.Warn("N2 SM information not taken by the SMF", "supi", ue.supi, "pduSessionId", id, "type", t, "err", err)
		if isContextGone(err) {
			ue.pdu.remove(id)
		}
		if s == nil || a.N1 == nil {
			return
		}
	}
	if s == nil {
		return
	}
	if err := n.deliverSM(ue, s, a.N1, a.N2, a.N2Type); err != nil {
		n.log.Warn("SM answer not delivered", "supi", ue.supi, "pduSessionId", id, "err", err)
	}
}

// isContextGone: the SMF answered 404 for the SM context (TS 29.502
// 6.1.3.3.4.2: CONTEXT_NOT_FOUND).
func isContextGone(err error) bool { return sbi.StatusOf(err) == 404 }
