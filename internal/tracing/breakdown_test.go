package tracing

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func us(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }

// span builds a synthetic span from start to end µs.
func span(trace, id, parent, name, service string, start, end int, attrs map[string]any) Span {
	return Span{TraceID: trace, SpanID: id, ParentID: parent, Name: name, Service: service,
		Start: us(start), End: us(end), Attrs: attrs}
}

func attrs(hop string, kv ...any) map[string]any {
	m := map[string]any{string(KeyHop): hop}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// registrationSpans is one registration of RAN UE 7 as the simulator, the
// AMF and the AUSF would report it, with every hop at a known time (µs):
//
//	0 procedure starts; 10 gNB sends Initial UE Message (k1); 30 the AMF
//	reads it; 40-50 dispatcher queue; 50-200 the step, which calls the
//	AUSF 100-180, served 110-170; 210 the AMF sends k2; 240 the gNB
//	reads it; 300 the gNB sends k3 that never reaches the AMF; 900 the
//	gNB reads another k2 the AMF did not send; 1000 the procedure ends.
func registrationSpans() []Span {
	const k1, k2, k3 = int64(1<<8 | 15), int64(1<<8 | 4), int64(1<<8 | 46)
	ue := int64(7)
	return []Span{
		span("p", "p1", "", "registration", "l25gc-ransim", 0, 1000, attrs(HopProcedure, string(KeyProcedure), "registration", string(KeyRANUE), ue)),
		span("s1", "x1", "", "N2 send", "l25gc-ransim", 10, 10, attrs(HopRANSend, string(KeyRANUE), ue, string(KeyMessage), k1)),
		span("a", "r1", "", "N2 InitialUEMessage", "l25gc-amf", 30, 200, attrs(HopAMFRecv, string(KeyRANUE), ue, string(KeyMessage), k1)),
		span("a", "q1", "r1", "dispatcher queue", "l25gc-amf", 40, 50, attrs(HopQueue)),
		span("a", "st", "r1", "RegistrationRequest", "l25gc-amf", 50, 200, attrs(HopStep)),
		span("a", "c1", "st", "POST /nausf-auth/v1/ue-authentications", "l25gc-amf", 100, 180, attrs(HopSBIClient)),
		span("a", "v1", "c1", "POST /nausf-auth/v1/ue-authentications", "l25gc-ausf", 110, 170, attrs(HopSBIServer)),
		span("a", "o1", "st", "N2 send", "l25gc-amf", 210, 210, attrs(HopAMFSend, string(KeyRANUE), ue, string(KeyMessage), k2)),
		span("s2", "x2", "", "N2 receive", "l25gc-ransim", 240, 240, attrs(HopRANRecv, string(KeyRANUE), ue, string(KeyMessage), k2)),
		span("s3", "x3", "", "N2 send", "l25gc-ransim", 300, 300, attrs(HopRANSend, string(KeyRANUE), ue, string(KeyMessage), k3)),
		span("s4", "x4", "", "N2 receive", "l25gc-ransim", 900, 900, attrs(HopRANRecv, string(KeyRANUE), ue, string(KeyMessage), k2)),
		// Another UE's AMF span at the same time must not count.
		span("b", "r2", "", "N2 InitialUEMessage", "l25gc-amf", 300, 900, attrs(HopAMFRecv, string(KeyRANUE), int64(8), string(KeyMessage), k1)),
	}
}

func hopsOf(t *testing.T, b Breakdown) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, h := range b.Hops {
		m[h.Name] = h.Mean * 1000 // µs
	}
	return m
}

