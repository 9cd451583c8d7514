package nrf

import (
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"
)

// registry holds the registered NF profiles by instance id, and when each
// was last heard of (registration or heartbeat, TS 29.510 5.2.2.3.2).
// Profiles are stored and handed out by value copies of the top-level
// struct; nested slices are never mutated after storing, so readers may
// share them.
type registry struct {
	mu       sync.RWMutex
	profiles map[string]models.NrfNfManagementNfProfile
	seen     map[string]time.Time
}

func newRegistry() *registry {
	return &registry{profiles: map[string]models.NrfNfManagementNfProfile{}, seen: map[string]time.Time{}}
}

// put stores p, heard of at now, and returns the profile it replaced.
func (r *registry) put(p models.NrfNfManagementNfProfile, now time.Time) (old *models.NrfNfManagementNfProfile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.profiles[p.NfInstanceId]; ok {
		old = &prev
	}
	r.profiles[p.NfInstanceId] = p
	r.seen[p.NfInstanceId] = now
	return old
}

func (r *registry) get(id string) (models.NrfNfManagementNfProfile, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.profiles[id]
	return p, ok
}

// update applies f to the stored profile under the lock and counts as
// hearing of the NF at now; f returns an error to leave the profile
// unchanged. It returns the profile before and after.
func (r *registry) update(id string, now time.Time, f func(*models.NrfNfManagementNfProfile) error) (before, after models.NrfNfManagementNfProfile, found bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before, found = r.profiles[id]
	if !found {
		return before, before, false, nil
	}
	after = before
	if err := f(&after); err != nil {
		return before, before, true, err
	}
	r.profiles[id] = after
	r.seen[id] = now
	return before, after, true, nil
}

// remove deletes the instance and returns its profile.
func (r *registry) remove(id string) (models.NrfNfManagementNfProfile, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.profiles[id]
	delete(r.profiles, id)
	delete(r.seen, id)
	return p, ok
}

// suspendSilent marks SUSPENDED every REGISTERED instance not heard of
// within its heartbeat period plus grace (TS 29.510 5.2.2.3.2), and
// returns the profiles it suspended.
func (r *registry) suspendSilent(now time.Time, grace func(period time.Duration) time.Duration) []models.NrfNfManagementNfProfile {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []models.NrfNfManagementNfProfile
	for id, p := range r.profiles {
		period := time.Duration(p.HeartBeatTimer) * time.Second
		if p.NfStatus != models.NrfNfManagementNfStatus_REGISTERED || period <= 0 {
			continue
		}
		if now.Sub(r.seen[id]) <= period+grace(period) {
			continue
		}
		p.NfStatus = models.NrfNfManagementNfStatus_SUSPENDED
		r.profiles[id] = p
		out = append(out, p)
	}
	return out
}

// match returns the profiles keep accepts, in instance id order so that
// answers are stable.
func (r *registry) match(keep func(*models.NrfNfManagementNfProfile) bool) []models.NrfNfManagementNfProfile {
	r.mu.RLock()
	out := make([]models.NrfNfManagementNfProfile, 0, len(r.profiles))
	for _, p := range r.profiles {
		if keep(&p) {
			out = append(out, p)
		}
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].NfInstanceId < out[j].NfInstanceId })
	return out
}

// discoveryProfile converts a management profile into the discovery form
// (TS 29.510 6.2.6.2.3 NFProfile): the two are the same JSON object, split
// into two Go types by the OpenAPI generator, so JSON carries every field.
func discoveryProfile(p models.NrfNfManagementNfProfile) (models.NrfNfDiscoveryNfProfile, error) {
	var out models.NrfNfDiscoveryNfProfile
	b, err := json.Marshal(p)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}
