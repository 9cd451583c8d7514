package upfc

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// fakeUserPlane is a rule table with UPF-U's side of buffering faked:
// the test queues notes, and sees discards and End Marker requests.
type fakeUserPlane struct {
	*rules.MemTable
	notes chan shm.Note
	mu    sync.Mutex
	// discarded and endMarkers record what UPF-C asked of UPF-U.
	discarded  []uint64
	endMarkers []rules.OuterHeader
}

func newFakeUserPlane() *fakeUserPlane {
	return &fakeUserPlane{MemTable: rules.NewMemTable(), notes: make(chan shm.Note, 16)}
}

func (f *fakeUserPlane) WatchDownlinkData(ctx context.Context, fn func(shm.Note)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case n := <-f.notes:
			fn(n)
		}
	}
}

func (f *fakeUserPlane) Discard(upSEID uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.discarded = append(f.discarded, upSEID)
	return nil
}

func (f *fakeUserPlane) SendEndMarker(_ uint64, old rules.OuterHeader) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endMarkers = append(f.endMarkers, old)
	return nil
}

func (f *fakeUserPlane) discards() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint64(nil), f.discarded...)
}

// idleSession is pduSession with its downlink FAR buffering and notifying
// (AN release, TS 23.502 4.2.6).
func idleSession(ue string) *rules.Session {
	s := pduSession(ue)
	s.FARs[1] = rules.FAR{ID: 2, Action: rules.ActionBuffer | rules.ActionNotify, Destination: rules.Access}
	return s
}

type reportSink struct {
	mu      sync.Mutex
	reports []*rules.Report
	cause   uint8
	got     chan struct{}
}

func newReportSink(cause uint8) *reportSink {
	return &reportSink{cause: cause, got: make(chan struct{}, 16)}
}

func (r *reportSink) handle(_ context.Context, _ string, rep *rules.Report) uint8 {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	r.got <- struct{}{}
	return r.cause
}

func (r *reportSink) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(5 * time.Second):
		t.Fatal("no Session Report reached the SMF")
	}
}

