package amf

// N1 senders: protect with the UE's context and carry in NGAP.

import (
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// sendNAS protects plain (with the next downlink NAS COUNT) and sends it in
// Downlink NAS Transport.
func (n *NF) sendNAS(ue *ueContext, plain []byte, smc bool) error {
	pdu, err := ue.sec.protect(plain, smc)
	if err != nil {
		return err
	}
	b, err := ngapx.BuildDownlinkNASTransport(ue.amfID, ue.ranID, pdu)
	if err != nil {
		return err
	}
	return n.sendToUE(ue, b)
}

// sendGuarded sends a message guarded by timer k.
func (n *NF) sendGuarded(ue *ueContext, plain []byte, smc bool, k timerKind) error {
	if err := n.sendNAS(ue, plain, smc); err != nil {
		return err
	}
	n.startTimer(ue, k, plain, smc)
	return nil
}

// sendPlainOrProtected sends an unguarded message; failures are only logged
// since it is itself the answer to a failure. nil is a message that could
// not be built (built, ngap_reply.go): nothing is sent.
func (n *NF) sendPlainOrProtected(ue *ueContext, plain []byte) {
	if plain == nil {
		return
	}
	if err := n.sendNAS(ue, plain, false); err != nil {
		n.log.Warn("downlink NAS", "amfUeNgapId", ue.amfID, "err", err)
	}
}
