package upfc

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// ServerConfig configures the PFCP side of UPF-C.
type ServerConfig struct {
	Table rules.Table
	// N3 is UPF-U's N3 address: the IPv4 of every F-TEID UPF-C allocates.
	N3 netip.Addr
	// NodeID is UPF-C's Node ID and the address of its UP F-SEIDs.
	NodeID      netip.Addr
	MaxSessions int
	Recovery    time.Time
	Log         *slog.Logger
	Metrics     *Metrics
	// Tracing records UPF-C's spans (tracing.go); nil: off.
	Tracing *tracing.Provider
}

// Server answers N4 requests (a pfcpx.Handler): it keeps a copy of every
// session, checks each request against it, and writes the sessions it
// changes into the Table whole.
type Server struct {
	cfg ServerConfig

	mu       sync.Mutex
	sessions map[uint64]*rules.Session // by UP SEID
	teids    *teids
	seids    seids
	assocs   map[string]time.Time // CP Node ID → its Recovery Time Stamp
	// Where the SMFs sent from (report.go): by UP SEID, and by CP Node
	// ID for sessions recovered after a restart.
	peers      map[uint64]net.Addr
	assocPeers map[string]net.Addr
	// Notes of sessions whose SMF has not sent to this UPF-C since it
	// (re)started, reported once it does (report.go).
	pending    map[uint64]shm.Note
	routable   []shm.Note
	onRoutable func(shm.Note)
}

var _ pfcpx.Handler = (*Server)(nil)

// NewServer serves the sessions cfg.Table already holds: after a restart
// UPF-C goes on serving what UPF-U forwards with (package comment).
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Recovery.IsZero() {
		cfg.Recovery = time.Now()
	}
	if !cfg.N3.Is4() || !cfg.NodeID.Is4() {
		return nil, fmt.Errorf("upf-c: N3 address %v and Node ID %v must be IPv4 addresses", cfg.N3, cfg.NodeID)
	}
	if cfg.Table == nil || cfg.MaxSessions < 1 {
		return nil, fmt.Errorf("upf-c: a rule table and a session bound of at least 1 are needed")
	}
	s := &Server{cfg: cfg, sessions: map[uint64]*rules.Session{}, teids: newTEIDs(), assocs: map[string]time.Time{},
		peers: map[uint64]net.Addr{}, assocPeers: map[string]net.Addr{}, pending: map[uint64]shm.Note{}}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

// recover takes over the sessions of the table: their SEIDs and TEIDs
// stay theirs, and the allocators go on past them.
func (s *Server) recover() error {
	list, err := s.cfg.Table.Sessions()
	if err != nil {
		return fmt.Errorf("upf-c: read the sessions of the rule tables: %w", err)
	}
	for i := range list {
		sess := list[i]
		for _, id := range localTEIDs(&sess) {
			if !s.teids.hold(id, sess.UPSEID) {
				return fmt.Errorf("upf-c: recovered sessions %#x and %#x share TEID %#x", sess.UPSEID, s.teids.owner[id], id)
			}
			s.teids.next = max(s.teids.next, id+1)
		}
		s.seids.next = max(s.seids.next, sess.UPSEID)
		s.sessions[sess.UPSEID] = &sess
	}
	s.cfg.Metrics.setSessions(len(s.sessions))
	if len(list) > 0 {
		s.cfg.Log.Info("recovered sessions from the rule tables", "sessions", len(list))
	}
	return nil
}

// Sessions is how many sessions UPF-C serves.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// ServePFCP answers one request (the pfcpx.Node answers heartbeats).
func (s *Server) ServePFCP(peer net.Addr, req *pfcpx.Message) *pfcpx.Message {
	defer s.reportRoutable()
	h := req.Header
	switch b := req.Body.(type) {
	case *pfcp.PFCPAssociationSetupRequest:
		return s.associate(h, b, peer)
	case *pfcp.PFCPAssociationReleaseRequest:
		return s.releaseAssociation(h, b)
	case *pfcpx.SessionEstablishmentRequest:
		return s.establish(h, b, peer)
	case *pfcpx.SessionModificationRequest:
		defer s.traceModification(h.SEID).End()
		return s.modify(h, b, peer)
	case *pfcpx.SessionDeletionRequest:
		return s.delete(h)
	}
	return nil // TS 29.244 7.2.2.4.1: a request not served here is ignored
}

