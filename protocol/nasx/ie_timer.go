package nasx

import "time"

// GPRSTimer3 encodes a duration as GPRS timer 3 (TS 24.008 10.5.7.4a, used for
// T3512 by TS 24.501 9.11.2.5): 3 unit bits and a 5-bit value, choosing the
// finest unit that holds the value. Zero means deactivated.
func GPRSTimer3(d time.Duration) uint8 {
	if d <= 0 {
		return 0xE0 // unit 111: timer deactivated
	}
	units := []struct {
		bits uint8
		step time.Duration
	}{
		{0b011, 2 * time.Second}, {0b100, 30 * time.Second}, {0b101, time.Minute},
		{0b000, 10 * time.Minute}, {0b001, time.Hour}, {0b010, 10 * time.Hour}, {0b110, 320 * time.Hour},
	}
	for _, u := range units {
		if n := d / u.step; n <= 31 && d%u.step == 0 {
			return u.bits<<5 | uint8(n)
		}
	}
	for _, u := range units { // not exact: round up in the first unit that fits
		if n := (d + u.step - 1) / u.step; n <= 31 {
			return u.bits<<5 | uint8(n)
		}
	}
	return 0b110<<5 | 31
}

// GPRSTimer2 encodes a duration as GPRS timer 2 (TS 24.008 10.5.7.4).
func GPRSTimer2(d time.Duration) uint8 {
	switch {
	case d <= 0:
		return 0
	case d <= 62*time.Second:
		return uint8((d+time.Second)/(2*time.Second)) & 0x1F
	case d <= 31*time.Minute:
		return 0b001<<5 | uint8((d+time.Minute-1)/time.Minute)
	default:
		return 0b010<<5 | uint8(min((d+6*time.Minute-1)/(6*time.Minute), 31))
	}
}
