package sbi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"
)

// NRF paths, TS 29.510 6.1.3 (NFManagement) and 6.2.3 (NFDiscovery).
const (
	NFManagementPath = "/nnrf-nfm/v1/nf-instances/"
	NFDiscoveryPath  = "/nnrf-disc/v1/nf-instances"
)

// NRFClient registers an NF with the NRF, keeps its registration alive and
// discovers its peers. Each discovery is cached under its whole query for
// the validity period the NRF promised (one lookup per query, not one per
// UE); among the instances found, Select picks one per call and Failover
// moves a call to the next one when an instance stops answering.
type NRFClient struct {
	client   *Client
	nrfURI   string
	selfType models.NrfNfManagementNfType
	now      func() time.Time
	locate   NodeTransport // told where discovered peers are; may be nil

	mu         sync.Mutex
	cache      map[string]*cachedSearch // by query key (queryKey)
	group      map[string]*inflight
	turn       map[string]uint64    // round robin among equal instances, by query key
	failed     map[string]time.Time // instance id -> when a call to it failed
	chosen     map[string]choice    // authority -> the search it was picked from
	self       models.NrfNfManagementNfProfile
	heartbeat  time.Duration // heartBeatTimer the NRF assigned (TS 29.510 6.1.6.2.2)
	notifyURI  string        // where the NRF sends NFStatusNotify; "" = no subscriptions
	subscribed map[models.NrfNfManagementNfType]bool
}

type cachedSearch struct {
	q        Query
	profiles []models.NrfNfDiscoveryNfProfile
	fetched  time.Time
	expires  time.Time
	// ranked holds, per service, the instances of profiles offering it,
	// best first, as rank orders them when none failed: built on the
	// first selection, so the next ones skip reading every profile and
	// sorting. Whoever changes profiles clears it.
	ranked map[models.ServiceName][]candidate
}

// inflight lets concurrent discoveries of one query share one NRF request.
type inflight struct {
	done chan struct{}
	res  []models.NrfNfDiscoveryNfProfile
	err  error
}

// NewNRFClient returns a client of the NRF at nrfURI for an NF of selfType.
func NewNRFClient(c *Client, nrfURI string, selfType models.NrfNfManagementNfType) *NRFClient {
	return &NRFClient{
		client: c, nrfURI: nrfURI, selfType: selfType, now: time.Now,
		cache: map[string]*cachedSearch{}, group: map[string]*inflight{}, turn: map[string]uint64{},
		failed: map[string]time.Time{}, chosen: map[string]choice{},
		subscribed: map[models.NrfNfManagementNfType]bool{},
	}
}

