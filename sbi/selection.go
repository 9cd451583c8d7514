package sbi

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/free5gc/openapi/models"
)

// Selection among the instances a discovery returned (TS 29.510
// 6.1.6.2.2/6.1.6.2.3 priority, capacity, load; TS 23.501 6.3.1): lower
// priority first, then higher capacity, then lower load; a service's own
// values take precedence over its profile's. Instances equal on all three
// take turns (round robin), so equal peers share the load.
//
// An instance a call could not reach (Failover) is skipped until the NRF
// speaks of it again (an NFStatusNotify registering it anew) or until
// two heartbeat periods passed: by then the NRF has suspended a dead NF
// and told us, so one still listed was only briefly unreachable.

// candidate is one instance offering the selected service.
type candidate struct {
	id, base                 string
	priority, capacity, load int32
}

// choice remembers which search an authority was picked from, so that a
// call to it that fails can move on to the next instance of that search.
type choice struct {
	q        Query
	key      string
	base, id string
}

// defaultHeartbeat is the NRF's heartbeat period before one is assigned.
const defaultHeartbeat = 10 * time.Second

// ServiceURI returns the base URI (scheme://host:port) of an instance of
// target offering service, picked by Select.
func (n *NRFClient) ServiceURI(ctx context.Context, target models.NrfNfManagementNfType, service models.ServiceName) (string, error) {
	return n.Select(ctx, Query{Target: target, Services: []models.ServiceName{service}})
}

// Select discovers q and returns the base URI of the best instance
// offering q's first service. When every instance known failed, it asks
// the NRF again; when the NRF still lists only those, it tries them anyway.
func (n *NRFClient) Select(ctx context.Context, q Query) (string, error) {
	if q.service() == "" {
		return "", fmt.Errorf("discover %s: the query names no service", q.Target)
	}
	profiles, err := n.Search(ctx, q)
	if err != nil {
		return "", err
	}
	key := n.queryKey(q)
	if base, ok := n.pick(q, key, profiles, true); ok {
		return base, nil
	}
	n.mu.Lock()
	delete(n.cache, key)
	n.mu.Unlock()
	if profiles, err = n.Search(ctx, q); err != nil {
		return "", err
	}
	if base, ok := n.pick(q, key, profiles, true); ok {
		return base, nil
	}
	if base, ok := n.pick(q, key, profiles, false); ok {
		return base, nil
	}
	return "", fmt.Errorf("discover %s: no instance offers %s", q.Target, q.service())
}

// pick ranks profiles and takes the next of the best equal ones.
func (n *NRFClient) pick(q Query, key string, profiles []models.NrfNfDiscoveryNfProfile, skipFailed bool) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ranked := n.rank(profiles, q.service(), skipFailed)
	if len(ranked) == 0 {
		return "", false
	}
	ties := 1
	for ties < len(ranked) && sameRank(ranked[ties], ranked[0]) {
		ties++
	}
	c := ranked[n.turn[key]%uint64(ties)]
	n.turn[key]++
	if u, err := url.Parse(c.base); err == nil {
		n.chosen[u.Host] = choice{q: q, key: key, base: c.base, id: c.id}
	}
	return c.base, true
}

// rank orders the instances offering service best first; n.mu held.
func (n *NRFClient) rank(profiles []models.NrfNfDiscoveryNfProfile, service models.ServiceName, skipFailed bool) []candidate {
	out := make([]candidate, 0, len(profiles))
	for i := range profiles {
		p := &profiles[i]
		if skipFailed && n.stillFailed(p.NfInstanceId) {
			continue
		}
		if c, ok := candidateOf(p, service); ok {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// stillFailed says whether a call to id failed within two heartbeat
// periods; n.mu held.
func (n *NRFClient) stillFailed(id string) bool {
	at, ok := n.failed[id]
	if !ok {
		return false
	}
	hb := n.heartbeat
	if hb <= 0 {
		hb = defaultHeartbeat
	}
	if n.now().Sub(at) < 2*hb {
		return true
	}
	delete(n.failed, id)
	return false
}

// candidateOf reads where and how well p offers service.
func candidateOf(p *models.NrfNfDiscoveryNfProfile, service models.ServiceName) (candidate, bool) {
	base, ok := ServiceBaseURI(*p, service)
	if !ok {
		return candidate{}, false
	}
	c := candidate{id: p.NfInstanceId, base: base, priority: p.Priority, capacity: p.Capacity, load: p.Load}
	for _, s := range p.NfServices {
		if s.ServiceName != service {
			continue
		}
		// TS 29.510 6.1.6.2.3: the service's priority, capacity and load,
		// when present, take precedence over the profile's.
		if s.Priority != 0 {
			c.priority = s.Priority
		}
		if s.Capacity != 0 {
			c.capacity = s.Capacity
		}
		if s.Load != 0 {
			c.load = s.Load
		}
		break
	}
	return c, true
}

func better(a, b candidate) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.capacity != b.capacity {
		return a.capacity > b.capacity
	}
	return a.load < b.load
}

func sameRank(a, b candidate) bool {
	return a.priority == b.priority && a.capacity == b.capacity && a.load == b.load
}

// Failover is told that a request to rawURL failed at the transport level
// (no answer: refused, reset, timed out). It marks the instance serving
// there failed and returns rawURL moved to the next instance of the search
// it was picked from, or false when there is none or rawURL was not
// picked by Select (the NRF itself, a callback URI).
func (n *NRFClient) Failover(ctx context.Context, rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	n.mu.Lock()
	ch, ok := n.chosen[u.Host]
	if ok {
		n.failed[ch.id] = n.now()
	}
	n.mu.Unlock()
	if !ok {
		return "", false
	}
	next, err := n.Select(ctx, ch.q)
	if err != nil || next == ch.base {
		return "", false
	}
	return moveURL(rawURL, u, ch.base, next), true
}

// moveURL is rawURL with the base it was built on replaced by next; a URL
// not under base (a link the peer gave) keeps its path, on next's host.
func moveURL(rawURL string, u *url.URL, base, next string) string {
	if rest, ok := strings.CutPrefix(rawURL, base); ok {
		return next + rest
	}
	nu, err := url.Parse(next)
	if err != nil {
		return next
	}
	moved := *u
	moved.Scheme, moved.Host = nu.Scheme, nu.Host
	return moved.String()
}
