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
// and told us, so one still listed was only briefly unreachable. When
// every instance known failed, the NRF is asked once more (a new one may
// have come); when it names no other, the instance that failed longest
// ago is tried: a transient failure of a live instance (a reset
// connection) must not leave its consumers with none.

// candidate is one instance offering the selected service.
type candidate struct {
	id, base                 string
	priority, capacity, load int32
	failedAt                 time.Time // zero unless a call to it failed lately
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
// offering q's first service.
func (n *NRFClient) Select(ctx context.Context, q Query) (string, error) {
	return n.selectExcept(ctx, q, "")
}

// selectExcept selects among the instances but except (an instance id).
func (n *NRFClient) selectExcept(ctx context.Context, q Query, except string) (string, error) {
	if q.service() == "" {
		return "", fmt.Errorf("discover %s: the query names no service", q.Target)
	}
	key := n.queryKey(q)
	for refreshed := false; ; refreshed = true {
		profiles, err := n.searchKeyed(ctx, q, key)
		if err != nil {
			return "", err
		}
		base, stale := n.pick(q, key, profiles, except)
		if base != "" {
			return base, nil
		}
		if !stale || refreshed {
			return "", fmt.Errorf("discover %s: no instance offers %s", q.Target, q.service())
		}
		n.mu.Lock()
		delete(n.cache, key)
		n.mu.Unlock()
	}
}

// pick takes the next of the best equal instances that did not fail; when
// none is left it says whether the cached answer is stale (ask the NRF
// again) or takes the one that failed longest ago.
func (n *NRFClient) pick(q Query, key string, profiles []models.NrfNfDiscoveryNfProfile, except string) (base string, stale bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	healthy, fast := n.rankedFast(key, profiles, q.service(), except)
	var failed []candidate
	if !fast {
		healthy, failed = n.rank(profiles, q.service(), except)
	}
	if len(healthy) == 0 {
		sort.SliceStable(failed, func(i, j int) bool { return failed[i].failedAt.Before(failed[j].failedAt) })
		// A cached answer emptied by notifications, or older than the
		// last failure, is worth asking the NRF again.
		if c, ok := n.cache[key]; ok && (len(failed) == 0 || c.fetched.Before(failed[len(failed)-1].failedAt)) {
			return "", true
		}
		if len(failed) == 0 {
			return "", false
		}
		return n.chose(q, key, failed[0]), false
	}
	ties := 1
	for ties < len(healthy) && sameRank(healthy[ties], healthy[0]) {
		ties++
	}
	c := healthy[n.turn[key]%uint64(ties)]
	n.turn[key]++
	return n.chose(q, key, c), false
}

// chose remembers where c was picked from, for Failover; n.mu held.
func (n *NRFClient) chose(q Query, key string, c candidate) string {
	a := authorityOf(c.base)
	if old, ok := n.chosen[a]; ok && old.id == c.id && old.key == key && old.base == c.base {
		return c.base // remembered by an earlier pick of the same search
	}
	n.chosen[a] = choice{q: q, key: key, base: c.base, id: c.id}
	return c.base
}

// rankedFast is rank's answer kept with the cached search of key, when
// profiles is that search's answer, no instance failed lately and none is
// excepted: the common case, a selection per SBI call. Otherwise ok is
// false and rank must look at each profile. n.mu held.
func (n *NRFClient) rankedFast(key string, profiles []models.NrfNfDiscoveryNfProfile, service models.ServiceName, except string) (healthy []candidate, ok bool) {
	c, cached := n.cache[key]
	if !cached || except != "" || len(n.failed) > 0 || len(profiles) == 0 ||
		len(c.profiles) != len(profiles) || &c.profiles[0] != &profiles[0] {
		return nil, false
	}
	if r, ok := c.ranked[service]; ok {
		return r, true
	}
	healthy, _ = n.rank(profiles, service, "")
	if c.ranked == nil {
		c.ranked = map[models.ServiceName][]candidate{}
	}
	c.ranked[service] = healthy
	return healthy, true
}

// rank orders the instances offering service best first, the ones that
// failed lately apart; n.mu held.
func (n *NRFClient) rank(profiles []models.NrfNfDiscoveryNfProfile, service models.ServiceName, except string) (healthy, failed []candidate) {
	healthy = make([]candidate, 0, len(profiles))
	for i := range profiles {
		p := &profiles[i]
		if p.NfInstanceId == except && except != "" {
			continue
		}
		c, ok := candidateOf(p, service)
		if !ok {
			continue
		}
		if at, ok := n.stillFailed(p.NfInstanceId); ok {
			c.failedAt = at
			failed = append(failed, c)
			continue
		}
		healthy = append(healthy, c)
	}
	sort.SliceStable(healthy, func(i, j int) bool { return better(healthy[i], healthy[j]) })
	return healthy, failed
}

// stillFailed says when a call to id failed, if within two heartbeat
// periods; n.mu held.
func (n *NRFClient) stillFailed(id string) (time.Time, bool) {
	at, ok := n.failed[id]
	if !ok {
		return at, false
	}
	hb := n.heartbeat
	if hb <= 0 {
		hb = defaultHeartbeat
	}
	if n.now().Sub(at) < 2*hb {
		return at, true
	}
	delete(n.failed, id)
	return time.Time{}, false
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

// authorityOf is the host:port of a base URI (scheme://host:port[/path]),
// as url.URL.Host has it; cheaper than url.Parse on every selection.
func authorityOf(base string) string {
	_, rest, ok := strings.Cut(base, "://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
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
	next, err := n.selectExcept(ctx, ch.q, ch.id)
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
