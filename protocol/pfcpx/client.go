package pfcpx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/upf/rules"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// NodeID is the SMF's Node ID and the address of its CP F-SEIDs
	// (TS 29.244 8.2.37, 8.2.38); 127.0.0.1 when unset.
	NodeID netip.Addr
	T1     time.Duration // DefaultT1 when 0
	N1     int           // DefaultN1 when 0
	Log    *slog.Logger
	// UDPAddr is where the client's UDP socket binds (":0" when unset).
	UDPAddr string
	// XIOAddr is the name of its X-IO socket ("pfcp-cp-<pid>-<n>" when
	// unset).
	XIOAddr string
}

// Client is the SMF's side of N4 (rules.N4): it sets up a PFCP
// association with a UPF on first use (TS 29.244 6.2.6) and establishes,
// modifies and deletes sessions there (7.5). A UPF's rejection is a
// *rules.CauseError; a UPF that does not answer (T1 x N1) a
// *TimeoutError.
type Client struct {
	cfg      ClientConfig
	recovery time.Time

	mu     sync.Mutex
	nodes  map[string]*Node // by network
	assocs map[string]*association
	seid   atomic.Uint64
	// onReport handles the UPFs' Session Reports (client_report.go);
	// upSEIDs maps the CP SEIDs of established sessions to the UPF's;
	// cpSEIDs is its inverse, so a deletion forgets its session without a
	// scan (each UPF allocates its own UP SEIDs, so one alone does not
	// name a session).
	onReport rules.ReportHandler
	upSEIDs  map[uint64]upSession
	cpSEIDs  map[upSession]uint64
}

// upSession names a session as a UPF does: its UP SEID at that UPF.
type upSession struct {
	upf    string
	upSEID uint64
}

var _ rules.N4 = (*Client)(nil)

type association struct {
	mu       sync.Mutex
	up       bool
	recovery time.Time // the UPF's Recovery Time Stamp
}

var xioClients atomic.Uint32

// ClientConfigFor is the client configuration of an SMF on a node of cfg:
// its Node ID is the node's advertised IP, its timers upf.c.t1 and n1.
func ClientConfigFor(cfg *config.Config, log *slog.Logger) ClientConfig {
	id, _ := netip.ParseAddr(cfg.AdvertisedIP())
	if !id.Is4() {
		id = netip.Addr{} // NewClient's default
	}
	return ClientConfig{NodeID: id, T1: cfg.UPF.C.T1, N1: cfg.UPF.C.N1, Log: log}
}

// NewClient is a client with no sockets yet; the first request over each
// network opens one.
func NewClient(cfg ClientConfig) *Client {
	if !cfg.NodeID.IsValid() {
		cfg.NodeID = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.UDPAddr == "" {
		cfg.UDPAddr = ":0"
	}
	if cfg.XIOAddr == "" {
		cfg.XIOAddr = fmt.Sprintf("pfcp-cp-%d-%d", os.Getpid(), xioClients.Add(1))
	}
	return &Client{cfg: cfg, recovery: time.Now(), nodes: map[string]*Node{}, assocs: map[string]*association{}, upSEIDs: map[uint64]upSession{}, cpSEIDs: map[upSession]uint64{}}
}

// Close closes the client's sockets; requests in flight fail.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, n := range c.nodes {
		errs = append(errs, n.Close())
		delete(c.nodes, k)
	}
	return errors.Join(errs...)
}

