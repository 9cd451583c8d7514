package smf

import (
	"testing"

	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// A QoS flow the target gNB does not set up in a handover — listed failed
// in the N2 handover's acknowledge transfer, or missing from the Xn path
// switch's accepted flows — is removed once the UE is there (TS 23.502
// 4.9.1.3.3 step 11, 4.9.1.2.2): its PDRs and QER leave the UPF and the
// UE gets a Modification Command deleting its rule and flow description
// (N1 only: the gNB never had it).
func TestFlowsTheTargetRefusedAreRemoved(t *testing.T) {
	for _, kind := range []string{"n2", "xn"} {
		t.Run(kind, func(t *testing.T) {
			s := newTestSMF(t, sbi.NewTCP(), setup{})
			token := adminToken(t, s)
			ref := s.activeSession(t)
			if code, body := s.adminPolicy(t, token, gbrDecision("2 Mbps", "5 Mbps")); code != 204 {
				t.Fatalf("add: %d %s", code, body)
			}
			s.core.waitTransfer(t)
			s.modifyAnswered(t, ref, ngapx.ModifyResponse{QFIs: []uint8{2}})
			if n := len(s.n4.only(t).PDRs); n != 4 {
				t.Fatalf("%d PDRs before the handover, want 4", n)
			}
			if kind == "n2" {
				s.prepare(t, ref, true, ngapx.HandoverRequestAck{DL: targetTunnel, QFIs: []uint8{1}, FailedQFIs: []uint8{2}})
				s.complete(t, ref)
			} else {
				req := build(t)(ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: targetTunnel, QFIs: []uint8{1}}))
				if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ}, req); a.status != 200 {
					t.Fatalf("path switch: %d %s", a.status, a.json)
				}
			}
			s.assertDownlinkTo(t, targetTunnel)
			tr := s.core.waitTransfer(t)
			m := modificationAtUE(t, tr.n1)
			if tr.n2 != nil || len(m.QoSRules) != 1 || m.QoSRules[0].Identifier != 2 || m.QoSRules[0].Operation != nasType.OperationCodeDeleteExistingQoSRule ||
				len(m.QoSFlows) != 1 || m.QoSFlows[0].QFI != 2 || m.QoSFlows[0].OperationCode != nasType.OperationCodeDeleteExistingQoSFlowDescription {
				t.Fatalf("Modification Command %+v, N2 % x", m, tr.n2)
			}
			sess := s.n4.only(t)
			if len(sess.PDRs) != 2 || len(sess.QERs) != 2 || sess.PDRs[0].QERIDs[0] != 1 {
				t.Fatalf("UPF still has PDRs %+v QERs %+v", sess.PDRs, sess.QERs)
			}
			if v := s.flowViewCount(t, token); v != 1 {
				t.Fatalf("the session shows %d flows, want the default one", v)
			}
		})
	}
}

// flowViewCount is how many flows the admin API shows for the one session.
func (s *testSMF) flowViewCount(t *testing.T, token string) int {
	t.Helper()
	return len(s.sessionView(t, token).Flows)
}
