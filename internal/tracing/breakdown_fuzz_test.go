package tracing

import (
	"math"
	"testing"
)

// Spans reach the breakdown from other processes (OTLP): whatever they
// say — hops, SUPIs, UP SEIDs, RAN UE NGAP IDs, overlaps — Compute does
// not fail and each procedure's parts still add up to its end-to-end time.
func FuzzBreakdownPartsAddUp(f *testing.F) {
	f.Add([]byte{0, 0, 10, 200, 1, 1, 5, 20, 2, 2, 30, 60, 3, 0, 40, 41, 4, 1, 50, 120})
	f.Add([]byte{9, 3, 0, 255, 5, 3, 1, 2, 6, 3, 3, 4, 7, 3, 100, 100, 8, 1, 7, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		hops := []string{HopProcedure, HopUPFC, HopSMFNF, HopSBIClient, HopSBIServer, HopAMFSend, HopRANRecv, HopRANSend, HopAMFRecv, HopPFCP}
		supis := []string{"", "imsi-1", "imsi-2"}
		var spans []Span
		for i := 0; i+3 < len(b) && len(spans) < 64; i += 4 {
			hop := hops[int(b[i])%len(hops)]
			who := int(b[i+1])
			start := int(b[i+2]) * 10
			end := start + int(b[i+3])
			a := attrs(hop)
			if supi := supis[who%3]; supi != "" {
				a[string(KeySUPI)] = supi
			}
			if who&4 != 0 {
				a[string(KeyUPSEID)] = int64(who & 3)
			}
			if who&8 != 0 {
				a[string(KeyRANUE)] = int64(who & 3)
			}
			if who&16 != 0 {
				a[string(KeyTrigger)] = TriggerDownlink
			}
			a[string(KeyMessage)] = int64(who & 32)
			if hop == HopProcedure {
				a[string(KeyProcedure)] = "p"
			}
			parent := ""
			if who&64 != 0 && len(spans) > 0 {
				parent = spans[len(spans)-1].SpanID
			}
			spans = append(spans, span(string(rune('a'+who%5)), string(rune('A'+i/4)), parent, hop, "l25gc-x", start, end, a))
		}
		for _, bd := range Compute(spans) {
			var sum float64
			for _, h := range bd.Hops {
				if h.Kind == "part" {
					sum += h.Mean
				}
			}
			// Each mean is whole nanoseconds: up to 1 ns (1e-6 ms) lost per row.
			if math.Abs(sum-bd.EndToEnd.Mean) > 1e-6*float64(len(bd.Hops)+1) {
				t.Fatalf("parts sum to %v ms, end to end %v", sum, bd.EndToEnd.Mean)
			}
		}
	})
}
