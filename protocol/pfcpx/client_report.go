package pfcpx

import (
	"context"
	"net"
	"time"

	"github.com/free5gc/pfcp"

	"github.com/l25gc/l25gc/upf/rules"
)

// The client's side of Session Reports (TS 29.244 7.5.8, 7.5.9): a UPF's
// Session Report Request arrives on the socket the client sends its own
// requests from (the UPF learnt it from them), is decoded to a
// rules.Report and handed to the SMF's ReportHandler, whose cause is the
// Session Report Response. A retransmitted request is answered from the
// stored answer (Node), never handled twice.

var _ rules.Reporter = (*Client)(nil)

// OnReport makes h the handler of the UPFs' Session Reports; until then
// every report is answered with cause 65 (Session context not found), so
// the UPF drops what it buffered instead of waiting for an SMF that will
// not act (TS 29.244 7.5.9).
func (c *Client) OnReport(h rules.ReportHandler) {
	c.mu.Lock()
	c.onReport = h
	c.mu.Unlock()
}

var _ FollowingHandler = (*Client)(nil)

// ServePFCP answers the requests a UPF sends the client: Session Report
// Requests; everything else is ignored (TS 29.244 7.2.2.4.1). What the
// report handler left to follow its answer runs in a goroutine of its
// own (the client's Node uses ServePFCPThen instead).
func (c *Client) ServePFCP(peer net.Addr, req *Message) *Message {
	rsp, then := c.ServePFCPThen(peer, req)
	if then != nil {
		go then()
	}
	return rsp
}

// ServePFCPThen is ServePFCP with what the report handler left to run
// once the response is sent (rules.LeaveAfterAnswer): the Node runs it
// on the goroutine that answered.
func (c *Client) ServePFCPThen(peer net.Addr, req *Message) (*Message, func()) {
	body, ok := req.Body.(*SessionReportRequest)
	if !ok {
		return nil, nil
	}
	return c.serveReport(peer, req.Header, body)
}

func (c *Client) serveReport(peer net.Addr, h pfcp.Header, body *SessionReportRequest) (*Message, func()) {
	c.mu.Lock()
	handler := c.onReport
	up, known := c.upSEIDs[h.SEID]
	upSEID := up.upSEID
	c.mu.Unlock()
	if handler == nil {
		// TS 29.244 7.2.2.4.2: SEID 0 when the session is not known.
		return RejectionOf(h, &Error{Cause: CauseSessionNotFound, Detail: "no Session Report handler"}, c.cfg.NodeID, 0), nil
	}
	r, err := ReportOf(h.SEID, body)
	if err != nil {
		return RejectionOf(h, AsError(err), c.cfg.NodeID, upSEID), nil
	}
	// The UPF gives up after T1 x (N1+1): an answer later than that is
	// wasted.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.n1()+1)*c.t1())
	defer cancel()
	ctx, after := rules.WithAfterAnswer(ctx)
	cause := handler(ctx, peer.Network()+":"+peer.String(), r)
	then := after.Take()
	if !known && cause == CauseAccepted {
		c.cfg.Log.Debug("PFCP session report for a session this client did not establish", "cpSEID", h.SEID)
	}
	if cause == CauseSessionNotFound {
		upSEID = 0
	}
	return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_RESPONSE, SEID: upSEID}, Body: ReportResponseOf(cause)}, then
}

func (c *Client) n1() int {
	if c.cfg.N1 > 0 {
		return c.cfg.N1
	}
	return DefaultN1
}

func (c *Client) t1() time.Duration {
	if c.cfg.T1 > 0 {
		return c.cfg.T1
	}
	return DefaultT1
}

// track remembers the UP SEID of an established session (the SEID of the
// Session Report Responses about it).
func (c *Client) track(upf string, cpSEID, upSEID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.upSEIDs[cpSEID]; ok {
		delete(c.cpSEIDs, old) // established again: the old UP SEID is gone
	}
	up := upSession{upf, upSEID}
	c.upSEIDs[cpSEID] = up
	c.cpSEIDs[up] = cpSEID
}

// untrack forgets the session with UP SEID upSEID at upf.
func (c *Client) untrack(upf string, upSEID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	up := upSession{upf, upSEID}
	if cp, ok := c.cpSEIDs[up]; ok {
		delete(c.cpSEIDs, up)
		delete(c.upSEIDs, cp)
	}
}
