package n2

import "time"

// lazyTimer is a protocol timer (T3-rtx, the delayed SACK) that is cheap
// to start and stop once per message. Setting a Go timer earlier than the
// runtime's next wake-up interrupts the thread blocked in epoll (an
// eventfd write and a wake of another CPU, a VM exit on this kind of
// host); per message that cost as much as the message. So the Go timer
// stays armed and only the deadline moves: stop just clears it, and a
// firing that comes before the deadline arms again for what remains.
// Its owner's lock guards it.
type lazyTimer struct {
	t        *time.Timer
	deadline time.Time // zero: stopped
	fireAt   time.Time // when t is due to fire; zero: not armed
}

func newLazyTimer(f func()) lazyTimer {
	t := time.AfterFunc(time.Hour, f)
	t.Stop()
	return lazyTimer{t: t}
}

// set (re)starts the timer to expire d after now.
func (l *lazyTimer) set(now time.Time, d time.Duration) {
	l.deadline = now.Add(d)
	if l.fireAt.IsZero() || l.deadline.Before(l.fireAt) {
		l.fireAt = l.deadline
		l.t.Reset(d)
	}
}

// stop cancels the expiry; the Go timer may still fire and find nothing due.
func (l *lazyTimer) stop() { l.deadline = time.Time{} }

// kill stops the timer for good.
func (l *lazyTimer) kill() {
	l.deadline, l.fireAt = time.Time{}, time.Time{}
	l.t.Stop()
}

func (l *lazyTimer) running() bool { return !l.deadline.IsZero() }

// due is what the timer's function asks first: whether the deadline has
// passed (the timer then stops), else it arms again for the rest.
func (l *lazyTimer) due(now time.Time) bool {
	l.fireAt = time.Time{}
	if l.deadline.IsZero() {
		return false
	}
	if now.Before(l.deadline) {
		l.fireAt = l.deadline
		l.t.Reset(l.deadline.Sub(now))
		return false
	}
	l.deadline = time.Time{}
	return true
}
