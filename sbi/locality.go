package sbi

import (
	"net"
	"net/url"
	"strconv"

	"github.com/free5gc/openapi/models"
)

// A core may span nodes: an NF reaches peers on its own node over X-IO and
// peers elsewhere over TCP. Which peer is where comes from the NRF: each NF
// registers its node as its profile's locality, and every discovery tells
// the transport which of the peers found share this NF's locality.
//
// locality (TS 29.510 6.1.6.2.2) is the field for it: "operator defined
// information about the location of the NF instance (e.g. geographic
// location, data center)", which a consumer may use to select instances
// located with it; an L25GC+ node is the finest such location: the NFs
// attached to one X-IO shared memory. customInfo is for custom NF types,
// and vendor-specific features are keyed by an IANA enterprise number
// this project does not have.

// NodeTransport is a Transport that carries requests to peers on its own
// node differently from requests to peers elsewhere (X-IO's hybrid).
type NodeTransport interface {
	Transport
	// Locality names this NF's node, for its NRF profile.
	Locality() string
	// PeersOnNode learns where peers serve: authority (host:port) ->
	// whether that peer is on this node.
	PeersOnNode(peers map[string]bool)
	// Instrument counts the requests sent over each path in m.
	Instrument(m *Metrics)
}

// Locate has every discovery tell nt which of the peers found are on its
// node (their profile's locality is nt's). Call it before the first
// discovery.
func (n *NRFClient) Locate(nt NodeTransport) { n.locate = nt }

// locatePeers passes what profiles say about their nodes to nt. A profile
// without a locality is an NF without X-IO (or another core's): elsewhere.
func locatePeers(nt NodeTransport, profiles []models.NrfNfDiscoveryNfProfile) {
	self := nt.Locality()
	peers := map[string]bool{}
	for _, p := range profiles {
		for _, a := range Authorities(p) {
			peers[a] = self != "" && p.Locality == self
		}
	}
	if len(peers) > 0 {
		nt.PeersOnNode(peers)
	}
}

// Authorities lists where a discovered profile serves, as the host:port of
// request URLs: each service's apiPrefix and IP endpoints (TS 29.510
// 6.1.6.2.3).
func Authorities(p models.NrfNfDiscoveryNfProfile) []string {
	var out []string
	for _, s := range p.NfServices {
		if u, err := url.Parse(s.ApiPrefix); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
		for _, ep := range s.IpEndPoints {
			if ep.Ipv4Address != "" && ep.Port != 0 {
				out = append(out, net.JoinHostPort(ep.Ipv4Address, strconv.Itoa(int(ep.Port))))
			}
		}
	}
	return out
}
