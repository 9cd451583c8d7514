package ngapx

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

var (
	hoCell   = Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 2}, CellID: 0x4567}
	hoTarget = Target{GNB: GlobalGNBID{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, ID: 0x000102, Bits: 24},
		TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 2}}
	hoCaps    = SecurityCapabilities{NREncryption: [2]byte{0xE0}, NRIntegrity: [2]byte{0x60}}
	hoSec     = SecurityContext{NCC: 2, NH: bytes.Repeat([]byte{0xAB}, 32)}
	hoAllowed = []models.Snssai{{Sst: 1, Sd: "010203"}}
	hoCause   = CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverDesirableForRadioReason)
)

func hoSessions(kind string) []SessionTransfer {
	return []SessionTransfer{{ID: 1, Transfer: []byte(kind + "-1")}, {ID: 5, Transfer: []byte(kind + "-5")}}
}

func decodeOK(t *testing.T, b []byte, err error) *ngapType.NGAPPDU {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	pdu, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return pdu
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestPathSwitchRoundTrip(t *testing.T) {
	req := PathSwitchRequestMsg{RANUEID: 77, SourceAMFUEID: 9, Cell: hoCell, SecurityCaps: hoCaps,
		ToSwitch: hoSessions("psr"), Failed: []SessionTransfer{{ID: 3, Transfer: []byte{1}}}}
	b, err := BuildPathSwitchRequest(req)
	pdu := decodeOK(t, b, err)
	// The AMF routes it to the UE the source knew (Summary.AMFUEID).
	if s, _ := Summarize(pdu); s.AMFUEID != 9 || s.RANUEID != 77 || s.Procedure != ngapType.ProcedureCodePathSwitchRequest {
		t.Fatalf("summary %+v", s)
	}
	got, err := ParsePathSwitchRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "path switch request", got, req)

	ack := PathSwitchRequestAcknowledge{AMFUEID: 9, RANUEID: 77, SecurityCaps: &hoCaps, Security: hoSec,
		Switched: hoSessions("ack"), Released: []SessionTransfer{{ID: 3, Transfer: []byte{2}}}, Allowed: hoAllowed}
	b, err = BuildPathSwitchRequestAcknowledge(ack)
	gotAck, err := ParsePathSwitchRequestAcknowledge(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "path switch request acknowledge", gotAck, ack)

	fail := PathSwitchRequestFailure{AMFUEID: 9, RANUEID: 77, Released: hoSessions("fail")}
	b, err = BuildPathSwitchRequestFailure(fail)
	gotFail, err := ParsePathSwitchRequestFailure(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "path switch request failure", gotFail, fail)
}

func TestHandoverPreparationRoundTrip(t *testing.T) {
	rqd := HandoverRequired{UEIDs: UEIDs{4, 8}, Cause: hoCause, Target: hoTarget, DirectForwarding: true,
		Sessions: hoSessions("rqd"), Container: []byte("source to target")}
	b, err := BuildHandoverRequired(rqd)
	got, err := ParseHandoverRequired(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "handover required", got, rqd)

	req := HandoverRequest{AMFUEID: 4, Cause: hoCause, AMBRUL: 1e9, AMBRDL: 2e9, SecurityCaps: hoCaps, Security: hoSec,
		Sessions: []SessionResource{{ID: 1, SNSSAI: hoAllowed[0], Transfer: []byte("setup-1")}},
		Allowed:  hoAllowed, Container: []byte("source to target"), GUAMI: testGUAMI}
	b, err = BuildHandoverRequest(req)
	gotReq, err := ParseHandoverRequest(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "handover request", gotReq, req)

	ack := HandoverRequestAcknowledge{UEIDs: UEIDs{4, 99}, Admitted: hoSessions("hack"),
		Failed: []SessionTransfer{{ID: 7, Transfer: []byte{3}}}, Container: []byte("target to source")}
	b, err = BuildHandoverRequestAcknowledge(ack)
	gotAck, err := ParseHandoverRequestAcknowledge(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "handover request acknowledge", gotAck, ack)

	cmd := HandoverCommandMsg{UEIDs: UEIDs{4, 8}, Sessions: hoSessions("cmd"), Released: []SessionTransfer{{ID: 7, Transfer: []byte{4}}},
		Container: []byte("target to source")}
	b, err = BuildHandoverCommand(cmd)
	gotCmd, err := ParseHandoverCommand(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "handover command", gotCmd, cmd)

	pf := HandoverPreparationFailure{UEIDs: UEIDs{4, 8}, Cause: CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocprepExpiry)}
	b, err = BuildHandoverPreparationFailure(pf)
	gotPF, err := ParseHandoverPreparationFailure(decodeOK(t, b, err))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "handover preparation failure", gotPF, pf)

	b, err = BuildHandoverFailure(4, hoCause)
	id, cause, err := ParseHandoverFailure(decodeOK(t, b, err))
	if err != nil || id != 4 || !reflect.DeepEqual(cause, hoCause) {
		t.Fatalf("handover failure: %d %+v %v", id, cause, err)
	}
}

