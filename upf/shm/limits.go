package shm

/*
#include "upf_shm_ops.h"
*/
import "C"

// TableBytes is the size of the rule tables file for maxSessions sessions
// (upf.max_sessions): session slots, UPF-U's per-slot state, the TEID and
// UE-address lookups and the rings, as upf_shm_plan lays them out.
func TableBytes(maxSessions uint32) uint64 {
	var h C.struct_upf_shm
	C.upf_shm_plan(&h, C.uint32_t(maxSessions))
	return uint64(h.size)
}
