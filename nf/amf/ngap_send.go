package amf

// N2 senders: the only code that writes to an association.

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// sendNonUE writes non-UE-associated signalling on stream 0 (TS 38.412 7);
// nil is a message that could not be built (built): nothing is written.
func (n *NF) sendNonUE(g *gnb, b []byte) {
	if b == nil {
		return
	}
	if err := g.conn.WriteMsg(b, 0); err != nil {
		n.log.Warn("N2 write", "gnb", g.id, "err", err)
	}
}

// sendToUE writes UE-associated signalling on the UE's stream.
func (n *NF) sendToUE(ue *ueContext, b []byte) error {
	g := n.gnb(ue.gnbID)
	if g == nil {
		return errNoConnection
	}
	n.trace.Sent(ue.amfID, ue.ranID, b)
	return g.conn.WriteMsg(b, g.stream(ue.amfID))
}

// sendErrorIndication reports a protocol error to the gNB (TS 38.413 8.7.5,
// 10): the association stays up.
func (n *NF) sendErrorIndication(g *gnb, amfUEID, ranUEID int64, cause ngapType.Cause) {
	n.metrics.ngapErrors.WithLabelValues(errorCauseName(cause)).Inc()
	b := n.built("ErrorIndication")(ngapx.BuildErrorIndication(amfUEID, ranUEID, cause))
	if b == nil {
		return
	}
	stream := uint16(0)
	if amfUEID >= 0 {
		stream = g.stream(amfUEID)
	}
	if err := g.conn.WriteMsg(b, stream); err != nil {
		n.log.Warn("N2 write", "gnb", g.id, "err", err)
	}
}

func (n *NF) sendReleaseCommand(g *gnb, amfUEID, ranUEID int64, cause ngapType.Cause) {
	b := n.built("UEContextReleaseCommand")(ngapx.BuildUEContextReleaseCommand(amfUEID, ranUEID, cause))
	if b == nil {
		return
	}
	if err := g.conn.WriteMsg(b, g.stream(amfUEID)); err != nil {
		n.log.Warn("N2 write", "gnb", g.id, "err", err)
	}
}

// errorCauseName labels the Error Indications the AMF sends, by cause.
func errorCauseName(c ngapType.Cause) string {
	switch {
	case c.Protocol != nil:
		return protocolCauseName(c.Protocol.Value)
	case c.RadioNetwork != nil && c.RadioNetwork.Value == ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID:
		return "unknown-local-ue-ngap-id"
	case c.RadioNetwork != nil && c.RadioNetwork.Value == ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID:
		return "inconsistent-remote-ue-ngap-id"
	}
	return "other"
}

func protocolCauseName(c aper.Enumerated) string {
	switch c {
	case ngapType.CauseProtocolPresentTransferSyntaxError:
		return "transfer-syntax-error"
	case ngapType.CauseProtocolPresentAbstractSyntaxErrorReject:
		return "abstract-syntax-error-reject"
	case ngapType.CauseProtocolPresentAbstractSyntaxErrorIgnoreAndNotify:
		return "abstract-syntax-error-ignore-and-notify"
	case ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage:
		return "abstract-syntax-error-falsely-constructed"
	case ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState:
		return "message-not-compatible-with-receiver-state"
	}
	return "protocol"
}