// reportOverN4 runs the paging start over upf (a UDP or X-IO address):
// UPF-U's note becomes one Session Report Request (DLDR with the PDR and
// QFI) at the SMF that set the session up; a stale note (the FAR no longer
// buffers) becomes none.
func reportOverN4(t *testing.T, up *fakeUserPlane, upf string) {
	c := newClient(t)
	sink := newReportSink(pfcpx.CauseAccepted)
	c.OnReport(sink.handle)
	ctx := context.Background()
	s := idleSession("10.60.0.1")
	est, err := c.Establish(ctx, upf, s)
	if err != nil {
		t.Fatal(err)
	}
	up.notes <- shm.Note{UPSEID: est.UPSEID, PDRID: 2, QFI: 9}
	sink.wait(t)
	sink.mu.Lock()
	r := sink.reports[0]
	sink.mu.Unlock()
	if r.CPSEID != s.CPSEID || r.DownlinkData == nil || r.DownlinkData.PDRIDs[0] != 2 || r.DownlinkData.QFIs[0] != 9 {
		t.Fatalf("report %+v %+v, want the DLDR of PDR 2, QFI 9 for CP SEID %#x", r, r.DownlinkData, s.CPSEID)
	}
	// The Service Request made the FAR forward: a late note reports nothing.
	fwd := rules.FAR{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 0x100, PeerIPv4: gnbAddr}}
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{fwd}}}); err != nil {
		t.Fatal(err)
	}
	up.notes <- shm.Note{UPSEID: est.UPSEID, PDRID: 2, QFI: 9}
	select {
	case <-sink.got:
		t.Fatal("a note about a FAR that forwards again was reported")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestDownlinkDataReportOverUDP(t *testing.T) {
	up := newFakeUserPlane()
	u := startUPFC(t, testConfig(t), up)
	reportOverN4(t, up, u.N4Addrs()[0])
}

func TestDownlinkDataReportOverXIO(t *testing.T) {
	up := newFakeUserPlane()
	cfg := testConfig(t)
	cfg.SBI.Transport = "xio"
	cfg.UPF.C.PFCPAddr = freeUDPAddr(t)
	startUPFC(t, cfg, up)
	reportOverN4(t, up, pfcpx.Addr(cfg))
}

// An SMF that answers cause 65 has lost the session (TS 29.244 7.5.9):
// UPF-C has UPF-U drop its buffered data.
func TestReportAnsweredSessionNotFoundDiscardsTheBuffer(t *testing.T) {
	up := newFakeUserPlane()
	u := startUPFC(t, testConfig(t), up)
	c := newClient(t)
	sink := newReportSink(pfcpx.CauseSessionNotFound)
	c.OnReport(sink.handle)
	est, err := c.Establish(context.Background(), u.N4Addrs()[0], idleSession("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	up.notes <- shm.Note{UPSEID: est.UPSEID, PDRID: 2}
	sink.wait(t)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if d := up.discards(); len(d) == 1 && d[0] == est.UPSEID {
			return
		}
	}
	t.Fatalf("discarded %v, want the buffer of session %#x", up.discards(), est.UPSEID)
}

// An Update FAR with SNDEM that moves the tunnel (a path switch) has
// UPF-U send End Marker into the OLD tunnel; the flag is not installed.
func TestPathSwitchSendsEndMarkerIntoOldTunnel(t *testing.T) {
	up := newFakeUserPlane()
	u := startUPFC(t, testConfig(t), up)
	upf := u.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()
	est, err := c.Establish(ctx, upf, pduSession("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	target := netip.MustParseAddr("10.100.0.3")
	moved := rules.FAR{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
		OuterHeader: &rules.OuterHeader{TEID: 0x200, PeerIPv4: target}, SendEndMarker: true}
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{moved}}}); err != nil {
		t.Fatal(err)
	}
	up.mu.Lock()
	got := append([]rules.OuterHeader(nil), up.endMarkers...)
	up.mu.Unlock()
	if len(got) != 1 || got[0] != (rules.OuterHeader{TEID: 0x100, PeerIPv4: gnbAddr}) {
		t.Fatalf("End Markers %+v, want one into the old tunnel 0x100 at %s", got, gnbAddr)
	}
	installed, _ := up.Session(est.UPSEID)
	for _, f := range installed.FARs {
		if f.SendEndMarker {
			t.Fatalf("the one-off SNDEM was installed: %+v", f)
		}
	}
}

// A restarted UPF-C serves the sessions of the tables but has not heard
// from their SMF: a note for one waits, and is reported as soon as the SMF
// sends again (here a QoS change of that session).
func TestReportAfterRestartWaitsForTheSMF(t *testing.T) {
	up := newFakeUserPlane()
	s := idleSession("10.60.0.1")
	s.UPSEID, s.CPSEID, s.CPAddr = 7, 0x77, netip.MustParseAddr("127.0.0.1")
	s.PDRs[0].LocalFTEID = &rules.FTEID{TEID: 0x10, IPv4: n3Addr}
	if err := up.Install(s); err != nil {
		t.Fatal(err)
	}
	u := startUPFC(t, testConfig(t), up) // recovers session 7
	c := newClient(t)
	sink := newReportSink(pfcpx.CauseAccepted)
	c.OnReport(sink.handle)
	up.notes <- shm.Note{UPSEID: 7, PDRID: 2, QFI: 9}
	select {
	case <-sink.got:
		t.Fatal("a report reached an SMF UPF-C cannot know yet")
	case <-time.After(100 * time.Millisecond):
	}
	qer := s.QERs[0]
	qer.MBRDL = 1_000_000
	if _, err := c.Modify(context.Background(), u.N4Addrs()[0], 7, &rules.Modification{Update: rules.Rules{QERs: []rules.QER{qer}}}); err != nil {
		t.Fatal(err)
	}
	sink.wait(t)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if r := sink.reports[0]; r.CPSEID != 0x77 || r.DownlinkData == nil || r.DownlinkData.PDRIDs[0] != 2 {
		t.Fatalf("report %+v", r)
	}
}