func (s *Server) reject(h pfcp.Header, err error, cpSEID uint64) *pfcpx.Message {
	e := pfcpx.AsError(err)
	s.cfg.Log.Info("PFCP request rejected", "type", pfcpx.TypeName(h.MessageType), "seid", h.SEID, "err", e)
	return pfcpx.RejectionOf(h, e, s.cfg.NodeID, cpSEID)
}

// associate is TS 29.244 6.2.6.2: the SMF's node may establish sessions
// from now on.
func (s *Server) associate(h pfcp.Header, req *pfcp.PFCPAssociationSetupRequest, peer net.Addr) *pfcpx.Message {
	switch {
	case req.NodeID == nil:
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseMandatoryIEMissing, OffendingIE: pfcpx.IENodeID, Detail: "Association Setup Request has no Node ID"}, 0)
	case req.RecoveryTimeStamp == nil:
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseMandatoryIEMissing, OffendingIE: pfcpx.IERecoveryTimeStamp, Detail: "Association Setup Request has no Recovery Time Stamp"}, 0)
	}
	s.mu.Lock()
	s.assocs[pfcpx.NodeKey(req.NodeID)] = req.RecoveryTimeStamp.RecoveryTimeStamp
	s.assocPeers[pfcpx.NodeKey(req.NodeID)] = peer
	s.routePendingOf(pfcpx.NodeKey(req.NodeID))
	s.mu.Unlock()
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_RESPONSE},
		Body: &pfcp.PFCPAssociationSetupResponse{
			NodeID:            pfcpx.NodeIDOf(s.cfg.NodeID),
			Cause:             &pfcpType.Cause{CauseValue: pfcpx.CauseAccepted},
			RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: s.cfg.Recovery},
			// TS 29.244 8.2.25 FTUP: UPF-C allocates F-TEIDs (CH).
			UPFunctionFeatures: &pfcpType.UPFunctionFeatures{SupportedFeatures: pfcpType.UpFunctionFeaturesFtup},
		}}
}

// releaseAssociation is TS 29.244 6.2.8.3: the UP function deletes the
// sessions of the released association.
func (s *Server) releaseAssociation(h pfcp.Header, req *pfcp.PFCPAssociationReleaseRequest) *pfcpx.Message {
	if req.NodeID == nil {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseMandatoryIEMissing, OffendingIE: pfcpx.IENodeID, Detail: "Association Release Request has no Node ID"}, 0)
	}
	key := pfcpx.NodeKey(req.NodeID)
	s.mu.Lock()
	_, ok := s.assocs[key]
	delete(s.assocs, key)
	if ok {
		s.deleteSessionsOf(key)
	}
	s.mu.Unlock()
	if !ok {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseNoAssociation, Detail: "no association with " + key}, 0)
	}
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_RELEASE_RESPONSE},
		Body: &pfcp.PFCPAssociationReleaseResponse{NodeID: pfcpx.NodeIDOf(s.cfg.NodeID), Cause: &pfcpType.Cause{CauseValue: pfcpx.CauseAccepted}}}
}

// deleteSessionsOf removes the sessions whose CP F-SEID is at node.
func (s *Server) deleteSessionsOf(node string) {
	for seid, sess := range s.sessions {
		if sess.CPAddr.String() != node {
			continue
		}
		if err := s.cfg.Table.Remove(seid); err != nil {
			s.cfg.Log.Error("remove a released association's session", "seid", seid, "err", err)
			continue
		}
		s.forget(sess)
	}
}

func (s *Server) forget(sess *rules.Session) {
	s.teids.release(sess.UPSEID, localTEIDs(sess)...)
	delete(s.sessions, sess.UPSEID)
	delete(s.peers, sess.UPSEID)
	delete(s.pending, sess.UPSEID)
	s.cfg.Metrics.setSessions(len(s.sessions))
}

