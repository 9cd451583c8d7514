package nasx

import "testing"

// FuzzParseGSMAtUE: whatever 5GSM octets reach a UE, reading them returns
// a message or an error, never a panic.
func FuzzParseGSMAtUE(f *testing.F) {
	f.Add(ueMust(BuildGSMEstablishmentRequest(GSMEstablishmentRequest{SessionID: 1, PTI: 1, Type: 1, SSCMode: 1})))
	f.Add(ueMust(BuildGSMReleaseComplete(1, 1)))
	f.Add(ueMust(BuildPDUSessionModificationCommand(ModificationCommand{PDUSessionID: 1, AMBR: &SessionAMBR{UplinkBps: 1e6, DownlinkBps: 2e6},
		Flows: []QoSFlow{{QFI: 2, Operation: FlowOpModify, FiveQI: 1, GFBRUp: 1e6, MFBRDown: 2e6}, {QFI: 3, Operation: FlowOpDelete}}})))
	f.Add([]byte{0x2E, 1, 1, 0xC2, 0x11, 0, 6, 1, 0, 3, 0x31, 0x31, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseGSMAtUE(b)
		_, _ = readRuleOperations(b)
	})
}