// Establish creates session s at the UPF at upf (TS 29.244 7.5.2),
// setting up the association first when there is none. s.CPSEID 0 gets
// one of the client's.
func (c *Client) Establish(ctx context.Context, upf string, s *rules.Session) (*rules.Established, error) {
	if s.CPSEID == 0 {
		s.CPSEID = c.seid.Add(1)
	}
	body, err := EstablishmentRequestOf(c.cfg.NodeID, s)
	if err != nil {
		return nil, fmt.Errorf("pfcp: session establishment: %w", err)
	}
	for attempt := 0; ; attempt++ {
		rsp, err := c.sessionRequest(ctx, upf, pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, 0, body)
		if err != nil {
			return nil, err
		}
		r, ok := rsp.Body.(*SessionEstablishmentResponse)
		if !ok {
			return nil, fmt.Errorf("pfcp: %s answered establishment with %s", upf, typeName(rsp.Header.MessageType))
		}
		if e := ResponseError(r.Cause, r.OffendingIE, r.FailedRuleID); e != nil {
			// TS 29.244 6.2.6.1: a UPF that restarted has lost the
			// association; set it up again, once.
			if e.Cause == CauseNoAssociation && attempt == 0 {
				c.assoc(upf).markDown()
				continue
			}
			return nil, e.CauseError()
		}
		est, err := EstablishedOf(r)
		if err == nil {
			c.track(upf, s.CPSEID, est.UPSEID)
		}
		return est, err
	}
}

// Modify changes the session upSEID at upf (TS 29.244 7.5.4) and returns
// the usage reports of the URRs it removes. An Update replaces the rule
// it names; an updated or created uplink PDR keeps the session's tunnel
// when its F-TEID is the one Establish returned or asks to choose with
// the session's Choose ID (any other CH gets a new TEID).
func (c *Client) Modify(ctx context.Context, upf string, upSEID uint64, m *rules.Modification) ([]rules.Usage, error) {
	r, err := c.modify(ctx, upf, upSEID, m)
	if err != nil {
		return nil, err
	}
	return UsagesOf(r.UsageReport), nil
}

// modify sends the modification and returns the UPF's accepting answer.
func (c *Client) modify(ctx context.Context, upf string, upSEID uint64, m *rules.Modification) (*SessionModificationResponse, error) {
	body, err := ModificationRequestOf(m)
	if err != nil {
		return nil, fmt.Errorf("pfcp: session modification: %w", err)
	}
	rsp, err := c.sessionRequest(ctx, upf, pfcp.PFCP_SESSION_MODIFICATION_REQUEST, upSEID, body)
	if err != nil {
		return nil, err
	}
	r, ok := rsp.Body.(*SessionModificationResponse)
	if !ok {
		return nil, fmt.Errorf("pfcp: %s answered modification with %s", upf, typeName(rsp.Header.MessageType))
	}
	if e := ResponseError(r.Cause, r.OffendingIE, r.FailedRuleID); e != nil {
		return nil, e.CauseError()
	}
	return r, nil
}

// Delete removes the session upSEID at upf (TS 29.244 7.5.6) and returns
// what its URRs counted.
func (c *Client) Delete(ctx context.Context, upf string, upSEID uint64) ([]rules.Usage, error) {
	rsp, err := c.sessionRequest(ctx, upf, pfcp.PFCP_SESSION_DELETION_REQUEST, upSEID, &SessionDeletionRequest{})
	if err != nil {
		return nil, err
	}
	r, ok := rsp.Body.(*SessionDeletionResponse)
	if !ok {
		return nil, fmt.Errorf("pfcp: %s answered deletion with %s", upf, typeName(rsp.Header.MessageType))
	}
	if e := ResponseError(r.Cause, r.OffendingIE, nil); e != nil {
		if e.Cause == CauseSessionNotFound {
			c.untrack(upf, upSEID)
		}
		return nil, e.CauseError()
	}
	c.untrack(upf, upSEID)
	return UsagesOf(r.UsageReport), nil
}

