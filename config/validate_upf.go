package config

import (
	"net/netip"
	"time"
)

// upfc checks UPF-C's settings: where it serves N4, its PFCP timers (TS
// 29.244 6.4) and the session bound.
func (v *validator) upfc(u *UPF) {
	if ap, err := netip.ParseAddrPort(u.C.PFCPAddr); err != nil || !ap.Addr().Is4() || ap.Port() == 0 {
		v.fail("upf.c.pfcp_addr", "want IPv4:port such as 127.0.0.1:8805 (TS 29.244 4.2.2: port 8805), got %q", u.C.PFCPAddr)
	}
	if u.C.T1 <= 0 || u.C.T1 > time.Minute {
		v.fail("upf.c.t1", "must be a positive duration up to 1m such as 3s, got %v", u.C.T1)
	}
	v.rangeInt("upf.c.n1", u.C.N1, 1, 10)
	v.rangeInt("upf.max_sessions", u.MaxSessions, 1, 1<<24)
	v.rangeInt("upf.buffer.per_session", u.Buffer.PerSession, 1, 1<<16)
	v.rangeInt("upf.buffer.total", u.Buffer.Total, u.Buffer.PerSession, 1<<22)
	v.upfQoS(&u.QoS)
}
