package ausf

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// authContext is one 5G AKA in progress (TS 33.501 6.1.3.2 step 4: the
// AUSF stores XRES* and KSEAF until the SEAF sends RES*).
type authContext struct {
	supi     string
	snn      string
	xresStar []byte
	kseaf    []byte
	expires  time.Time
}

// authContexts holds the authentications in progress by authCtxId. Each is
// taken at most once; expired ones are swept as new ones are added, so
// memory is bounded by the rate of authentications times their lifetime.
type authContexts struct {
	lifetime time.Duration
	now      func() time.Time

	mu        sync.Mutex
	m         map[string]*authContext
	nextSweep time.Time
}

func newAuthContexts(lifetime time.Duration, now func() time.Time) *authContexts {
	return &authContexts{lifetime: lifetime, now: now, m: map[string]*authContext{}}
}

// add stores c under a fresh random id (128 bits: not guessable, so only
// the AMF that started the authentication can confirm it).
func (a *authContexts) add(c *authContext) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	id := hex.EncodeToString(b[:])
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	c.expires = now.Add(a.lifetime)
	a.m[id] = c
	if !now.Before(a.nextSweep) {
		a.sweep(now)
	}
	return id
}

// sweep drops expired contexts; it runs at most once per lifetime.
func (a *authContexts) sweep(now time.Time) {
	for id, c := range a.m {
		if !now.Before(c.expires) {
			delete(a.m, id)
		}
	}
	a.nextSweep = now.Add(a.lifetime)
}

// take removes and returns the live context id, or nil.
func (a *authContexts) take(id string) *authContext {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.m[id]
	delete(a.m, id)
	if c == nil || !a.now().Before(c.expires) {
		return nil
	}
	return c
}

func (a *authContexts) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}
