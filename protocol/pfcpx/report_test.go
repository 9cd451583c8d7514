package pfcpx

import (
	"context"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// A Downlink Data Report reads back as it was written: Report Type DLDR,
// the PDR IDs, and the QFIs in Downlink Data Service Information.
func TestSessionReportRoundTrip(t *testing.T) {
	want := &rules.Report{CPSEID: 0x1234, DownlinkData: &rules.DownlinkDataReport{PDRIDs: []uint16{2, 4}, QFIs: []uint8{9, 5}}}
	body, err := ReportRequestOf(want)
	if err != nil {
		t.Fatal(err)
	}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: want.CPSEID, SequenceNumber: 7}, Body: body})
	req, ok := m.Body.(*SessionReportRequest)
	if !ok {
		t.Fatalf("decoded as %T", m.Body)
	}
	if !req.ReportType.Dldr || req.ReportType.Usar {
		t.Fatalf("report type %+v, want DLDR only", *req.ReportType)
	}
	got, err := ReportOf(m.Header.SEID, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %+v, want %+v %+v", got, got.DownlinkData, want, want.DownlinkData)
	}
	rsp := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_RESPONSE, SEID: 9, SequenceNumber: 7},
		Body: ReportResponseOf(CauseSessionNotFound)})
	if CauseOf(rsp) != CauseSessionNotFound {
		t.Fatalf("response cause %d, want 65", CauseOf(rsp))
	}
}

// A report that claims DLDR but carries no Downlink Data Report, or none
// of Report Type, is refused with the cause naming the IE.
func TestSessionReportRefusesIncompleteReports(t *testing.T) {
	for _, c := range []struct {
		name  string
		req   *SessionReportRequest
		cause uint8
		ie    uint16
	}{
		{"no report type", &SessionReportRequest{}, CauseMandatoryIEMissing, IEReportType},
		{"DLDR without report", &SessionReportRequest{ReportType: &pfcpType.ReportType{Dldr: true}}, CauseConditionalIEMissing, IEDownlinkDataReport},
		{"DLDR without PDR", &SessionReportRequest{ReportType: &pfcpType.ReportType{Dldr: true}, DownlinkDataReport: &DownlinkDataReport{}}, CauseMandatoryIEMissing, IEPDRID},
		{"USAR without usage", &SessionReportRequest{ReportType: &pfcpType.ReportType{Usar: true}}, CauseConditionalIEMissing, IEUsageReportReport},
	} {
		_, err := ReportOf(1, c.req)
		e := AsError(err)
		if err == nil || e.Cause != c.cause || e.OffendingIE != c.ie {
			t.Errorf("%s: %v, want cause %d on IE %d", c.name, err, c.cause, c.ie)
		}
	}
	if _, err := ReportRequestOf(&rules.Report{CPSEID: 1}); err == nil {
		t.Error("a report of nothing encoded")
	}
}

// SNDEM (TS 29.244 8.2.58) rides in Update Forwarding Parameters and reads
// back as FAR.SendEndMarker.
func TestUpdateFARCarriesSendEndMarker(t *testing.T) {
	f := rules.FAR{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
		OuterHeader: &rules.OuterHeader{TEID: 0x99, PeerIPv4: gnbAddr}, SendEndMarker: true}
	ie, err := UpdateFAROf(f)
	if err != nil {
		t.Fatal(err)
	}
	if ie.UpdateForwardingParameters.PFCPSMReqFlags == nil || !ie.UpdateForwardingParameters.PFCPSMReqFlags.Sndem {
		t.Fatalf("no SNDEM in %+v", ie.UpdateForwardingParameters)
	}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SEID: 1, SequenceNumber: 1},
		Body: &SessionModificationRequest{UpdateFAR: []*UpdateFAR{ie}}})
	var got rules.FAR
	got.ID = 2
	if err := PatchFAR(&got, m.Body.(*SessionModificationRequest).UpdateFAR[0]); err != nil {
		t.Fatal(err)
	}
	if !got.SendEndMarker || got.OuterHeader == nil || got.OuterHeader.TEID != 0x99 {
		t.Fatalf("read back %+v", got)
	}
	f.OuterHeader = nil
	if _, err := UpdateFAROf(f); err == nil {
		t.Fatal("End Marker without a new tunnel encoded")
	}
}

