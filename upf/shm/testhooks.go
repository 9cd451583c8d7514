//go:build l25gc_testhooks

package shm

import (
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

// InstallPausedForTest is Install stopping pause half way through writing
// the rules (between the FARs and the QERs), under the seqlock: tests show
// that UPF-U never forwards with the half-written session.
func (t *Table) InstallPausedForTest(s *rules.Session, pause time.Duration) error {
	return t.install(s, uint64(pause.Nanoseconds()))
}
