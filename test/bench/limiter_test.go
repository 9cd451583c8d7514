package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseLimiters(t *testing.T) {
	got, err := ParseLimiters("fixed:2, fixed:16,off,adaptive")
	if err != nil || strings.Join(got, ",") != "fixed:2,fixed:16,off,adaptive" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "fixed:0", "fast", "off,,adaptive"} {
		if _, err := ParseLimiters(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// The table and the chart series say which limiter each row measured.
func TestLimiterTableAndSeries(t *testing.T) {
	rs := []Result{
		{Procedure: "pdu_session", SBI: "tcp", UEs: 32, Concurrency: 32, Limiter: "fixed:8", LatencyMS: Latency{Mean: 12.5, P50: 11, P99: 20}},
		{Procedure: "pdu_session", SBI: "tcp", UEs: 32, Concurrency: 32, Limiter: "off", LatencyMS: Latency{Mean: 30, P50: 28, P99: 45}},
	}
	var b bytes.Buffer
	PrintLimiterTable(&b, rs)
	for _, want := range []string{"LIMITER", "fixed:8", "12.50", "off", "45.00"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, b.String())
		}
	}
	s := ByLimiterSeries(rs)
	if s[0].SBI != "tcp fixed:8" || s[1].SBI != "tcp off" || rs[0].SBI != "tcp" {
		t.Fatalf("series %q %q (input %q)", s[0].SBI, s[1].SBI, rs[0].SBI)
	}
}

func TestPDUByLimiterRefusesARunningCore(t *testing.T) {
	if _, err := PDUByLimiter(t.Context(), RegistrationOptions{AMF: "127.0.0.1:38412"}, []string{"off"}); err == nil {
		t.Fatal("--limiter with --amf accepted")
	}
}