// fakeUPF serves association and establishment for one client, and sends
// Session Reports back to the socket the client used.
type fakeUPF struct {
	node *Node
	mu   sync.Mutex
	smf  net.Addr
}

func newFakeUPF(t *testing.T) *fakeUPF {
	u := &fakeUPF{}
	// The default T1 and N1 (3 s, 3): a report must be answered, and a
	// 50 ms T1 with N1 2 failed it when a loaded CI machine stalled this
	// process for 150 ms; an SMF that does not answer still fails it.
	u.node = serveNode(t, NodeConfig{Handler: HandlerFunc(u.serve)})
	return u
}

func (u *fakeUPF) serve(peer net.Addr, req *Message) *Message {
	u.mu.Lock()
	u.smf = peer
	u.mu.Unlock()
	switch req.Body.(type) {
	case *pfcp.PFCPAssociationSetupRequest:
		return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_RESPONSE},
			Body: &pfcp.PFCPAssociationSetupResponse{NodeID: NodeIDOf(gnbAddr), Cause: &pfcpType.Cause{CauseValue: CauseAccepted}}}
	case *SessionEstablishmentRequest:
		return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE, SEID: req.Header.SEID},
			Body: &SessionEstablishmentResponse{NodeID: NodeIDOf(gnbAddr), Cause: &pfcpType.Cause{CauseValue: CauseAccepted}, UPFSEID: fseidOf(0x77, gnbAddr)}}
	case *SessionDeletionRequest:
		return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_DELETION_RESPONSE, SEID: req.Header.SEID},
			Body: &SessionDeletionResponse{Cause: &pfcpType.Cause{CauseValue: CauseAccepted}}}
	}
	return nil
}

func (u *fakeUPF) report(t *testing.T, cpSEID uint64, body *SessionReportRequest) *Message {
	t.Helper()
	u.mu.Lock()
	smf := u.smf
	u.mu.Unlock()
	rsp, err := u.node.Request(context.Background(), smf, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: cpSEID}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return rsp
}

// clientWithSession is a client that established aSession at a fake UPF,
// which can then report on it.
func clientWithSession(t *testing.T) (*fakeUPF, *Client, *rules.Session) {
	t.Helper()
	upf := newFakeUPF(t)
	c := NewClient(ClientConfig{UDPAddr: "127.0.0.1:0"}) // default T1, N1: see newFakeUPF
	t.Cleanup(func() { c.Close() })
	s := aSession()
	if _, err := c.Establish(context.Background(), "udp:"+upf.node.LocalAddr().String(), s); err != nil {
		t.Fatal(err)
	}
	return upf, c, s
}

func dldr(pdr uint16) *SessionReportRequest {
	body, _ := ReportRequestOf(&rules.Report{DownlinkData: &rules.DownlinkDataReport{PDRIDs: []uint16{pdr}}})
	return body
}

