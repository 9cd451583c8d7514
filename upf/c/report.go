package upfc

import (
	"context"
	"errors"
	"net"

	"github.com/free5gc/pfcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// Network-triggered service request, the UPF's part (TS 23.502 4.2.3.3
// steps 1-2, TS 29.244 7.5.8): UPF-U buffered the first downlink packet of
// an idle UE's session and noted it; UPF-C sends the SMF a PFCP Session
// Report Request (Downlink Data Report) over the N4 socket the SMF last
// used, with T1/N1 retransmission. An SMF that answers cause 65 (Session
// context not found) no longer has the session: its buffer is dropped.
//
// And the handover's End Marker (TS 23.502 4.9.1.2.2 step 6, 4.9.1.3.3
// step 3): an Update FAR with SNDEM that moves the tunnel has UPF-U send
// End Marker into the old one; UPF-C does not own N3, so it asks UPF-U.

// UserPlane is what UPF-C needs of a rule table whose user plane buffers
// downlink data and sends End Markers: upf/shm's tables. A table without
// it (rules.MemTable) serves N4 alone.
type UserPlane interface {
	// WatchDownlinkData calls f with each note of buffered downlink data
	// until ctx ends.
	WatchDownlinkData(ctx context.Context, f func(shm.Note)) error
	// Discard drops what was buffered for the session.
	Discard(upSEID uint64) error
	// SendEndMarker sends GTP-U End Marker into the old tunnel.
	SendEndMarker(upSEID uint64, old rules.OuterHeader) error
}

var _ UserPlane = (*shm.Table)(nil)

// downlinkReport is the Session Report Request for note, and where it
// goes: the session's SMF at the N4 address it last sent from. ok is
// false for a stale note (the session is gone, or its FAR no longer
// buffers and notifies: the SMF acted already).
func (s *Server) downlinkReport(note shm.Note) (peer net.Addr, msg *pfcpx.Message, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, found := s.sessions[note.UPSEID]
	if !found || !notifies(sess, note.PDRID) {
		return nil, nil, false
	}
	peer = s.peers[note.UPSEID]
	if peer == nil {
		peer = s.assocPeers[sess.CPAddr.String()]
	}
	if peer == nil {
		// A restarted UPF-C knows the session (the tables) but not the
		// SMF's socket: the report waits for the SMF's next request.
		s.cfg.Log.Warn("buffered downlink data for a session whose SMF has not sent to this UPF-C since it started: reported when it does",
			"upSEID", note.UPSEID)
		s.pending[note.UPSEID] = note
		return nil, nil, false
	}
	r := &rules.Report{CPSEID: sess.CPSEID, DownlinkData: &rules.DownlinkDataReport{PDRIDs: []uint16{note.PDRID}}}
	if note.QFI != 0 {
		r.DownlinkData.QFIs = []uint8{note.QFI}
	}
	body, err := pfcpx.ReportRequestOf(r)
	if err != nil {
		s.cfg.Log.Error("session report", "upSEID", note.UPSEID, "err", err)
		return nil, nil, false
	}
	return peer, &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: sess.CPSEID}, Body: body}, true
}

// notifies says whether PDR pdr of sess leads to a FAR with BUFF and NOCP.
func notifies(sess *rules.Session, pdr uint16) bool {
	for _, p := range sess.PDRs {
		if p.ID != pdr {
			continue
		}
		for _, f := range sess.FARs {
			if f.ID == p.FARID {
				return f.Action&rules.ActionBuffer != 0 && f.Action&rules.ActionNotify != 0
			}
		}
	}
	return false
}

// notePeer remembers where the SMF of session upSEID sent from: its
// reports go there (the SMF's client socket, UDP or X-IO).
func (s *Server) notePeer(upSEID uint64, peer net.Addr) {
	if peer == nil {
		return
	}
	s.peers[upSEID] = peer
	if n, ok := s.pending[upSEID]; ok {
		delete(s.pending, upSEID)
		s.routable = append(s.routable, n)
	}
}

// routePendingOf makes the waiting notes of the sessions of CP node
// routable (its association is set up again).
func (s *Server) routePendingOf(node string) {
	for id, n := range s.pending {
		if sess, ok := s.sessions[id]; ok && sess.CPAddr.String() == node {
			delete(s.pending, id)
			s.routable = append(s.routable, n)
		}
	}
}