// Register puts the profile (TS 29.510 5.2.2.2), retrying while the NRF is
// still starting, until ctx ends. It keeps the heartBeatTimer the NRF
// assigned in its answer (5.2.2.2.2) for KeepAlive.
func (n *NRFClient) Register(ctx context.Context, p models.NrfNfManagementNfProfile) error {
	u := n.nrfURI + NFManagementPath + p.NfInstanceId
	for {
		var assigned models.NrfNfManagementNfProfile
		_, err := n.client.Do(ctx, "PUT", u, p, &assigned)
		if err == nil {
			n.registered(p, assigned.HeartBeatTimer)
			return nil
		}
		var pe *ProblemError
		if errors.As(err, &pe) { // the NRF answered: retrying will not help
			return fmt.Errorf("NRF registration: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("NRF registration: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// registered records the registration. A registration may follow an NRF
// restart (KeepAlive's 404): that NRF knows no subscription and its
// discoveries may differ, so both start afresh.
func (n *NRFClient) registered(p models.NrfNfManagementNfProfile, heartbeatSeconds int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.self = p
	n.heartbeat = time.Duration(heartbeatSeconds) * time.Second
	clear(n.subscribed)
	clear(n.cache)
}

// Deregister removes the NF instance (TS 29.510 5.2.2.4).
func (n *NRFClient) Deregister(ctx context.Context, instanceID string) error {
	_, err := n.client.Do(ctx, "DELETE", n.nrfURI+NFManagementPath+instanceID, nil, nil)
	return err
}

// Discover returns the registered NFs of the target type (TS 29.510 5.3.2.2).
func (n *NRFClient) Discover(ctx context.Context, target models.NrfNfManagementNfType) ([]models.NrfNfDiscoveryNfProfile, error) {
	return n.Search(ctx, Query{Target: target})
}

// Search returns the NF instances answering q (TS 29.510 5.3.2.2), from
// the cache while the NRF's validity period lasts; concurrent searches of
// one query share one NRF request.
func (n *NRFClient) Search(ctx context.Context, q Query) ([]models.NrfNfDiscoveryNfProfile, error) {
	return n.searchKeyed(ctx, q, n.queryKey(q))
}

// searchKeyed is Search of q, whose queryKey is key.
func (n *NRFClient) searchKeyed(ctx context.Context, q Query, key string) ([]models.NrfNfDiscoveryNfProfile, error) {
	n.mu.Lock()
	if c, ok := n.cache[key]; ok && n.now().Before(c.expires) {
		n.mu.Unlock()
		return c.profiles, nil
	}
	if f, ok := n.group[key]; ok {
		n.mu.Unlock()
		select {
		case <-f.done:
			return f.res, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &inflight{done: make(chan struct{})}
	n.group[key] = f
	n.mu.Unlock()

	f.res, f.err = n.search(ctx, q, key)
	n.mu.Lock()
	delete(n.group, key)
	n.mu.Unlock()
	close(f.done)
	return f.res, f.err
}

// queryKey is the cache key of q: its whole query string, parameters
// sorted (Query.encode).
func (n *NRFClient) queryKey(q Query) string { return q.encode(n.selfType) }

func (n *NRFClient) search(ctx context.Context, q Query, key string) ([]models.NrfNfDiscoveryNfProfile, error) {
	var res models.SearchResult
	if _, err := n.client.Do(ctx, "GET", n.nrfURI+NFDiscoveryPath+"?"+key, nil, &res); err != nil {
		return nil, fmt.Errorf("discover %s: %w", q.Target, err)
	}
	n.subscribe(ctx, q.Target)
	if len(res.NfInstances) == 0 {
		return nil, fmt.Errorf("discover %s: no instance registered", q.Target)
	}
	if n.locate != nil {
		locatePeers(n.locate, res.NfInstances)
	}
	validity := time.Duration(res.ValidityPeriod) * time.Second
	if validity > 0 {
		n.mu.Lock()
		now := n.now()
		n.cache[key] = &cachedSearch{q: q, profiles: res.NfInstances, fetched: now, expires: now.Add(validity)}
		n.mu.Unlock()
	}
	return res.NfInstances, nil
}

// Forget drops the cached discoveries of target, e.g. after its NF stopped answering.
func (n *NRFClient) Forget(target models.NrfNfManagementNfType) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forgetType(target)
}

// forgetType drops every cached search for target; n.mu held.
func (n *NRFClient) forgetType(target models.NrfNfManagementNfType) {
	for key, c := range n.cache {
		if c.q.Target == target {
			delete(n.cache, key)
		}
	}
}

// ServiceBaseURI picks where a discovered profile offers service: its
// apiPrefix, else its first IP endpoint (TS 29.510 6.1.6.2.3).
func ServiceBaseURI(p models.NrfNfDiscoveryNfProfile, service models.ServiceName) (string, bool) {
	for _, s := range p.NfServices {
		if s.ServiceName != service {
			continue
		}
		if s.ApiPrefix != "" {
			return s.ApiPrefix, true
		}
		scheme := string(s.Scheme)
		if scheme == "" {
			scheme = "http"
		}
		for _, ep := range s.IpEndPoints {
			if ep.Ipv4Address != "" && ep.Port != 0 {
				return scheme + "://" + net.JoinHostPort(ep.Ipv4Address, strconv.Itoa(int(ep.Port))), true
			}
		}
	}
	return "", false
}

// Profile builds the NRF profile of an NF serving services at ip:port.
func Profile(id string, nfType models.NrfNfManagementNfType, ip string, port int, plmn models.PlmnId, services ...models.ServiceName) models.NrfNfManagementNfProfile {
	p := models.NrfNfManagementNfProfile{
		NfInstanceId: id, NfType: nfType, NfStatus: models.NrfNfManagementNfStatus_REGISTERED,
		PlmnList: []models.PlmnId{plmn}, Ipv4Addresses: []string{ip},
	}
	base := "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
	for i, s := range services {
		p.NfServices = append(p.NfServices, models.NrfNfManagementNfService{
			ServiceInstanceId: strconv.Itoa(i), ServiceName: s,
			Versions:        []models.NfServiceVersion{{ApiVersionInUri: "v1", ApiFullVersion: "1.0.0"}},
			Scheme:          models.UriScheme_HTTP,
			NfServiceStatus: models.NfServiceStatus_REGISTERED,
			ApiPrefix:       base,
			IpEndPoints:     []models.IpEndPoint{{Ipv4Address: ip, Port: int32(port), Transport: models.NrfNfManagementTransportProtocol_TCP}},
		})
	}
	return p
}
