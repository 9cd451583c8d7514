// Package upfc is UPF-C, the control side of the split UPF (DESIGN.md
// "User plane"): it terminates N4 (PFCP, TS 29.244) from the SMF and
// writes each session's rules, whole, into the rule tables UPF-U forwards
// with (rules.Table: upf/shm's shared memory, or rules.MemTable).
//
// It serves PFCP over UDP at upf.c.pfcp_addr, and, when the node's SBI
// runs over X-IO, also over an X-IO datagram socket of the same name, so
// an SMF on this node skips the kernel (pfcpx.Addr says which an SMF
// uses). It has no SBI and registers with no NRF; /metrics and /healthz
// are on its metrics port.
//
// Every request is checked against TS 29.244 before anything changes: a
// mandatory IE missing gets cause 66 naming it, an incorrect one 69, a
// session it does not know 65, rules that do not fit together 73 with
// the failed rule, a session beyond upf.max_sessions 75 (No resources
// available); a malformed message never stops it. A modification is
// applied to a copy (Remove, then Update, then Create) and installed
// whole, or not at all.
//
// Restart recovery: UPF-C recovers the sessions from the rule tables.
// UPF-U keeps forwarding with the tables while UPF-C is down (SIGKILL
// included); when UPF-C starts it reads every session back
// (Table.Sessions), serves them again under their UP SEIDs, so the SMF's
// later modifications and deletions work unchanged, and its SEID and TEID
// allocators skip the recovered ones. The SMF does not re-establish
// anything. PFCP associations are not recovered: the SMF's next
// establishment gets cause 72 (No established PFCP Association), and
// pfcpx.Client then sets the association up again and repeats it;
// modifications and deletions of existing sessions need no association.
package upfc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/gopool"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// Options are what the process that runs UPF-C plugs in.
type Options struct {
	// Table is where the rules go: upf/shm's tables in a real node;
	// rules.NewMemTable() when nil.
	Table rules.Table
	// Listen opens a PFCP socket (pfcpx.Listen when nil): tests put a
	// fault in front.
	Listen func(network, addr string) (net.PacketConn, error)
}

// NF is UPF-C.
type NF struct {
	env    *nf.Env
	opts   Options
	server *Server
	mu     sync.Mutex // nodes
	nodes  []*pfcpx.Node
	wg     sync.WaitGroup
	// stopWatch ends the watch of UPF-U's downlink data notes.
	stopWatch context.CancelFunc
	// reports runs the Session Reports (report.go) on kept goroutines:
	// a fresh one grew its stack in the PFCP encoder for each report of
	// a burst of idle UEs' downlink data.
	reports *gopool.Pool
}

// New builds UPF-C over an in-memory table (until the registry plugs in
// upf/shm).
func New(env *nf.Env) (*NF, error) { return NewWithOptions(env, Options{}) }

// NewWithOptions builds UPF-C; it recovers the sessions the table holds.
func NewWithOptions(env *nf.Env, o Options) (*NF, error) {
	if o.Table == nil {
		o.Table = rules.NewMemTable()
	}
	if o.Listen == nil {
		o.Listen = pfcpx.Listen
	}
	cfg := env.Config
	n3, err := netip.ParsePrefix(cfg.UPF.N3.IP)
	if err != nil || !n3.Addr().Is4() {
		return nil, fmt.Errorf("upf-c: upf.n3.ip %q: want an IPv4 address with prefix such as 10.100.0.1/24", cfg.UPF.N3.IP)
	}
	nodeID, err := nodeIDOf(cfg.UPF.C.PFCPAddr, n3.Addr())
	if err != nil {
		return nil, err
	}
	srv, err := NewServer(ServerConfig{Table: o.Table, N3: n3.Addr(), NodeID: nodeID, MaxSessions: cfg.UPF.MaxSessions,
		Log: env.Log, Metrics: NewMetrics(env.Registry), Tracing: env.Tracing})
	if err != nil {
		return nil, err
	}
	return &NF{env: env, opts: o, server: srv, reports: gopool.New(0)}, nil
}

// nodeIDOf is UPF-C's Node ID: the IP of its PFCP address, or, when that
// is a wildcard, its N3 address.
func nodeIDOf(pfcpAddr string, n3 netip.Addr) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(pfcpAddr)
	if err != nil || !ap.Addr().Is4() {
		return netip.Addr{}, fmt.Errorf("upf-c: upf.c.pfcp_addr %q: want IPv4:port such as 127.0.0.1:8805", pfcpAddr)
	}
	if ap.Addr().IsUnspecified() {
		return n3, nil
	}
	return ap.Addr(), nil
}

// Server is UPF-C's PFCP side.
func (n *NF) Server() *Server { return n.server }

// Handler is nil: UPF-C serves no SBI.
func (n *NF) Handler() http.Handler { return nil }

// Profile is empty: UPF-C registers with no NRF (the SMF finds it by
// configuration, upf.c.pfcp_addr).
func (n *NF) Profile() models.NrfNfManagementNfProfile { return models.NrfNfManagementNfProfile{} }

// Start serves N4 over UDP, and over X-IO when the node's SBI does.
func (n *NF) Start(ctx context.Context) error {
	cfg := n.env.Config
	networks := []string{pfcpx.NetUDP}
	if pfcpx.OverXIO(cfg) {
		networks = append(networks, pfcpx.NetXIO)
	}
	for _, network := range networks {
		pc, err := n.opts.Listen(network, cfg.UPF.C.PFCPAddr)
		if err != nil {
			n.Stop(ctx)
			return fmt.Errorf("upf-c: N4 over %s at %s: %w", network, cfg.UPF.C.PFCPAddr, err)
		}
		n.serve(pfcpx.NewNode(pc, pfcpx.NodeConfig{
			T1: cfg.UPF.C.T1, N1: cfg.UPF.C.N1, Recovery: n.server.cfg.Recovery, NodeID: n.server.cfg.NodeID,
			Handler: n.server, Log: n.env.Log, Observe: n.server.cfg.Metrics.observe,
		}))
		n.env.Log.Info("N4 serving", "network", network, "addr", pc.LocalAddr(), "sessions", n.server.Sessions())
	}
	if up, ok := n.opts.Table.(UserPlane); ok {
		ctx, cancel := context.WithCancel(context.Background())
		n.stopWatch = cancel
		n.wg.Add(1)
		go n.watchDownlinkData(ctx, up)
	}
	return nil
}

func (n *NF) serve(node *pfcpx.Node) {
	n.mu.Lock()
	n.nodes = append(n.nodes, node)
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := node.Serve(); err != nil && !errors.Is(err, net.ErrClosed) {
			n.env.Log.Error("N4", "err", err)
		}
	}()
}

// Stop closes the N4 sockets. The rules stay in the tables: UPF-U goes
// on forwarding, and the next UPF-C recovers them.
func (n *NF) Stop(context.Context) {
	if n.stopWatch != nil {
		n.stopWatch()
	}
	n.mu.Lock()
	for _, node := range n.nodes {
		_ = node.Close()
	}
	n.mu.Unlock()
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	n.mu.Lock()
	n.nodes = nil
	n.mu.Unlock()
}

// N4Addrs are the addresses UPF-C serves N4 at, as pfcpx.Client takes
// them ("udp:IP:port", "xio:NAME").
func (n *NF) N4Addrs() []string {
	var out []string
	for _, node := range n.nodes {
		a := node.LocalAddr()
		out = append(out, a.Network()+":"+a.String())
	}
	return out
}
