package nrf

import (
	"encoding/json"
	"sort"
	"sync"

	"github.com/free5gc/openapi/models"
)

// registry holds the registered NF profiles by instance id. Profiles are
// stored and handed out by value copies of the top-level struct; nested
// slices are never mutated after storing, so readers may share them.
type registry struct {
	mu       sync.RWMutex
	profiles map[string]models.NrfNfManagementNfProfile
}

func newRegistry() *registry {
	return &registry{profiles: map[string]models.NrfNfManagementNfProfile{}}
}

// put stores p and says whether it replaced an earlier registration.
func (r *registry) put(p models.NrfNfManagementNfProfile) (replaced bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, replaced = r.profiles[p.NfInstanceId]
	r.profiles[p.NfInstanceId] = p
	return replaced
}

func (r *registry) get(id string) (models.NrfNfManagementNfProfile, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.profiles[id]
	return p, ok
}

// update applies f to the stored profile under the lock; f returns an error
// to leave the profile unchanged.
func (r *registry) update(id string, f func(*models.NrfNfManagementNfProfile) error) (found bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.profiles[id]
	if !ok {
		return false, nil
	}
	if err := f(&p); err != nil {
		return true, err
	}
	r.profiles[id] = p
	return true, nil
}

func (r *registry) remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.profiles[id]
	delete(r.profiles, id)
	return ok
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
