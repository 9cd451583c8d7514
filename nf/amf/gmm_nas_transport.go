package amf

// UE-initiated NAS transport (TS 24.501 5.4.5.2): UL NAS Transport carries
// a payload the AMF forwards by its payload container type: a 5GSM message
// goes to the SMF (gsm_transport.go); the AMF serves no other peer yet.

import (
	"strconv"

	"github.com/free5gc/nas/nasMessage"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// onULNASTransport handles UL NAS Transport (TS 24.501 8.2.10) from a
// registered UE. Its answer is decided here and sent by the reply policy.
func (n *NF) onULNASTransport(ue *ueContext, in *input) (State, error) {
	ul := in.msg.m.ULNASTransport
	typ := ul.GetPayloadContainerType()
	if typ != nasx.PayloadN1SMInformation {
		// The AMF serves no SMSF, LMF, UDM or PCF payloads yet; the echo of
		// 5.4.5.2.5 is defined for N1 SM information, so the rest is dropped.
		n.metrics.notForwarded.WithLabelValues(payloadName(typ)).Inc()
		n.log.Info("UL NAS Transport payload dropped: no peer for its type", "amfUeNgapId", ue.amfID, "payload", payloadName(typ))
		return ue.state, nil
	}
	return n.onN1SM(ue, ul)
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
