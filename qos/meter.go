package qos

/*
#include "qos.h"
*/
import "C"

import "time"

// MeterConfig is one trTCM (RFC 2698). Rates are bit/s, bursts bytes.
type MeterConfig struct {
	CIR, PIR uint64        // committed (GBR) and peak (MBR) rate; 0 = none
	CBS, PBS uint64        // bursts; 0 = the rate over Window
	Window   time.Duration // 0 = 10 ms
}

// Meter is one trTCM, stepped by the caller's clock (ticks of Hz).
type Meter struct {
	p C.struct_qos_trtcm_profile
	m C.struct_qos_trtcm
}

// NewMeter starts a meter with full buckets at now (RFC 2698 section 3).
func NewMeter(c MeterConfig, hz, now uint64) (*Meter, error) {
	mc := C.struct_qos_trtcm_conf{
		cir_bps: C.uint64_t(c.CIR), pir_bps: C.uint64_t(c.PIR),
		cbs_bytes: C.uint64_t(c.CBS), pbs_bytes: C.uint64_t(c.PBS),
		window_ns: C.uint64_t(c.Window.Nanoseconds()),
	}
	m := &Meter{}
	if err := errFrom(C.qos_trtcm_profile_init(&m.p, &mc, C.uint64_t(hz))); err != nil {
		return nil, err
	}
	C.qos_trtcm_init(&m.m, &m.p, C.uint64_t(now))
	return m, nil
}

// Blind colours a packet of n bytes arriving at now (colour-blind mode).
func (m *Meter) Blind(now uint64, n uint32) Colour {
	return Colour(C.qos_trtcm_blind(&m.m, &m.p, C.uint64_t(now), C.uint32_t(n)))
}

// Aware colours a packet of n bytes pre-coloured in (colour-aware mode).
func (m *Meter) Aware(now uint64, n uint32, in Colour) Colour {
	return Colour(C.qos_trtcm_aware(&m.m, &m.p, C.uint64_t(now), C.uint32_t(n), C.enum_qos_colour(in)))
}

// Sizes are the buckets' sizes in bytes (CBS, PBS as configured or derived).
func (m *Meter) Sizes() (cbs, pbs uint64) {
	return uint64(m.p.cbs / m.p.unit), uint64(m.p.pbs / m.p.unit)
}