// Associate sets up the PFCP association with upf unless there is one
// (TS 29.244 6.2.6).
func (c *Client) Associate(ctx context.Context, upf string) error {
	a := c.assoc(upf)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.up {
		return nil
	}
	rsp, err := c.request(ctx, upf, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST},
		Body: &pfcp.PFCPAssociationSetupRequest{NodeID: NodeIDOf(c.cfg.NodeID),
			RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: c.recovery}}})
	if err != nil {
		return err
	}
	r, ok := rsp.Body.(*pfcp.PFCPAssociationSetupResponse)
	if !ok {
		return fmt.Errorf("pfcp: %s answered association setup with %s", upf, typeName(rsp.Header.MessageType))
	}
	if e := ResponseError(r.Cause, nil, nil); e != nil {
		return e.CauseError()
	}
	a.up = true
	if r.RecoveryTimeStamp != nil {
		a.recovery = r.RecoveryTimeStamp.RecoveryTimeStamp
	}
	c.cfg.Log.Info("PFCP association set up", "upf", upf, "upfRecovery", a.recovery)
	return nil
}

// Release releases the association with upf (TS 29.244 6.2.8); the UPF
// then deletes the sessions of this SMF.
func (c *Client) Release(ctx context.Context, upf string) error {
	a := c.assoc(upf)
	a.mu.Lock()
	defer a.mu.Unlock()
	rsp, err := c.request(ctx, upf, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_RELEASE_REQUEST},
		Body: &pfcp.PFCPAssociationReleaseRequest{NodeID: NodeIDOf(c.cfg.NodeID)}})
	if err != nil {
		return err
	}
	a.up = false
	r, ok := rsp.Body.(*pfcp.PFCPAssociationReleaseResponse)
	if !ok {
		return fmt.Errorf("pfcp: %s answered association release with %s", upf, typeName(rsp.Header.MessageType))
	}
	if e := ResponseError(r.Cause, nil, nil); e != nil {
		return e.CauseError()
	}
	return nil
}

// Heartbeat asks upf whether it is alive and returns its Recovery Time
// Stamp (TS 29.244 6.2.2).
func (c *Client) Heartbeat(ctx context.Context, upf string) (time.Time, error) {
	n, peer, err := c.node(upf)
	if err != nil {
		return time.Time{}, err
	}
	return n.Heartbeat(ctx, peer)
}

func (c *Client) assoc(upf string) *association {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.assocs[upf]
	if !ok {
		a = &association{}
		c.assocs[upf] = a
	}
	return a
}

func (a *association) markDown() {
	a.mu.Lock()
	a.up = false
	a.mu.Unlock()
}

// sessionRequest sends a session request with SEID seid (0 for an
// establishment, TS 29.244 7.2.2.4.2) after making sure of the
// association.
func (c *Client) sessionRequest(ctx context.Context, upf string, t pfcp.MessageType, seid uint64, body any) (*Message, error) {
	if err := c.Associate(ctx, upf); err != nil {
		return nil, err
	}
	return c.request(ctx, upf, &Message{Header: pfcp.Header{MessageType: t, SEID: seid}, Body: body})
}

func (c *Client) request(ctx context.Context, upf string, m *Message) (*Message, error) {
	n, peer, err := c.node(upf)
	if err != nil {
		return nil, err
	}
	// N4 request to response as the SMF waits for it (issue 15 breakdown).
	_, span := tracing.Start(ctx, typeName(m.Header.MessageType), tracing.HopPFCP)
	defer span.End()
	return n.Request(ctx, peer, m)
}

// node is the client's socket over upf's network, opened on first use.
func (c *Client) node(upf string) (*Node, net.Addr, error) {
	network, peer, err := ParseAddr(upf)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.nodes[network]; ok {
		return n, peer, nil
	}
	addr := c.cfg.UDPAddr
	if network == NetXIO {
		addr = c.cfg.XIOAddr
	}
	pc, err := Listen(network, addr)
	if err != nil {
		return nil, nil, fmt.Errorf("pfcp: N4 socket over %s: %w", network, err)
	}
	n := NewNode(pc, NodeConfig{T1: c.cfg.T1, N1: c.cfg.N1, Recovery: c.recovery, NodeID: c.cfg.NodeID, Log: c.cfg.Log,
		Handler: c, Concurrent: true})
	go func() {
		if err := n.Serve(); err != nil {
			c.cfg.Log.Error("PFCP client socket", "err", err)
		}
	}()
	c.nodes[network] = n
	return n, peer, nil
}