// The client is a rules.Reporter: a UPF's Session Report reaches the SMF's
// handler decoded, and the handler's cause comes back in the response
// under the UP SEID; before a handler is set, cause 65.
func TestClientDeliversSessionReports(t *testing.T) {
	upf := newFakeUPF(t)
	c := NewClient(ClientConfig{UDPAddr: "127.0.0.1:0"}) // default T1, N1: see newFakeUPF
	defer c.Close()
	upfAddr := "udp:" + upf.node.LocalAddr().String()
	s := aSession()
	if _, err := c.Establish(context.Background(), upfAddr, s); err != nil {
		t.Fatal(err)
	}

	if rsp := upf.report(t, s.CPSEID, dldr(2)); CauseOf(rsp) != CauseSessionNotFound {
		t.Fatalf("report without a handler: cause %d, want 65", CauseOf(rsp))
	}

	var got []*rules.Report
	var from []string
	var mu sync.Mutex
	c.OnReport(func(_ context.Context, upf string, r *rules.Report) uint8 {
		mu.Lock()
		defer mu.Unlock()
		got, from = append(got, r), append(from, upf)
		if r.CPSEID != s.CPSEID {
			return CauseSessionNotFound
		}
		return CauseAccepted
	})
	rsp := upf.report(t, s.CPSEID, dldr(2))
	if CauseOf(rsp) != CauseAccepted || rsp.Header.SEID != 0x77 {
		t.Fatalf("response cause %d SEID %#x, want 1 under UP SEID 0x77", CauseOf(rsp), rsp.Header.SEID)
	}
	if rsp := upf.report(t, 999, dldr(2)); CauseOf(rsp) != CauseSessionNotFound || rsp.Header.SEID != 0 {
		t.Fatalf("report of an unknown session: cause %d SEID %d, want 65 under SEID 0", CauseOf(rsp), rsp.Header.SEID)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].DownlinkData == nil || got[0].DownlinkData.PDRIDs[0] != 2 || from[0] != upfAddr {
		t.Fatalf("handler saw %+v from %v, want the DLDR of PDR 2 from %s", got, from, upfAddr)
	}
}

// Each UPF allocates its own UP SEIDs: two UPFs that both gave 0x77 hold
// two sessions, and deleting one leaves the other's reports answered under
// its UP SEID.
func TestClientForgetsOnlyTheDeletedUPFsSession(t *testing.T) {
	a, b := newFakeUPF(t), newFakeUPF(t)
	c := NewClient(ClientConfig{UDPAddr: "127.0.0.1:0"})
	defer c.Close()
	c.OnReport(func(context.Context, string, *rules.Report) uint8 { return CauseAccepted })
	atA, atB := aSession(), aSession()
	atB.CPSEID++
	for _, e := range []struct {
		upf *fakeUPF
		s   *rules.Session
	}{{a, atA}, {b, atB}} {
		if _, err := c.Establish(context.Background(), "udp:"+e.upf.node.LocalAddr().String(), e.s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Delete(context.Background(), "udp:"+a.node.LocalAddr().String(), 0x77); err != nil {
		t.Fatal(err)
	}
	if rsp := b.report(t, atB.CPSEID, dldr(2)); CauseOf(rsp) != CauseAccepted || rsp.Header.SEID != 0x77 {
		t.Fatalf("report of the session left at the second UPF: cause %d SEID %#x, want 1 under UP SEID 0x77", CauseOf(rsp), rsp.Header.SEID)
	}
	if rsp := a.report(t, atA.CPSEID, dldr(2)); rsp.Header.SEID != 0 {
		t.Fatalf("report of the deleted session answered under SEID %#x, want 0 (not known)", rsp.Header.SEID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.upSEIDs) != 1 || len(c.cpSEIDs) != 1 {
		t.Fatalf("tracked %v / %v, want only the second UPF's session", c.upSEIDs, c.cpSEIDs)
	}
}

// A Session Report whose answer was lost arrives again: it is answered
// from the stored answer, and the handler (which pages a UE) runs once.
func TestClientAnswersDuplicateReportsOnce(t *testing.T) {
	upf, c, s := clientWithSession(t)
	var calls atomic.Int32
	c.OnReport(func(context.Context, string, *rules.Report) uint8 { calls.Add(1); return CauseAccepted })
	raw := udpSocket(t)
	b, err := Encode(&Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: s.CPSEID, SequenceNumber: 42}, Body: dldr(2)})
	if err != nil {
		t.Fatal(err)
	}
	upf.mu.Lock()
	smf := upf.smf
	upf.mu.Unlock()
	var answers [][]byte
	for range 2 {
		if _, err := raw.WriteTo(b, smf); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, readDatagram(t, raw))
	}
	if string(answers[0]) != string(answers[1]) || calls.Load() != 1 {
		t.Fatalf("duplicate report: handler ran %d times, answers equal %v", calls.Load(), string(answers[0]) == string(answers[1]))
	}
}
