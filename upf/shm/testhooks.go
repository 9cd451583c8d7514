//go:build l25gc_testhooks

package shm

// #include "tables.h"
import "C"

import (
	"time"
	"unsafe"

	"github.com/l25gc/l25gc/upf/rules"
)

// InstallPausedForTest is Install stopping pause half way through writing
// the rules (between the FARs and the QERs), under the seqlock: tests show
// that UPF-U never forwards with the half-written session.
func (t *Table) InstallPausedForTest(s *rules.Session, pause time.Duration) error {
	return t.install(s, uint64(pause.Nanoseconds()))
}

// killedMidWriteForTest leaves a session's slot as a writer killed inside
// the seqlock would.
func (t *Table) killedMidWriteForTest(upSEID uint64) {
	s := (*C.struct_upf_sess)(unsafe.Add(unsafe.Pointer(t.h), uintptr(t.h.sess_off)+uintptr(t.bySEID[upSEID])*unsafe.Sizeof(C.struct_upf_sess{})))
	s.seq++
}