// establish is TS 29.244 7.5.2 / 6.3.2.
func (s *Server) establish(h pfcp.Header, req *pfcpx.SessionEstablishmentRequest, peer net.Addr) *pfcpx.Message {
	var cpSEID uint64
	if req.CPFSEID != nil {
		cpSEID = req.CPFSEID.Seid // the response's SEID (TS 29.244 7.2.2.4.2)
	}
	sess, err := pfcpx.SessionOf(req)
	if err != nil {
		return s.reject(h, err, cpSEID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.assocs[pfcpx.NodeKey(req.NodeID)]; !ok {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseNoAssociation, Detail: "no PFCP association with " + pfcpx.NodeKey(req.NodeID)}, cpSEID)
	}
	if len(s.sessions) >= s.cfg.MaxSessions {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseNoResources, Detail: fmt.Sprintf("%d sessions, the most upf.max_sessions allows", len(s.sessions))}, cpSEID)
	}
	if err := checkRules(&sess.Rules); err != nil {
		return s.reject(h, err, cpSEID)
	}
	sess.UPSEID = s.seids.take(func(id uint64) bool { _, used := s.sessions[id]; return used })
	created, err := s.allocateFTEIDs(sess, nil)
	if err != nil {
		return s.reject(h, err, cpSEID)
	}
	if err := s.cfg.Table.Install(sess); err != nil {
		s.teids.release(sess.UPSEID, localTEIDs(sess)...)
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseNoResources, Detail: "rule tables: " + err.Error()}, cpSEID)
	}
	s.sessions[sess.UPSEID] = sess
	s.notePeer(sess.UPSEID, peer)
	s.cfg.Metrics.setSessions(len(s.sessions))
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE, SEID: cpSEID},
		Body: &pfcpx.SessionEstablishmentResponse{
			NodeID:     pfcpx.NodeIDOf(s.cfg.NodeID),
			Cause:      &pfcpType.Cause{CauseValue: pfcpx.CauseAccepted},
			UPFSEID:    &pfcpType.FSEID{V4: true, Seid: sess.UPSEID, Ipv4Address: ip4(s.cfg.NodeID)},
			CreatedPDR: created,
		}}
}

// modify is TS 29.244 7.5.4 / 6.3.3: on a copy of the session, Remove,
// then Update, then Create; the table gets the result whole, or nothing
// changes.
func (s *Server) modify(h pfcp.Header, req *pfcpx.SessionModificationRequest, peer net.Addr) *pfcpx.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.sessions[h.SEID]
	if !ok {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseSessionNotFound, Detail: fmt.Sprintf("no session with SEID %#x", h.SEID)}, 0)
	}
	next := old.Clone()
	if err := applyModification(&next, req); err != nil {
		return s.reject(h, err, old.CPSEID)
	}
	if err := checkRules(&next.Rules); err != nil {
		return s.reject(h, err, old.CPSEID)
	}
	oldTunnels := endMarkers(old, &next)
	created, err := s.allocateFTEIDs(&next, old)
	if err != nil {
		return s.reject(h, err, old.CPSEID)
	}
	reports := s.reportedUsage(old, req)
	if err := s.cfg.Table.Install(&next); err != nil {
		s.teids.release(next.UPSEID, teidsOnlyIn(&next, old)...)
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseNoResources, Detail: "rule tables: " + err.Error()}, old.CPSEID)
	}
	s.teids.release(old.UPSEID, teidsOnlyIn(old, &next)...)
	s.sessions[next.UPSEID] = &next
	s.notePeer(next.UPSEID, peer)
	s.sendEndMarkers(next.UPSEID, oldTunnels)
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_RESPONSE, SEID: next.CPSEID},
		Body: &pfcpx.SessionModificationResponse{
			Cause:       &pfcpType.Cause{CauseValue: pfcpx.CauseAccepted},
			CreatedPDR:  created,
			UsageReport: reports,
		}}
}

// reportedUsage: TS 29.244 7.5.5.2 reports the usage of the URRs a
// modification removes, and of those it queries (Query URR).
func (s *Server) reportedUsage(old *rules.Session, req *pfcpx.SessionModificationRequest) []*pfcpx.UsageReport {
	var want []uint32
	for _, r := range req.RemoveURR {
		want = append(want, r.URRID.UrrIdValue)
	}
	for _, q := range req.QueryURR {
		if q.URRID != nil {
			want = append(want, q.URRID.UrrIdValue)
		}
	}
	if len(want) == 0 {
		return nil
	}
	all, err := s.cfg.Table.Usage(old.UPSEID)
	if err != nil {
		s.cfg.Log.Warn("usage of a modified session", "seid", old.UPSEID, "err", err)
		return nil
	}
	var out []rules.Usage
	for _, u := range all {
		if slices.Contains(want, u.URRID) {
			out = append(out, u)
		}
	}
	return pfcpx.UsageReportsOf(out, pfcpType.UsageReportTrigger{Immer: true}, 0)
}

