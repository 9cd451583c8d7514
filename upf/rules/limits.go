package rules

// Per-session limits of UPF-U's shared rule tables (UPF_MAX_* of
// onvm/include/upf_shm.h; upf/shm's tests fail when the two disagree).
// An SMF can check a session against them before N4 refuses it with PFCP
// cause 75 (No resources available).
const (
	MaxPDRs = 17
	MaxFARs = 8
	MaxQERs = 9
	MaxURRs = 4
	// MaxQoSFlows is how many QoS flows (the default flow included) one
	// session may have: each an uplink and a downlink PDR and its own QER,
	// plus the session-level QER (the Session-AMBR) and the one PDR of
	// indirect forwarding during an N2 handover (TS 23.502 4.9.1.3.2).
	// It is also how many flows UPF-U's shaper shares the AMBR among
	// (qos.MaxFlows).
	MaxQoSFlows = 8
)