func TestHandoverCompletionRoundTrip(t *testing.T) {
	b, err := BuildHandoverNotify(UEIDs{4, 99}, hoCell)
	ids, cell, err := ParseHandoverNotify(decodeOK(t, b, err))
	if err != nil || ids != (UEIDs{4, 99}) || cell != hoCell {
		t.Fatalf("handover notify: %+v %+v %v", ids, cell, err)
	}
	b, err = BuildHandoverCancel(UEIDs{4, 8}, hoCause)
	ids, cause, err := ParseHandoverCancel(decodeOK(t, b, err))
	if err != nil || ids != (UEIDs{4, 8}) || !reflect.DeepEqual(cause, hoCause) {
		t.Fatalf("handover cancel: %+v %+v %v", ids, cause, err)
	}
	b, err = BuildHandoverCancelAcknowledge(UEIDs{4, 8})
	if ids, err = ParseHandoverCancelAcknowledge(decodeOK(t, b, err)); err != nil || ids != (UEIDs{4, 8}) {
		t.Fatalf("handover cancel acknowledge: %+v %v", ids, err)
	}
	drbs := []DRBCount{{DRB: 1, ULPDCPSN: 100, ULHFN: 1, DLPDCPSN: 200, DLHFN: 2}, {DRB: 2, ULPDCPSN: 1<<18 - 1, DLHFN: 1<<14 - 1}}
	c, err := RANStatusContainer(drbs)
	if err != nil {
		t.Fatal(err)
	}
	b, err = BuildUplinkRANStatusTransfer(RANStatusTransfer{UEIDs: UEIDs{4, 8}, Container: c})
	up, err := ParseUplinkRANStatusTransfer(decodeOK(t, b, err))
	if err != nil || up.UEIDs != (UEIDs{4, 8}) {
		t.Fatalf("uplink RAN status: %+v %v", up, err)
	}
	// The AMF relays the container to the target unchanged.
	b, err = BuildDownlinkRANStatusTransfer(RANStatusTransfer{UEIDs: UEIDs{4, 99}, Container: up.Container})
	down, err := ParseDownlinkRANStatusTransfer(decodeOK(t, b, err))
	if err != nil || down.UEIDs != (UEIDs{4, 99}) {
		t.Fatalf("downlink RAN status: %+v %v", down, err)
	}
	same(t, "relayed DRB counts", DRBCounts(down.Container), drbs)
}

