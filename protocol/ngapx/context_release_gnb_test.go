package ngapx_test

import (
	"reflect"
	"testing"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// TS 23.502 4.2.6 steps 1 and 5: the release messages name the sessions
// whose user plane goes with the UE context.
func TestContextReleaseNamesTheSessions(t *testing.T) {
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	req := decode(t)(ngapx.BuildUEContextReleaseRequestWithSessions(7, 3, cause, []uint8{1, 5}))
	var reqIDs []int64
	for _, ie := range req.InitiatingMessage.Value.UEContextReleaseRequest.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelReq; l != nil {
			for _, item := range l.List {
				reqIDs = append(reqIDs, item.PDUSessionID.Value)
			}
		}
	}
	cpl := decode(t)(ngapx.BuildRANContextReleaseComplete(7, 3, []uint8{1}))
	var cplIDs []int64
	for _, ie := range cpl.SuccessfulOutcome.Value.UEContextReleaseComplete.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelCpl; l != nil {
			for _, item := range l.List {
				cplIDs = append(cplIDs, item.PDUSessionID.Value)
			}
		}
	}
	if !reflect.DeepEqual(reqIDs, []int64{1, 5}) || !reflect.DeepEqual(cplIDs, []int64{1}) {
		t.Fatalf("request names %v, complete %v: want [1 5] and [1]", reqIDs, cplIDs)
	}
	s, err := ngapx.Summarize(req)
	if err != nil || s.AMFUEID != 7 || s.RANUEID != 3 || s.Cause == nil || s.Cause.RadioNetwork == nil {
		t.Fatalf("summary %+v (%v)", s, err)
	}
}
