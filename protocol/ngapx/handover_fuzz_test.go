package ngapx

import "testing"

// FuzzHandoverNGAP: whatever arrives, the readers of the handover messages
// (both sides) never panic, and what the AMF builds back from what it read
// (the relayed RAN status, the answers naming the IDs it read) never
// panics either.
func FuzzHandoverNGAP(f *testing.F) {
	for _, b := range hoWireMessages(f, []byte{0}) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pdu, err := Decode(b)
		if err != nil {
			return
		}
		if r, err := ParsePathSwitchRequest(pdu); err == nil {
			_, _ = BuildPathSwitchRequestFailure(PathSwitchRequestFailure{AMFUEID: r.SourceAMFUEID, RANUEID: r.RANUEID, Released: r.ToSwitch})
		}
		_, _ = ParsePathSwitchRequestAcknowledge(pdu)
		_, _ = ParsePathSwitchRequestFailure(pdu)
		if r, err := ParseHandoverRequired(pdu); err == nil {
			_, _ = BuildHandoverPreparationFailure(HandoverPreparationFailure{UEIDs: r.UEIDs, Cause: r.Cause})
			_ = r.Target.GNB.String()
		}
		_, _ = ParseHandoverRequest(pdu)
		_, _ = ParseHandoverRequestAcknowledge(pdu)
		_, _ = ParseHandoverCommand(pdu)
		_, _ = ParseHandoverPreparationFailure(pdu)
		_, _, _ = ParseHandoverFailure(pdu)
		_, _, _ = ParseHandoverNotify(pdu)
		_, _, _ = ParseHandoverCancel(pdu)
		_, _ = ParseHandoverCancelAcknowledge(pdu)
		if up, err := ParseUplinkRANStatusTransfer(pdu); err == nil {
			_, _ = BuildDownlinkRANStatusTransfer(up) // TS 38.413 8.4.6.2: relayed as read
			_ = DRBCounts(up.Container)
		}
		_, _ = ParseDownlinkRANStatusTransfer(pdu)
	})
}
