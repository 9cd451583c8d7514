package ratelimit

// A guard on Algorithm 1's decrease (beyond the paper; on with Growth > 1,
// so growth 1 stays the paper's exact rule). The paper lowers E_max at
// every interval whose EWMA is above the threshold, on the premise that
// the AMF's own goroutines make the scheduler slow. On a shared machine
// the latency also comes from everything else that wants the CPUs: under
// a 1000-UE registration burst on this 2-core machine the AMF's mean
// scheduler latency stayed at 11-22 ms while E_max was cut from 1000 to
// 256 (it did not fall with E_max), and the goodput fell to 72 % of off's,
// whose latency was just as high (bench registration --limiter, s11).
// Cutting further when the last cut did not help only starves the
// procedures, which hold their slots across round trips.
//
// So a slow interval lowers E_max again only if the EWMA has fallen by at
// least CutProgress since the last cut: the cuts are working but not yet
// enough. Otherwise E_max is held (Decision.Held). Holding also covers the
// time a cut needs to take effect: procedures in progress finish first,
// so E_current stays above the new E_max for a while and the latency
// cannot have fallen yet. A fast interval, or an empty queue, forgets the
// reference. Each cut needs a latency lower by a tenth than the one
// before, so against an outside load the cuts stop after a few steps,
// while a latency the AMF does cause keeps falling with each cut, which
// keeps them coming until it is under the threshold.

// CutProgress is the fall of the EWMA since the last cut that lets the
// next one through.
const CutProgress = 0.1

// cutIsFutileLocked says whether a slow interval should keep E_max: the
// guard is on, there was a cut, and the EWMA has not fallen enough since.
func (l *Limiter) cutIsFutileLocked() bool {
	return l.cfg.Growth > 1 && l.cutEWMA > 0 && l.ewma > l.cutEWMA*(1-CutProgress)
}

// noteMoveLocked keeps the EWMA of a cut as the reference for the next
// one, and forgets it when the scheduler was fast.
func (l *Limiter) noteMoveLocked(slow bool, old int) {
	switch {
	case !slow:
		l.cutEWMA = 0
	case l.emax < old:
		l.cutEWMA = l.ewma
	}
}

// forgetCutWhenIdleLocked drops the reference once nothing waits: the
// burst whose cuts it judged is over, and the next one starts afresh.
func (l *Limiter) forgetCutWhenIdleLocked() {
	if len(l.waiting) == 0 {
		l.cutEWMA = 0
	}
}
