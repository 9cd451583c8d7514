package amf

// UE-initiated NAS transport (TS 24.501 5.4.5.2): UL NAS Transport carries
// a payload the AMF forwards by its payload container type, a 5GSM message
// to the SMF above all. This AMF has no SMF yet (sessions come with it), so
// it forwards nothing; what it answers is what the clause asks of an AMF
// that cannot forward, so that a UE stops retrying instead of waiting for
// T3580 and sending the request again.

import (
	"errors"
	"strconv"

	"github.com/free5gc/nas/nasMessage"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// onULNASTransport handles UL NAS Transport (TS 24.501 8.2.10) from a
// registered UE. Its answer is decided here and sent by the reply policy.
func (n *NF) onULNASTransport(ue *ueContext, in *input) (State, error) {
	ul := in.msg.m.ULNASTransport
	typ := ul.GetPayloadContainerType()
	n.metrics.notForwarded.WithLabelValues(payloadName(typ)).Inc()
	if typ != nasx.PayloadN1SMInformation {
		// The AMF serves no SMSF, LMF, UDM or PCF payloads yet; the echo of
		// 5.4.5.2.5 is defined for N1 SM information, so the rest is dropped.
		n.log.Info("UL NAS Transport payload dropped: no peer for its type", "amfUeNgapId", ue.amfID, "payload", payloadName(typ))
		return ue.state, nil
	}
	return ue.state, n1SMNotForwarded(ul)
}

// n1SMNotForwarded is the verdict on a 5GSM message when no SMF can be
// selected (TS 24.501 5.4.5.2.5): the AMF sends the 5GSM message back in DL
// NAS Transport with payload container type "N1 SM information", the PDU
// session ID of the UL NAS Transport and 5GMM cause #90 "payload was not
// forwarded". That holds for every request type here: for "initial
// request" (and emergency, MA PDU) the SMF selection fails; for "existing
// PDU session", "modification request" or none, the AMF has no PDU session
// routing context and the UDM names no SMF for the session. #91 "DNN not
// supported or not subscribed in the slice" needs the SMF selection
// subscription data and #28 "restricted service area" service area
// restrictions, neither of which this AMF holds, so neither applies.
func n1SMNotForwarded(ul *nasMessage.ULNASTransport) error {
	if ul.PduSessionID2Value == nil {
		// TS 24.501 8.2.10.2: the UE includes the PDU session ID with N1 SM
		// information; without it nothing can be routed or sent back
		// (7.6.2: conditional IE error, 5GMM Status #100).
		return statusError(nasx.CauseConditionalIEError, errors.New("UL NAS Transport with N1 SM information but no PDU session ID"))
	}
	back := &nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: ul.GetPayloadContainerContents(),
		PDUSessionID: ul.GetPduSessionID2Value(), Cause: nasx.CausePayloadNotForwarded}
	return &gmmError{kind: replyNotForwarded, cause: nasx.CausePayloadNotForwarded, back: back,
		err: errors.New("no SMF to forward the 5GSM message to")}
}

// payloadName names a payload container type (TS 24.501 9.11.3.40) for
// logs and metrics.
func payloadName(t uint8) string {
	switch t {
	case nasMessage.PayloadContainerTypeN1SMInfo:
		return "n1-sm"
	case nasMessage.PayloadContainerTypeSMS:
		return "sms"
	case nasMessage.PayloadContainerTypeLPP:
		return "lpp"
	case nasMessage.PayloadContainerTypeSOR:
		return "sor"
	case nasMessage.PayloadContainerTypeUEPolicy:
		return "ue-policy"
	case nasMessage.PayloadContainerTypeUEParameterUpdate:
		return "ue-parameters-update"
	case nasMessage.PayloadContainerTypeMultiplePayload:
		return "multiple"
	}
	return "type-" + strconv.Itoa(int(t))
}
