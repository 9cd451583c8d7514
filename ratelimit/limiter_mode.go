package ratelimit

// The limiter's mode switched at run time (the AMF's limiter admin
// endpoint, nf/amf/limiter_mode.go). Why: on a shared machine, settings
// compared on fresh cores minutes apart see different loads, and the
// spread between runs was as large as the spread between settings (stop
// 12, Fig. 3). One core whose mode changes between batches lets every
// setting see the same conditions in turn (bench pdu --rounds).
//
// Adaptive keeps what it learnt while another mode runs: E_max is put
// back where adaptive left it, so a round-robin of settings measures the
// adaptive limiter as a core running it alone would, not one that
// restarts from its initial limit at every visit.

import "fmt"

// startLimit is E_max of a fresh limiter in its configured mode.
func (l *Limiter) startLimit() int {
	if l.cfg.Mode == ModeFixed && l.cfg.Fixed > 0 {
		return l.cfg.Fixed
	}
	return holdStart(l.cfg, l.initialLimit())
}

// SetMode switches the mode ("adaptive", "off", "fixed:N"; ParseMode's
// error for anything else, the limiter unchanged). Requests waiting for a
// slot start at once if the new limit has room for them.
func (l *Limiter) SetMode(setting string) error {
	mode, n, err := ParseMode(setting)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.switchLocked(mode, n)
	ready := l.admitLocked()
	l.mu.Unlock()
	startAll(ready)
	return nil
}

// switchLocked moves to mode (n: the fixed limit), keeping adaptive's
// E_max for its return.
func (l *Limiter) switchLocked(mode Mode, n int) {
	if l.cfg.Mode == ModeAdaptive && mode != ModeAdaptive {
		l.endBusyLocked() // a goodput probe's level is not adaptive's E_max
		l.adaptiveEMax = l.emax
	}
	wasAdaptive := l.cfg.Mode == ModeAdaptive
	l.cfg.Mode = mode
	switch mode {
	case ModeFixed:
		l.cfg.Fixed, l.emax = n, n
	case ModeAdaptive:
		if wasAdaptive {
			return
		}
		l.resumeAdaptiveLocked()
	}
}

// resumeAdaptiveLocked puts back adaptive's E_max (its start the first
// time) and forgets the slow start's and the cut guard's memory of a
// load another mode shaped; the hold-time bases (the shortest holds seen)
// stay: they describe the procedures, not the mode.
func (l *Limiter) resumeAdaptiveLocked() {
	l.emax = l.adaptiveEMax
	if l.emax == 0 {
		l.emax = l.startLimit()
	}
	l.ramping, l.rampFrom, l.cutEWMA = l.cfg.Growth > 1, 0, 0
	l.hold.round = holdRound{}
}

// settingLocked is the mode as ParseMode reads it.
func (l *Limiter) settingLocked() string {
	if l.cfg.Mode == ModeFixed {
		return fmt.Sprintf("fixed:%d", l.emax)
	}
	return l.cfg.Mode.String()
}