// reportRoutable hands the notes that became routable to the reporter,
// outside the lock.
func (s *Server) reportRoutable() {
	s.mu.Lock()
	ready, report := s.routable, s.onRoutable
	s.routable = nil
	s.mu.Unlock()
	for _, n := range ready {
		if report != nil {
			report(n)
		}
	}
}

// watchDownlinkData reports UPF-U's notes until ctx ends.
func (n *NF) watchDownlinkData(ctx context.Context, up UserPlane) {
	defer n.wg.Done()
	reportNote := func(note shm.Note) {
		if ctx.Err() != nil {
			return // stopping: this note is lost (UPF-U notes the session again once its FAR is rewritten)
		}
		rctx, span := n.traceReport(ctx, note.UPSEID)
		peer, msg, ok := n.server.downlinkReport(note)
		if !ok {
			span.End()
			return
		}
		n.wg.Add(1)
		n.reports.Go(func() { n.report(rctx, span, up, note.UPSEID, peer, msg) })
	}
	n.server.mu.Lock()
	n.server.onRoutable = reportNote
	n.server.mu.Unlock()
	err := up.WatchDownlinkData(ctx, reportNote)
	if err != nil {
		n.env.Log.Error("downlink data notes from UPF-U: no Session Reports", "err", err)
	}
}

// report sends one Session Report Request and acts on the answer; span
// (tracing.go) ends with it.
func (n *NF) report(ctx context.Context, span trace.Span, up UserPlane, upSEID uint64, peer net.Addr, msg *pfcpx.Message) {
	defer n.wg.Done()
	defer span.End()
	node := n.nodeFor(peer)
	if node == nil {
		n.env.Log.Warn("session report: no N4 socket over the SMF's network", "network", peer.Network())
		return
	}
	// The node's T1 x (N1+1) bounds it (pfcpx.Node.Request); ctx ends it
	// at Stop.
	rsp, err := requestTraced(ctx, node, peer, msg)
	if err != nil {
		var te *pfcpx.TimeoutError
		if errors.As(err, &te) {
			n.env.Log.Warn("session report unanswered: the buffer waits for the SMF's next rule change", "upSEID", upSEID, "smf", peer)
		}
		return
	}
	switch cause := pfcpx.CauseOf(rsp); cause {
	case pfcpx.CauseAccepted:
	case pfcpx.CauseSessionNotFound:
		// TS 29.244 7.5.9 / 6.3.x: the SMF has no such session.
		n.env.Log.Warn("the SMF does not know the session it was told of: its buffered data dropped", "upSEID", upSEID, "smf", peer)
		if err := up.Discard(upSEID); err != nil {
			n.env.Log.Warn("discard a buffer", "upSEID", upSEID, "err", err)
		}
	default:
		n.env.Log.Warn("session report refused", "upSEID", upSEID, "cause", cause, "name", pfcpx.CauseName(cause))
	}
}

func (n *NF) nodeFor(peer net.Addr) *pfcpx.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, node := range n.nodes {
		if node.LocalAddr().Network() == peer.Network() {
			return node
		}
	}
	return nil
}

// endMarkers are the old tunnels of next's FARs whose Update asked for
// End Marker (SNDEM) and moved the tunnel; the flags are cleared (a
// one-off request, never installed).
func endMarkers(old, next *rules.Session) []rules.OuterHeader {
	var out []rules.OuterHeader
	for i := range next.FARs {
		f := &next.FARs[i]
		if !f.SendEndMarker {
			continue
		}
		f.SendEndMarker = false
		for _, o := range old.FARs {
			if o.ID == f.ID && o.OuterHeader != nil && (f.OuterHeader == nil || *o.OuterHeader != *f.OuterHeader) {
				out = append(out, *o.OuterHeader)
			}
		}
	}
	return out
}

// sendEndMarkers asks the user plane for End Markers into the old tunnels
// (after the new rules are in: UPF-U sends each after the last packet it
// forwarded into that tunnel).
func (s *Server) sendEndMarkers(upSEID uint64, tunnels []rules.OuterHeader) {
	up, ok := s.cfg.Table.(UserPlane)
	if !ok {
		return
	}
	for _, oh := range tunnels {
		if err := up.SendEndMarker(upSEID, oh); err != nil {
			s.cfg.Log.Warn("End Marker not sent", "upSEID", upSEID, "teid", oh.TEID, "peer", oh.PeerIPv4, "err", err)
		}
	}
}