func TestBreakdownAttributesEveryMicrosecondOfASyntheticRegistration(t *testing.T) {
	bs := Compute(registrationSpans())
	if len(bs) != 1 || bs[0].Procedure != "registration" || bs[0].Count != 1 {
		t.Fatalf("breakdowns = %+v, want one registration", bs)
	}
	got := hopsOf(t, bs[0])
	want := map[string]float64{
		RowRAN:                          170, // 0-10, 240-300, 900-1000
		RowN2Uplink:                     20,  // 10-30
		"AMF N2 read and decode":        10,
		"AMF dispatcher queue":          10,
		"AMF step: RegistrationRequest": 70, // 50-100, 180-200
		"SBI transport (client - server): POST /nausf-auth/v1/ue-authentications": 20,
		"AUSF handles: POST /nausf-auth/v1/ue-authentications":                    60,
		RowN2Downlink: 30,  // 210-240
		NotAccounted:  610, // 200-210, 300-900
		"SBI client saw: POST /nausf-auth/v1/ue-authentications":   80,
		"SBI server spent: POST /nausf-auth/v1/ue-authentications": 60,
	}
	for name, w := range want {
		if g := got[name]; !near(g, w) {
			t.Errorf("%s = %.1f µs, want %.1f", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want exactly %v", got, want)
	}
	var sum float64
	for _, h := range bs[0].Hops {
		if h.Kind == "part" {
			sum += h.Mean
		}
	}
	if !near(sum*1000, 1000) || !near(bs[0].EndToEnd.P50*1000, 1000) {
		t.Errorf("parts sum to %.1f µs, end to end p50 %.1f µs; want both 1000", sum*1000, bs[0].EndToEnd.P50*1000)
	}
}

func TestBreakdownStatisticsOverProcedures(t *testing.T) {
	// Two procedures of different UEs: 1000 µs and 3000 µs in which the
	// simulator never sent: all its own time.
	spans := []Span{
		span("p", "1", "", "pdu", "r", 0, 1000, attrs(HopProcedure, string(KeyProcedure), "pdu", string(KeyRANUE), int64(1))),
		span("q", "2", "", "pdu", "r", 0, 3000, attrs(HopProcedure, string(KeyProcedure), "pdu", string(KeyRANUE), int64(2))),
	}
	b := Compute(spans)[0]
	if b.EndToEnd.P50 != 1 || b.EndToEnd.P99 != 3 || b.EndToEnd.Mean != 2 {
		t.Errorf("end to end = %+v, want p50 1, p99 3, mean 2 ms", b.EndToEnd)
	}
	if len(b.Hops) != 1 || b.Hops[0].Name != RowRAN || b.Hops[0].Mean != 2 || b.Hops[0].P99 != 3 {
		t.Errorf("hops = %+v, want only %q with mean 2 ms, p99 3", b.Hops, RowRAN)
	}
}

func TestBreakdownTableShowsTheSumAndTheUnaccountedRow(t *testing.T) {
	var out bytes.Buffer
	Compute(registrationSpans())[0].Write(&out, "registration over xio")
	s := out.String()
	for _, want := range []string{"registration over xio: 1 procedures", "not accounted for", "sum of the parts (= end to end mean)", "100.0%", "SBI client saw"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}

func near(a, b float64) bool { return a-b < 0.01 && b-a < 0.01 }

// The short table sums the parts by kind of hop and still adds up.
func TestBreakdownClassesSumTheParts(t *testing.T) {
	b := Compute(registrationSpans())[0]
	got := map[string]float64{}
	var sum float64
	for _, c := range b.Classes {
		got[c.Name] = c.Mean * 1000
		sum += c.Mean * 1000
	}
	want := map[string]float64{
		RowRAN: 170, RowN2Uplink: 20, RowN2Downlink: 30, NotAccounted: 610, "AMF dispatcher queue": 10,
		"AMF processing (all steps, N2 decode)":      80,
		"SBI transport (all calls, client - server)": 20,
		"AUSF processing (all requests)":             60,
	}
	for name, w := range want {
		if !near(got[name], w) {
			t.Errorf("%s = %.1f µs, want %.1f", name, got[name], w)
		}
	}
	if len(got) != len(want) || !near(sum, 1000) {
		t.Errorf("classes %v sum to %.1f µs, want exactly %v summing to 1000", got, sum, want)
	}
	var out bytes.Buffer
	b.Write(&out, "registration")
	t.Log(out.String())
}

// The AMF's consumer code around an SBI request (encode, discovery, token,
// decode) is its own row, not "not accounted for".
func TestBreakdownNamesTheConsumerCodeAroundACall(t *testing.T) {
	ue := int64(3)
	spans := []Span{
		span("p", "p", "", "pdu_session", "r", 0, 100, attrs(HopProcedure, string(KeyProcedure), "pdu_session", string(KeyRANUE), ue)),
		span("a", "r", "", "event ULNASTransport", "l25gc-amf", 0, 5, attrs(HopAMFRecv, string(KeyRANUE), ue)),
		span("a", "c", "r", "SMF call", "l25gc-amf", 10, 90, attrs(HopConsumer)),
		span("a", "h", "c", "POST /nsmf-pdusession/v1/sm-contexts", "l25gc-amf", 20, 80, attrs(HopSBIClient)),
		span("a", "s", "h", "POST /nsmf-pdusession/v1/sm-contexts", "l25gc-smf", 30, 70, attrs(HopSBIServer)),
	}
	got := hopsOf(t, Compute(spans)[0])
	if w := "AMF consumer (encode, discovery, token, decode): SMF call"; !near(got[w], 20) {
		t.Errorf("%s = %.1f µs, want 20; rows %v", w, got[w], got)
	}
	if !near(got["SMF handles: POST /nsmf-pdusession/v1/sm-contexts"], 40) {
		t.Errorf("rows %v: want the SMF's 40 µs", got)
	}
}
