package tracing

import (
	"context"
	"maps"
	"testing"
	"time"
)

// pagingSpans is one paging of imsi-1 (UP SEID 5) from a downlink packet
// sent at 0 µs, as the simulator, UPF-C, the SMF and the AMF would report
// it, every hop at a known time:
//
//	300-500 UPF-C reports (PFCP request 320-480); 350-700 the SMF handles
//	the report, calls N1N2MessageTransfer 400-690, served 450-560; 500
//	the AMF sends Paging, 600 the gNB reads it; 650 the UE's Initial UE
//	Message (RAN UE 9), read 700, handled until 900 (SMF call 750-880,
//	served 770-860); 900 Initial Context Setup Request, read 950; 1000
//	its response, read 1050, handled until 1400 (SMF call 1100-1390,
//	served 1120-1380, PFCP 1150-1350); UPF-C writes the rules 1200-1300;
//	the packet reaches the UE at 2000.
//
// Another session's (UP SEID 6, imsi-2) spans run meanwhile and must not
// count.
func pagingSpans() []Span {
	const k1, k2, k3 = int64(1<<8 | 15), int64(1<<8 | 14), int64(2<<8 | 14)
	ue, supi := int64(9), "imsi-1"
	n1n2 := "POST /namf-comm/v1/ue-contexts/{}/n1-n2-messages"
	spans := []Span{
		span("p", "p1", "", "paging_first_packet", "l25gc-ransim", 0, 2000, attrs(HopProcedure, string(KeyProcedure), "paging_first_packet",
			string(KeySUPI), supi, string(KeyRANUE), ue, string(KeyTrigger), TriggerDownlink)),
		span("p", "p2", "", "paging", "l25gc-ransim", 0, 600, attrs(HopProcedure, string(KeyProcedure), "paging",
			string(KeySUPI), supi, string(KeyTrigger), TriggerDownlink)),
		span("u1", "ur", "", UPFCReport, "l25gc-upf", 300, 500, attrs(HopUPFC, string(KeyUPSEID), int64(5))),
		span("u1", "up", "ur", "session_report_request", "l25gc-upf", 320, 480, attrs(HopPFCP)),
		span("m", "mr", "", "Session Report → N1N2MessageTransfer answered", "l25gc-smf", 350, 700, attrs(HopSMFNF, string(KeySUPI), supi, string(KeyUPSEID), int64(5))),
		span("m", "mc", "mr", n1n2, "l25gc-smf", 400, 690, attrs(HopSBIClient)),
		span("m", "ms", "mc", n1n2, "l25gc-amf", 450, 560, attrs(HopSBIServer)),
		span("ap", "ap", "", "N2 send Paging", "l25gc-amf", 500, 500, attrs(HopAMFSend, string(KeySUPI), supi, string(KeyMessage), pagingKey)),
		span("rp", "rp", "", "N2 receive Paging", "l25gc-ransim", 600, 600, attrs(HopRANRecv, string(KeySUPI), supi, string(KeyMessage), pagingKey)),
		span("a2", "o2", "s2", "N2 send", "l25gc-amf", 900, 900, attrs(HopAMFSend, string(KeyRANUE), ue, string(KeyMessage), k2)),
		span("r2", "r2", "", "N2 receive", "l25gc-ransim", 950, 950, attrs(HopRANRecv, string(KeyRANUE), ue, string(KeyMessage), k2)),
		span("a3", "f3", "v3", "session_modification_request", "l25gc-smf", 1150, 1350, attrs(HopPFCP)),
		span("u2", "um", "", UPFCModification, "l25gc-upf", 1200, 1300, attrs(HopUPFC, string(KeyUPSEID), int64(5))),
		// The other session's.
		span("u3", "ux", "", UPFCReport, "l25gc-upf", 300, 500, attrs(HopUPFC, string(KeyUPSEID), int64(6))),
		span("m2", "mx", "", "Session Report → N1N2MessageTransfer answered", "l25gc-smf", 360, 380, attrs(HopSMFNF, string(KeySUPI), "imsi-2", string(KeyUPSEID), int64(6))),
		span("u4", "uy", "", UPFCModification, "l25gc-upf", 1310, 1900, attrs(HopUPFC, string(KeyUPSEID), int64(6))),
	}
	service := handledMessage{n: "2", n2: "N2 InitialUEMessage", step: "ServiceRequest", ranUE: ue, key: k1,
		sent: 650, read: 700, stepFrom: 720, end: 900, call: [2]int{750, 880}, served: [2]int{770, 860}}
	setup := handledMessage{n: "3", n2: "N2 InitialContextSetupResponse", step: "InitialContextSetupResponse", ranUE: ue, key: k3,
		sent: 1000, read: 1050, stepFrom: 1060, end: 1400, call: [2]int{1100, 1390}, served: [2]int{1120, 1380}}
	return append(append(spans, service.spans()...), setup.spans()...)
}

// handledMessage is a UE message the gNB sends and the AMF handles as one
// step with one SMF call (Nsmf_PDUSession_UpdateSMContext), the span IDs
// numbered n: the gNB's send g<n>, the AMF's receive a<n> (its trace),
// step s<n>, call c<n>, and the SMF serving it v<n>. Times in µs.
type handledMessage struct {
	n, n2, step          string
	ranUE, key           int64
	sent, read, stepFrom int
	end                  int    // the AMF's receive and step end
	call, served         [2]int // the SMF call as the AMF saw it, and as the SMF served it
}

