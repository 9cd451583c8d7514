package domain

import "testing"

func TestParseBitRate(t *testing.T) {
	good := map[string]BitRate{"1 Gbps": 1e9, "2 Gbps": 2e9, "512.5 Kbps": 512500, "0 bps": 0, "100 Mbps": 1e8, "1 Tbps": 1e12}
	for s, want := range good {
		got, err := ParseBitRate(s)
		if err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1Gbps", "1 gbps", "-1 Mbps", "1e3 bps", ". Mbps", "1. Mbps", "1 Gbps ", "x Mbps", "1  Mbps"} {
		if _, err := ParseBitRate(s); err == nil {
			t.Errorf("ParseBitRate(%q) accepted", s)
		}
	}
}

func TestBitRateString(t *testing.T) {
	for b, want := range map[BitRate]string{1e9: "1 Gbps", 1500: "1500 bps", 2e6: "2 Mbps", 0: "0 bps", 1_500_000: "1500 Kbps"} {
		if got := b.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", uint64(b), got, want)
		}
	}
}

func TestDefaultQoSChecks(t *testing.T) {
	for _, q := range []int{5, 9, 69, 80, 128, 254} {
		if err := CheckDefault5QI(q); err != nil {
			t.Errorf("5QI %d refused: %v", q, err)
		}
	}
	for _, q := range []int{0, 1, 4, 65, 82, 255, 300} {
		if CheckDefault5QI(q) == nil {
			t.Errorf("5QI %d accepted as a default flow's", q)
		}
	}
	if CheckARPPriority(0) == nil || CheckARPPriority(16) == nil || CheckARPPriority(8) != nil {
		t.Error("ARP priority bounds are not 1..15")
	}
}

func TestGBR5QI(t *testing.T) {
	for _, q := range []int{1, 4, 65, 67, 71, 76, 82, 90} {
		if !IsGBR5QI(q) {
			t.Errorf("5QI %d is GBR", q)
		}
	}
	for _, q := range []int{5, 9, 69, 70, 79, 80, 128} {
		if IsGBR5QI(q) {
			t.Errorf("5QI %d is not GBR", q)
		}
	}
	if Check5QI(0) == nil || Check5QI(256) == nil || Check5QI(1) != nil || Check5QI(255) != nil {
		t.Error("5QI bounds are not 1..255")
	}
}

func TestParsePDUSessionID(t *testing.T) {
	for s, want := range map[string]int32{"1": 1, "15": 15, "255": 255} {
		if got, err := ParsePDUSessionID(s); err != nil || got != want {
			t.Errorf("ParsePDUSessionID(%q) = %d, %v", s, got, err)
		}
	}
	for _, s := range []string{"0", "256", "-1", "", "1a", "+5"} {
		if _, err := ParsePDUSessionID(s); err == nil {
			t.Errorf("ParsePDUSessionID(%q) accepted", s)
		}
	}
	if CheckPDUSessionID(0) == nil || CheckPDUSessionID(256) == nil || CheckPDUSessionID(5) != nil {
		t.Error("CheckPDUSessionID bounds are not 1..255")
	}
}
