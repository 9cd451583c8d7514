package ngapx

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// The idle-mode messages the AMF sends — Paging, and the Initial Context
// Setup Request of a Service Request with a session and Service Accept —
// dissect in tshark without error (DESIGN.md; issue 12: "tshark dissects
// NGAP Paging").
func TestIdleModeMessagesDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	plmn := domain.PLMN{MCC: "208", MNC: "93"}
	paging, err := BuildPaging(Paging{STMSI: nasx.STMSI{SetID: 1, Pointer: 1, TMSI: 0xCAFE0001},
		TAIs: []domain.TAI{{PLMN: plmn, TAC: 1}, {PLMN: plmn, TAC: 2}}, Priority: 1})
	if err != nil {
		t.Fatal(err)
	}
	status := nasx.PSIs(5)
	accept, err := nasx.BuildServiceAccept(nasx.ServiceAccept{PDUSessionStatus: &status, ReactivationResult: new(nasx.PSISet)})
	if err != nil {
		t.Fatal(err)
	}
	guami, err := domain.ParseGUAMI("20893-cafe00")
	if err != nil {
		t.Fatal(err)
	}
	slice := models.Snssai{Sst: 1, Sd: "010203"}
	ics, err := BuildInitialContextSetupRequest(InitialContext{AMFUEID: 7, RANUEID: 9, GUAMI: guami, Allowed: []models.Snssai{slice},
		KgNB: make([]byte, 32), AMBRUL: 1e8, AMBRDL: 1e9, NASPDU: accept,
		Sessions: []SessionResource{{ID: 5, SNSSAI: slice, Transfer: setupTransfer(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	release, err := BuildUEContextReleaseRequestWithSessions(7, 9, CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity), []uint8{5})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeMobileTerminated, NgKSI: 1,
		STMSI: nasx.STMSI{SetID: 1, Pointer: 1, TMSI: 0xCAFE0001}, UplinkDataStatus: &status, PDUSessionStatus: &status})
	if err != nil {
		t.Fatal(err)
	}
	cell := Cell{TAI: domain.TAI{PLMN: plmn, TAC: 1}, CellID: 1}
	initial, err := BuildInitialUEMessageWithCause(9, sr, cell, &nasx.STMSI{SetID: 1, Pointer: 1, TMSI: 0xCAFE0001}, ngapType.RRCEstablishmentCausePresentMtAccess)
	if err != nil {
		t.Fatal(err)
	}
	rej, err := nasx.BuildServiceRejectWith(nasx.ServiceReject{Cause: nasx.CauseCongestion, PDUSessionStatus: &status, T3346: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	reject, err := BuildDownlinkNASTransport(7, 9, rej)
	if err != nil {
		t.Fatal(err)
	}
	text := tsharkcap.DissectNGAP(t, paging, ics, release, initial, reject)
	for _, want := range []string{"Paging", "TAIListForPaging", "fiveG-TMSI", "InitialContextSetupRequest",
		"PDUSessionResourceSetupListCxtReq", "Service accept", "PDU session status", "PDUSessionResourceListCxtRelReq",
		"Service request", "Uplink data status", "mt-Access", "Service reject", "GPRS Timer 2 - T3346 value"} {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags a message:\n%s", text)
	}
}