func (h handledMessage) spans() []Span {
	modify := "POST /nsmf-pdusession/v1/sm-contexts/{}/modify"
	a := "a" + h.n
	return []Span{
		span("g"+h.n, "g"+h.n, "", "N2 send", "l25gc-ransim", h.sent, h.sent, attrs(HopRANSend, string(KeyRANUE), h.ranUE, string(KeyMessage), h.key)),
		span(a, a, "", h.n2, "l25gc-amf", h.read, h.end, attrs(HopAMFRecv, string(KeyRANUE), h.ranUE, string(KeyMessage), h.key)),
		span(a, "s"+h.n, a, h.step, "l25gc-amf", h.stepFrom, h.end, attrs(HopStep)),
		span(a, "c"+h.n, "s"+h.n, modify, "l25gc-amf", h.call[0], h.call[1], attrs(HopSBIClient)),
		span(a, "v"+h.n, "c"+h.n, modify, "l25gc-smf", h.served[0], h.served[1], attrs(HopSBIServer)),
	}
}

// withRows is base with more rows.
func withRows(base, more map[string]float64) map[string]float64 {
	m := maps.Clone(base)
	maps.Copy(m, more)
	return m
}

func breakdownOf(t *testing.T, bs []Breakdown, procedure string) Breakdown {
	t.Helper()
	for _, b := range bs {
		if b.Procedure == procedure {
			return b
		}
	}
	t.Fatalf("no breakdown of %s among %+v", procedure, bs)
	return Breakdown{}
}

// Every hop of a paging, from the downlink packet to the UE receiving it,
// is in the breakdown, joined by SUPI and UP SEID where the UE has no RAN
// UE NGAP ID, and the hops add up to the end-to-end time.
func TestPagingBreakdownFollowsThePacketFromTheDataNetworkToTheUE(t *testing.T) {
	bs := Compute(pagingSpans())
	n1n2 := "POST /namf-comm/v1/ue-contexts/{}/n1-n2-messages"
	modify := "POST /nsmf-pdusession/v1/sm-contexts/{}/modify"
	// Both procedures start alike: the packet, the report and the SMF's
	// N1N2MessageTransfer, until the AMF sends Paging.
	untilPaging := map[string]float64{
		RowDownlinkToUPFC:                  300,
		"UPF-C: " + UPFCReport:             20,
		"UPF PFCP: session_report_request": 30,
		"SMF paging: Session Report → N1N2MessageTransfer answered": 50,
		"SBI transport (client - server): " + n1n2:                  50,
		"AMF handles: " + n1n2:                                      50,
	}
	cases := []struct {
		procedure string
		want      map[string]float64 // µs
	}{
		{"paging", withRows(untilPaging, map[string]float64{
			RowN2Downlink: 100, // Paging 500-600
		})},
		{"paging_first_packet", withRows(untilPaging, map[string]float64{
			RowN2Downlink:              150, // Paging, Initial Context Setup Request
			RowRAN:                     100, // 600-650, 950-1000
			RowN2Uplink:                100,
			"AMF N2 read and decode":   30,
			"AMF step: ServiceRequest": 50,
			"SBI transport (client - server): " + modify: 60,
			"SMF handles: " + modify:                     120,
			"AMF step: InitialContextSetupResponse":      40,
			"SMF PFCP: session_modification_request":     50,
			"UPF-C: " + UPFCModification:                 100,
			RowUPFUToUE:                                  700,
		})},
	}
	for _, c := range cases {
		t.Run(c.procedure, func(t *testing.T) {
			b := breakdownOf(t, bs, c.procedure)
			got := hopsOf(t, b)
			var sum float64
			for _, h := range b.Hops {
				if h.Kind == "part" {
					sum += h.Mean * 1000
				}
			}
			if want := b.EndToEnd.Mean * 1000; !near(sum, want) {
				t.Errorf("parts sum to %.1f µs, end to end %.1f", sum, want)
			}
			for row, w := range c.want {
				if !near(got[row], w) {
					t.Errorf("%s = %.1f µs, want %.1f", row, got[row], w)
				}
			}
			for row, v := range got {
				if _, ok := c.want[row]; !ok && v > 0.01 && isPart(b, row) {
					t.Errorf("unexpected part %s = %.1f µs (another session's spans counted?)", row, v)
				}
			}
		})
	}
}

func isPart(b Breakdown, row string) bool {
	for _, h := range b.Hops {
		if h.Name == row {
			return h.Kind == "part"
		}
	}
	return false
}

// A paging the SMF never reported (no UPF-C or SMF span joined) leaves
// the time from the packet to the Paging not accounted for, not given to
// the simulator.
func TestPagingBreakdownWithoutTheCoreSpansSaysWhatIsNotAccountedFor(t *testing.T) {
	var spans []Span
	for _, s := range pagingSpans() {
		if s.Name == "paging" || s.TraceID == "ap" || s.TraceID == "rp" {
			spans = append(spans, s)
		}
	}
	got := hopsOf(t, breakdownOf(t, Compute(spans), "paging"))
	if got[NotAccounted] != 500 || got[RowN2Downlink] != 100 || got[RowRAN] != 0 {
		t.Errorf("hops %v, want 500 µs not accounted for and the Paging's 100 µs on N2", got)
	}
}

// The hooks cost nothing with tracing off: no allocation, the no-op span.
func TestPagingHooksOffAllocateNothing(t *testing.T) {
	ctx := context.Background()
	var amf *AMF
	var ran *RAN
	allocs := testing.AllocsPerRun(100, func() {
		_, a := StartUPFC(ctx, nil, UPFCReport, 5, time.Time{})
		a.End()
		_, b := StartSMFReport(ctx, nil, "imsi-1", 5)
		_ = WithSpan(ctx, b)
		b.End()
		amf.SentPaging("imsi-1")
		ran.PagingReceived(time.Time{}, "imsi-1")
		ran.DownlinkProcedure("paging", "imsi-1", 9, time.Time{}, time.Time{})
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run with tracing off, want 0", allocs)
	}
}
