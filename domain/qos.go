package domain

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BitRate is a bit rate in bits per second.
type BitRate uint64

// bitRateUnits are the units of TS 29.571 5.5.2 BitRate, in the order
// FormatBitRate tries them.
var bitRateUnits = []struct {
	name string
	mult float64
}{{"Tbps", 1e12}, {"Gbps", 1e9}, {"Mbps", 1e6}, {"Kbps", 1e3}, {"bps", 1}}

// ParseBitRate reads a TS 29.571 5.5.2 BitRate: a number, one space and
// a unit of bps, Kbps, Mbps, Gbps or Tbps ("1 Gbps", "512.5 Kbps"), the
// pattern ^\d+(\.\d+)? (bps|Kbps|Mbps|Gbps|Tbps)$.
func ParseBitRate(s string) (BitRate, error) {
	num, unit, ok := strings.Cut(s, " ")
	if !ok || num == "" || strings.ContainsAny(num, "+-eE") || strings.HasPrefix(num, ".") || strings.HasSuffix(num, ".") {
		return 0, fmt.Errorf("bit rate %q: want a number and a unit, e.g. \"1 Gbps\" (TS 29.571 BitRate)", s)
	}
	for _, u := range bitRateUnits {
		if unit != u.name {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v*u.mult > math.MaxUint64/2 {
			return 0, fmt.Errorf("bit rate %q: %q is not a number in range", s, num)
		}
		return BitRate(math.Round(v * u.mult)), nil
	}
	return 0, fmt.Errorf("bit rate %q: unit %q is not bps, Kbps, Mbps, Gbps or Tbps (TS 29.571 BitRate)", s, unit)
}

// String writes the rate in the largest unit that keeps it whole.
func (b BitRate) String() string {
	for _, u := range bitRateUnits {
		m := uint64(u.mult)
		if uint64(b) >= m && uint64(b)%m == 0 {
			return strconv.FormatUint(uint64(b)/m, 10) + " " + u.name
		}
	}
	return strconv.FormatUint(uint64(b), 10) + " bps"
}

// CheckDefault5QI says whether q may be the 5QI of a session's default QoS
// flow: the default QoS rule's flow is a non-GBR one (TS 23.501 5.7.2.7
// and 5.7.4: standardized non-GBR 5QIs 5-10, 69, 70, 79, 80), or an
// operator-specific 5QI (128-254).
func CheckDefault5QI(q int) error {
	switch {
	case q >= 5 && q <= 10, q == 69, q == 70, q == 79, q == 80, q >= 128 && q <= 254:
		return nil
	}
	return fmt.Errorf("5QI %d: a default QoS flow needs a non-GBR 5QI (5-10, 69, 70, 79, 80) or an operator-specific one (128-254), TS 23.501 5.7.4", q)
}

// CheckARPPriority says whether p is an ARP priority level, 1 (highest)
// to 15 (TS 23.501 5.7.2.2).
func CheckARPPriority(p int) error {
	if p < 1 || p > 15 {
		return fmt.Errorf("ARP priority level %d: must be 1 (highest) to 15, TS 23.501 5.7.2.2", p)
	}
	return nil
}

// IsGBR5QI says whether q is a standardized GBR or delay-critical GBR 5QI
// (TS 23.501 Table 5.7.4-1: 1-4, 65-67, 71-76, 82-90): a flow with one
// needs a guaranteed bit rate.
func IsGBR5QI(q int) bool {
	return q >= 1 && q <= 4 || q >= 65 && q <= 67 || q >= 71 && q <= 76 || q >= 82 && q <= 90
}

// Check5QI says whether q is a 5QI value (TS 23.501 5.7.2.1: 1-255; 0 is
// reserved).
func Check5QI(q int) error {
	if q < 1 || q > 255 {
		return fmt.Errorf("5QI %d: must be 1 to 255, TS 23.501 5.7.2.1", q)
	}
	return nil
}