// delete is TS 29.244 7.5.6 / 6.3.4: the rules go, what the URRs counted
// comes back.
func (s *Server) delete(h pfcp.Header) *pfcpx.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[h.SEID]
	if !ok {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseSessionNotFound, Detail: fmt.Sprintf("no session with SEID %#x", h.SEID)}, 0)
	}
	usage, err := s.cfg.Table.Usage(sess.UPSEID)
	if err != nil {
		s.cfg.Log.Warn("usage of a deleted session", "seid", sess.UPSEID, "err", err)
	}
	if err := s.cfg.Table.Remove(sess.UPSEID); err != nil {
		return s.reject(h, &pfcpx.Error{Cause: pfcpx.CauseSystemFailure, Detail: "rule tables: " + err.Error()}, sess.CPSEID)
	}
	s.forget(sess)
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_DELETION_RESPONSE, SEID: sess.CPSEID},
		Body: &pfcpx.SessionDeletionResponse{
			Cause:       &pfcpType.Cause{CauseValue: pfcpx.CauseAccepted},
			UsageReport: pfcpx.UsageReportsOf(usage, pfcpType.UsageReportTrigger{Termr: true}, 0),
		}}
}

// allocateFTEIDs gives every PDR asking for one (CH) an F-TEID on N3:
// PDRs with the same Choose ID, in this request or already in the
// session, share one (TS 29.244 5.2.1, 8.2.3). F-TEIDs the SMF chose
// must not be another session's. It returns the Created PDR IEs.
func (s *Server) allocateFTEIDs(sess *rules.Session, old *rules.Session) ([]*pfcpx.CreatedPDR, error) {
	byChooseID := map[uint8]rules.FTEID{}
	if old != nil {
		for _, p := range old.PDRs {
			if f := p.LocalFTEID; f != nil && f.ChooseID != 0 {
				byChooseID[f.ChooseID] = *f
			}
		}
	}
	var created []*pfcpx.CreatedPDR
	fail := func(err error) ([]*pfcpx.CreatedPDR, error) {
		// What this request took or held, and only that, goes back.
		s.teids.release(sess.UPSEID, teidsOnlyIn(sess, old)...)
		return nil, err
	}
	for i := range sess.PDRs {
		p := &sess.PDRs[i]
		f := p.LocalFTEID
		if f == nil {
			continue
		}
		if !f.Choose {
			if !s.teids.hold(f.TEID, sess.UPSEID) {
				return fail(pfcpx.RuleFailure(pfcpx.RulePDR, uint32(p.ID), "PDR %d: TEID %#x is another session's", p.ID, f.TEID))
			}
			continue
		}
		got, shared := byChooseID[f.ChooseID]
		if !shared || f.ChooseID == 0 {
			id, ok := s.teids.take(sess.UPSEID)
			if !ok {
				return fail(&pfcpx.Error{Cause: pfcpx.CauseNoResources, Detail: "no TEID left"})
			}
			got = rules.FTEID{TEID: id, IPv4: s.cfg.N3, ChooseID: f.ChooseID}
			if f.ChooseID != 0 {
				byChooseID[f.ChooseID] = got
			}
		}
		*f = got
		created = append(created, &pfcpx.CreatedPDR{
			PDRID:      &pfcpType.PacketDetectionRuleID{RuleId: p.ID},
			LocalFTEID: &pfcpType.FTEID{V4: true, Teid: got.TEID, Ipv4Address: ip4(got.IPv4)},
		})
	}
	return created, nil
}

// localTEIDs are the TEIDs of sess's PDRs.
func localTEIDs(sess *rules.Session) []uint32 {
	var out []uint32
	for _, p := range sess.PDRs {
		if p.LocalFTEID != nil && !p.LocalFTEID.Choose && !slices.Contains(out, p.LocalFTEID.TEID) {
			out = append(out, p.LocalFTEID.TEID)
		}
	}
	return out
}

// teidsOnlyIn are the TEIDs of a that b (nil: no session) does not use.
func teidsOnlyIn(a, b *rules.Session) []uint32 {
	var out, inB []uint32
	if b != nil {
		inB = localTEIDs(b)
	}
	for _, id := range localTEIDs(a) {
		if !slices.Contains(inB, id) {
			out = append(out, id)
		}
	}
	return out
}

func ip4(a netip.Addr) net.IP {
	b := a.As4()
	return net.IP(b[:])
}

func addrOf(ip net.IP) (netip.Addr, bool) {
	v4 := ip.To4()
	if v4 == nil {
		return netip.Addr{}, false
	}
	a, _ := netip.AddrFromSlice(v4)
	return a, !a.IsUnspecified()
}