// Builders refuse what would put a malformed message on the wire.
func TestHandoverBuildersRefuseBadInput(t *testing.T) {
	cases := map[string]func() ([]byte, error){
		"no sessions to switch": func() ([]byte, error) {
			return BuildPathSwitchRequest(PathSwitchRequestMsg{Cell: hoCell})
		},
		"short NH": func() ([]byte, error) {
			return BuildPathSwitchRequestAcknowledge(PathSwitchRequestAcknowledge{Switched: hoSessions("x"), Allowed: hoAllowed,
				Security: SecurityContext{NH: []byte{1}}})
		},
		"NCC beyond 7": func() ([]byte, error) {
			return BuildPathSwitchRequestAcknowledge(PathSwitchRequestAcknowledge{Switched: hoSessions("x"), Allowed: hoAllowed,
				Security: SecurityContext{NCC: 8, NH: hoSec.NH}})
		},
		"no allowed NSSAI": func() ([]byte, error) {
			return BuildPathSwitchRequestAcknowledge(PathSwitchRequestAcknowledge{Switched: hoSessions("x"), Security: hoSec})
		},
		"session ID 256": func() ([]byte, error) {
			return BuildHandoverRequired(HandoverRequired{Target: hoTarget, Sessions: []SessionTransfer{{ID: 256, Transfer: []byte{1}}}})
		},
		"gNB ID wider than its bits": func() ([]byte, error) {
			tg := hoTarget
			tg.GNB.ID = 1 << 24
			return BuildHandoverRequired(HandoverRequired{Target: tg, Sessions: hoSessions("x")})
		},
		"empty transfer": func() ([]byte, error) {
			return BuildHandoverRequestAcknowledge(HandoverRequestAcknowledge{Admitted: []SessionTransfer{{ID: 1}}})
		},
		"DRB 0": func() ([]byte, error) {
			_, err := RANStatusContainer([]DRBCount{{DRB: 0}})
			return nil, err
		},
	}
	for name, build := range cases {
		if _, err := build(); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// A message without a mandatory IE is reported as such (the AMF answers
// with Error Indication or the procedure's failure), keeping the IDs it had.
func TestHandoverParsersNameMissingIEs(t *testing.T) {
	b, err := BuildHandoverRequired(HandoverRequired{UEIDs: UEIDs{4, 8}, Cause: hoCause, Target: hoTarget,
		Sessions: hoSessions("rqd"), Container: []byte{1}})
	pdu := decodeOK(t, b, err)
	m := pdu.InitiatingMessage.Value.HandoverRequired
	kept := m.ProtocolIEs.List[:0]
	for _, ie := range m.ProtocolIEs.List {
		if ie.Value.TargetID == nil {
			kept = append(kept, ie)
		}
	}
	m.ProtocolIEs.List = kept
	got, err := ParseHandoverRequired(pdu)
	if !errors.Is(err, ErrMissingIE) || got.AMFUEID != 4 || got.RANUEID != 8 {
		t.Fatalf("without Target ID: %+v, %v", got.UEIDs, err)
	}

	b, err = BuildPathSwitchRequest(PathSwitchRequestMsg{RANUEID: 1, SourceAMFUEID: 2, Cell: hoCell, ToSwitch: hoSessions("p")})
	pdu = decodeOK(t, b, err)
	ps := pdu.InitiatingMessage.Value.PathSwitchRequest
	ps.ProtocolIEs.List = ps.ProtocolIEs.List[:2]
	if got, err := ParsePathSwitchRequest(pdu); !errors.Is(err, ErrMissingIE) || got.SourceAMFUEID != 2 {
		t.Fatalf("path switch without the session list: %+v, %v", got, err)
	}

	// A parser given another message says so rather than misreading it.
	b, err = BuildHandoverCancel(UEIDs{1, 2}, hoCause)
	if _, err := ParseHandoverRequired(decodeOK(t, b, err)); !errors.Is(err, ErrNotThisMessage) {
		t.Fatalf("cancel read as required: %v", err)
	}
}

func TestGlobalGNBIDFromNGSetup(t *testing.T) {
	b, err := BuildNGSetupRequest(GNB{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, ID: 0x0A0B0C, TACs: []domain.TAC{1},
		SNSSAIs: hoAllowed})
	pdu := decodeOK(t, b, err)
	req, err := ParseNGSetupRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	g, err := req.GlobalGNBID()
	want := GlobalGNBID{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, ID: 0x0A0B0C, Bits: 24}
	if err != nil || g != want {
		t.Fatalf("got %v, %v; want %v", g, err, want)
	}
	// 22 and 32 bits survive the left alignment.
	for _, w := range []GlobalGNBID{{PLMN: want.PLMN, ID: 1<<22 - 1, Bits: 22}, {PLMN: want.PLMN, ID: 0xFFFFFFFF, Bits: 32}} {
		ie, err := w.ie()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := GlobalGNBIDOf(&ie); err != nil || got != w {
			t.Fatalf("got %v, %v; want %v", got, err, w)
		}
	}
}
