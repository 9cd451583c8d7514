package sbi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
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

// NRFClient registers an NF with the NRF and discovers its peers, caching each
// discovery for the validity period the NRF promised: one lookup per NF type,
// not one per UE.
type NRFClient struct {
	client   *Client
	nrfURI   string
	selfType models.NrfNfManagementNfType
	now      func() time.Time
	locate   NodeTransport // told where discovered peers are; may be nil

	mu    sync.Mutex
	cache map[models.NrfNfManagementNfType]cachedSearch
	group map[models.NrfNfManagementNfType]*inflight
}

type cachedSearch struct {
	profiles []models.NrfNfDiscoveryNfProfile
	expires  time.Time
}

// inflight lets concurrent discoveries of one NF type share one NRF request.
type inflight struct {
	done chan struct{}
	res  []models.NrfNfDiscoveryNfProfile
	err  error
}

// NewNRFClient returns a client of the NRF at nrfURI for an NF of selfType.
func NewNRFClient(c *Client, nrfURI string, selfType models.NrfNfManagementNfType) *NRFClient {
	return &NRFClient{
		client: c, nrfURI: nrfURI, selfType: selfType, now: time.Now,
		cache: map[models.NrfNfManagementNfType]cachedSearch{},
		group: map[models.NrfNfManagementNfType]*inflight{},
	}
}

// Register puts the profile (TS 29.510 5.2.2.2), retrying while the NRF is
// still starting, until ctx ends.
func (n *NRFClient) Register(ctx context.Context, p models.NrfNfManagementNfProfile) error {
	u := n.nrfURI + NFManagementPath + p.NfInstanceId
	for {
		_, err := n.client.Do(ctx, "PUT", u, p, nil)
		if err == nil {
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

// Deregister removes the NF instance (TS 29.510 5.2.2.4).
func (n *NRFClient) Deregister(ctx context.Context, instanceID string) error {
	_, err := n.client.Do(ctx, "DELETE", n.nrfURI+NFManagementPath+instanceID, nil, nil)
	return err
}

// Discover returns the registered NFs of the target type (TS 29.510 5.3.2.2).
func (n *NRFClient) Discover(ctx context.Context, target models.NrfNfManagementNfType) ([]models.NrfNfDiscoveryNfProfile, error) {
	n.mu.Lock()
	if c, ok := n.cache[target]; ok && n.now().Before(c.expires) {
		n.mu.Unlock()
		return c.profiles, nil
	}
	if f, ok := n.group[target]; ok {
		n.mu.Unlock()
		select {
		case <-f.done:
			return f.res, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &inflight{done: make(chan struct{})}
	n.group[target] = f
	n.mu.Unlock()

	f.res, f.err = n.search(ctx, target)
	n.mu.Lock()
	delete(n.group, target)
	n.mu.Unlock()
	close(f.done)
	return f.res, f.err
}

func (n *NRFClient) search(ctx context.Context, target models.NrfNfManagementNfType) ([]models.NrfNfDiscoveryNfProfile, error) {
	q := url.Values{"target-nf-type": {string(target)}, "requester-nf-type": {string(n.selfType)}}
	var res models.SearchResult
	if _, err := n.client.Do(ctx, "GET", n.nrfURI+NFDiscoveryPath+"?"+q.Encode(), nil, &res); err != nil {
		return nil, fmt.Errorf("discover %s: %w", target, err)
	}
	if len(res.NfInstances) == 0 {
		return nil, fmt.Errorf("discover %s: no instance registered", target)
	}
	if n.locate != nil {
		locatePeers(n.locate, res.NfInstances)
	}
	validity := time.Duration(res.ValidityPeriod) * time.Second
	if validity > 0 {
		n.mu.Lock()
		n.cache[target] = cachedSearch{profiles: res.NfInstances, expires: n.now().Add(validity)}
		n.mu.Unlock()
	}
	return res.NfInstances, nil
}

// Forget drops the cached discovery of target, e.g. after its NF stopped answering.
func (n *NRFClient) Forget(target models.NrfNfManagementNfType) {
	n.mu.Lock()
	delete(n.cache, target)
	n.mu.Unlock()
}

// ServiceURI discovers target and returns the base URI (scheme://host:port) of
// the first instance offering service.
func (n *NRFClient) ServiceURI(ctx context.Context, target models.NrfNfManagementNfType, service models.ServiceName) (string, error) {
	profiles, err := n.Discover(ctx, target)
	if err != nil {
		return "", err
	}
	for _, p := range profiles {
		if uri, ok := ServiceBaseURI(p, service); ok {
			return uri, nil
		}
	}
	return "", fmt.Errorf("discover %s: no instance offers %s", target, service)
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
