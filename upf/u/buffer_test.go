package u_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// Downlink buffering for idle UEs (TS 23.502 4.2.3.3, TS 29.244 5.2.3):
// these tests play UPF-C through the shared tables.

// idle is session seid with its downlink FAR set to buffer and notify
// (what the SMF installs at AN release, TS 23.502 4.2.6 step 6).
func idle(seid uint64, ue [4]byte) *rules.Session {
	s := session(seid, addr(ue), upTEID+uint32(seid), gnbTEID, qfi)
	s.FARs[1] = rules.FAR{ID: 2, Action: rules.ActionBuffer | rules.ActionNotify, Destination: rules.Access}
	return s
}

// forwarding turns s's downlink FAR back to the gNB's tunnel (Service
// Request, TS 23.502 4.2.3.3 step 17).
func forwarding(s *rules.Session, teid uint32) *rules.Session {
	s.FARs[1] = rules.FAR{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
		OuterHeader: &rules.OuterHeader{TEID: teid, PeerIPv4: gnbIP}}
	return s
}

func (l *lab) install(t *testing.T, s *rules.Session) {
	t.Helper()
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
}

// waitBuffer waits until UPF-U's buffer counters satisfy ok.
func (l *lab) waitBuffer(t *testing.T, what string, ok func(shm.BufferStats) bool) {
	t.Helper()
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if ok(l.table.Stats().Buffer) {
			return
		}
	}
	t.Fatalf("%s: buffer %+v", what, l.table.Stats().Buffer)
}

// sendNumbered sends n packets to ue from the DN, payloads prefix1..prefixN.
func (l *lab) sendNumbered(t *testing.T, n6 net.HardwareAddr, ue [4]byte, prefix string, n int) {
	t.Helper()
	for i := range n {
		l.dn.send(t, toUE(n6, ue, fmt.Sprintf("%s%d", prefix, i+1)))
	}
}

func toUE(n6 net.HardwareAddr, ue [4]byte, payload string) []byte {
	return eth(n6, dnMAC, 0x0800, ipv4(dnIP, addr(ue), 17, 64, udp(5201, 40000, []byte(payload))))
}

// received reads n downlink G-PDUs from the gNB's end and returns their
// UDP payloads in arrival order.
func (l *lab) received(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		f, err := l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff })
		if err != nil {
			t.Fatalf("after %v: %v (stats %+v)", out, err, l.table.Stats())
		}
		out = append(out, string(f[42+16+28:]))
	}
	return out
}

var ue1 = [4]byte{10, 60, 0, 1}

// The buffered packets leave in their original order, before a packet
// that arrives after the FAR turned to FORW; UPF-C heard of the session
// once, naming the downlink PDR and its QFI.
func TestBufferedDownlinkLeavesInOrderFirst(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := idle(1, ue1)
	l.install(t, s)
	l.sendNumbered(t, n6, ue1, "p", 3)
	l.waitBuffer(t, "3 packets held", func(b shm.BufferStats) bool { return b.Now == 3 && b.Buffered == 3 })
	notes := l.table.Notes()
	if len(notes) != 1 || notes[0] != (shm.Note{UPSEID: 1, PDRID: 2, QFI: qfi}) {
		t.Fatalf("notes %+v, want one for session 1, PDR 2, QFI %d", notes, qfi)
	}
	l.install(t, forwarding(s, gnbTEID))
	l.dn.send(t, toUE(n6, ue1, "p4"))
	if got := l.received(t, 4); strings.Join(got, " ") != "p1 p2 p3 p4" {
		t.Fatalf("gNB received %v, want p1 p2 p3 p4", got)
	}
	if b := l.table.Stats().Buffer; b.Flushed != 3 || b.Now != 0 {
		t.Fatalf("buffer %+v, want 3 flushed, none held", b)
	}
}

// A session holding upf.buffer.per_session packets drops its oldest for a
// new one; past upf.buffer.total a new packet is dropped; each counted.
func TestBufferOverflowDropsOldestThenNew(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := idle(1, ue1)
	l.install(t, s)
	l.sendNumbered(t, n6, ue1, "p", labBufferPerSession+2)
	l.waitBuffer(t, "oldest 2 dropped", func(b shm.BufferStats) bool {
		return b.Now == labBufferPerSession && b.Overflow == 2
	})
	ue2 := [4]byte{10, 60, 0, 2}
	l.install(t, idle(2, ue2))
	l.sendNumbered(t, n6, ue2, "q", 3)
	l.waitBuffer(t, "the total reached", func(b shm.BufferStats) bool { return b.Now == labBufferTotal && b.Overflow == 3 })
	l.install(t, forwarding(s, gnbTEID))
	if got := l.received(t, labBufferPerSession); strings.Join(got, " ") != "p3 p4 p5 p6" {
		t.Fatalf("gNB received %v, want the newest four: p3 p4 p5 p6", got)
	}
}

// One note per session however many packets come, until the SMF rewrites
// the FAR: DROP discards what was held (paging failed, TS 23.502 4.2.3.3
// step 4b), and BUFF|NOCP again makes the next packet notify once more.
// Removing the session discards its buffer.
func TestOneNotePerSessionUntilRearmed(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := idle(1, ue1)
	l.install(t, s)
	l.sendNumbered(t, n6, ue1, "p", 3)
	l.waitBuffer(t, "3 held", func(b shm.BufferStats) bool { return b.Buffered == 3 })
	s.QERs[0].MBRDL = 1_000_000 // a change that is not a FAR's: no new note
	l.install(t, s)
	l.dn.send(t, toUE(n6, ue1, "p4"))
	l.waitBuffer(t, "4 held", func(b shm.BufferStats) bool { return b.Buffered == 4 })
	if n := len(l.table.Notes()); n != 1 {
		t.Fatalf("%d notes for one session, want 1", n)
	}
	s.FARs[1].Action = rules.ActionDrop
	l.install(t, s)
	l.waitBuffer(t, "discarded", func(b shm.BufferStats) bool { return b.Now == 0 && b.Discarded == 4 })
	s.FARs[1].Action = rules.ActionBuffer | rules.ActionNotify
	l.install(t, s)
	l.dn.send(t, toUE(n6, ue1, "again"))
	l.waitBuffer(t, "held again", func(b shm.BufferStats) bool { return b.Now == 1 })
	if n := len(l.table.Notes()); n != 1 {
		t.Fatalf("%d notes after re-arming, want 1", n)
	}
	if err := l.table.Discard(1); err != nil { // the SMF answered cause 65
		t.Fatal(err)
	}
	l.waitBuffer(t, "discarded on request", func(b shm.BufferStats) bool { return b.Now == 0 && b.Discarded == 5 })
	l.dn.send(t, toUE(n6, ue1, "last"))
	l.waitBuffer(t, "held", func(b shm.BufferStats) bool { return b.Now == 1 })
	if err := l.table.Remove(1); err != nil {
		t.Fatal(err)
	}
	l.waitBuffer(t, "discarded with the session", func(b shm.BufferStats) bool { return b.Now == 0 && b.Discarded == 6 })
}

// End Marker (TS 29.281 7.3.2): GTP-U type 254, no payload, the OLD
// tunnel's TEID, sent to the old gNB after the switch; tshark reads it.
func TestEndMarkerIntoTheOldTunnel(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	l.install(t, s)
	l.install(t, forwarding(s, gnbTEID+1))
	if err := l.table.SendEndMarker(1, rules.OuterHeader{TEID: gnbTEID, PeerIPv4: gnbIP}); err != nil {
		t.Fatal(err)
	}
	f, err := l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 254 })
	if err != nil {
		t.Fatalf("no End Marker: %v (stats %+v)", err, l.table.Stats())
	}
	g := f[42:]
	want := []byte{0x30, 254, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(want[4:], gnbTEID)
	if !bytes.Equal(g, want) || binary.BigEndian.Uint16(f[38:]) != 16 || !bytes.Equal(f[30:34], gnbIP.AsSlice()) {
		t.Fatalf("End Marker frame % x, want GTP-U % x in 16 UDP octets to %s", f, want, gnbIP)
	}
	dissectEndMarker(t, f)
	if b := l.table.Stats().Buffer; b.EndMarkers != 1 {
		t.Fatalf("end markers counted %d, want 1", b.EndMarkers)
	}
	l.dn.send(t, downlinkFrame(n6, "new path"))
	f, err = l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff })
	if err != nil || binary.BigEndian.Uint32(f[46:]) != gnbTEID+1 {
		t.Fatalf("downlink after the switch: %v, want the new TEID %#x", err, gnbTEID+1)
	}
}

// dissectEndMarker has tshark read frame and fails on a malformed packet
// or when it is not a GTP-U End Marker.
func dissectEndMarker(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark not installed: the End Marker is not dissected")
		return
	}
	path := filepath.Join(t.TempDir(), "em.pcap")
	if err := os.WriteFile(path, pcap(frame), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "gtp.message", "-e", "_ws.malformed").Output()
	if err != nil {
		t.Fatalf("tshark: %v: %s", err, out)
	}
	if fields := strings.Fields(string(out)); len(fields) != 1 || (fields[0] != "0xfe" && fields[0] != "254") {
		t.Fatalf("tshark read %q, want message type 254 and nothing malformed", out)
	}
}

// pcap is a classic pcap file of one Ethernet frame.
func pcap(frame []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xa1b2c3d4)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 65535)
	b = binary.LittleEndian.AppendUint32(b, 1) // Ethernet
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frame)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frame)))
	return append(b, frame...)
}

const fwdTEID, targetTEID = 0x3003, 0x4004

// withForwardingTunnel adds an indirect forwarding tunnel to s (TS 23.502
// 4.9.1.3.2): a PDR on N3 at fwdTEID (naming the UE when withUE) whose FAR
// sends to the target gNB's targetTEID.
func withForwardingTunnel(s *rules.Session, withUE bool) *rules.Session {
	p := rules.PDR{ID: 5, Precedence: 100, Source: rules.Access,
		LocalFTEID: &rules.FTEID{TEID: fwdTEID, IPv4: upfN3.Addr()}, OuterHeaderRemoval: true, FARID: 5}
	if withUE {
		p.UEIPv4 = ueIP
	}
	s.PDRs = append(s.PDRs, p)
	s.FARs = append(s.FARs, rules.FAR{ID: 5, Action: rules.ActionForward, Destination: rules.Access,
		OuterHeader: &rules.OuterHeader{TEID: targetTEID, PeerIPv4: gnbIP}})
	return s
}

// Indirect data forwarding (TS 23.502 4.9.1.3.2): what the source gNB
// sends into the forwarding tunnel (a PDR on N3 whose FAR goes back to
// ACCESS) leaves in the target gNB's tunnel, with its QFI.
func TestIndirectForwardingTunnel(t *testing.T) {
	l := newLab(t)
	n3, _ := l.ready()
	l.install(t, withForwardingTunnel(session(1, ueIP, upTEID, gnbTEID, qfi), true))
	data := ipv4(dnIP, ueIP, 17, 63, udp(5201, 40000, []byte("forwarded")))
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, fwdTEID, 7, data)))
	f, err := l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff })
	if err != nil {
		t.Fatalf("nothing forwarded: %v (stats %+v)", err, l.table.Stats())
	}
	if teid, q := downlinkMarks(f); teid != targetTEID || q != 7 {
		t.Fatalf("forwarded into TEID %#x QFI %d, want %#x QFI 7", teid, q, targetTEID)
	}
	if got := f[42+16+28:]; string(got) != "forwarded" {
		t.Fatalf("forwarded payload %q", got)
	}
}

// UPF-C sleeps on its doorbell and wakes for UPF-U's note: the first
// buffered packet reaches the watcher without polling.
func TestDoorbellWakesTheWatcher(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	notes := make(chan shm.Note, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.table.WatchDownlinkData(ctx, func(n shm.Note) { notes <- n }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	l.install(t, idle(1, ue1))
	// Send once the watcher sleeps on its doorbell, so the bell, not the
	// first drain, must wake it.
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(tablesConfig().Path() + ".bell"); err == nil {
			break
		}
	}
	time.Sleep(time.Millisecond)
	l.dn.send(t, toUE(n6, ue1, "wake up"))
	select {
	case n := <-notes:
		if n.UPSEID != 1 || n.PDRID != 2 {
			t.Fatalf("note %+v", n)
		}
	case <-time.After(wait):
		t.Fatalf("no note reached the watcher (stats %+v)", l.table.Stats().Buffer)
	}
}

// The source gNB's End Marker on the forwarding tunnel goes on to the
// target gNB in the forwarding FAR's tunnel (TS 23.502 4.9.1.3.3 step 3).
func TestEndMarkerRelayedOnForwardingTunnel(t *testing.T) {
	l := newLab(t)
	n3, _ := l.ready()
	l.install(t, withForwardingTunnel(session(1, ueIP, upTEID, gnbTEID, qfi), false))
	l.gnb.send(t, l.n3Frame(n3, gtpu(254, fwdTEID, 0, nil)))
	f, err := l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 254 })
	if err != nil {
		t.Fatalf("no End Marker relayed: %v (stats %+v)", err, l.table.Stats())
	}
	if teid := binary.BigEndian.Uint32(f[46:]); teid != targetTEID {
		t.Fatalf("End Marker into TEID %#x, want the target's %#x", teid, targetTEID)
	}
	// On the session's own uplink tunnel an End Marker means nothing: dropped.
	l.expectDrop(t, "gtpu_type", func() { l.gnb.send(t, l.n3Frame(n3, gtpu(254, upTEID, 0, nil))) })
}

// Paging failed (TS 23.502 4.2.3.3 step 4b): the SMF sets the FAR to DROP
// and at once back to BUFF|NOCP; what was held is discarded even when
// UPF-U looks only after the second rewrite, and the next packet is noted
// again.
func TestDropThenRearmDiscardsWhatWasHeld(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := idle(1, ue1)
	l.install(t, s)
	l.dn.send(t, toUE(n6, ue1, "old"))
	l.waitBuffer(t, "held", func(b shm.BufferStats) bool { return b.Now == 1 })
	s.FARs[1].Action = rules.ActionDrop
	l.install(t, s)
	s.FARs[1].Action = rules.ActionBuffer | rules.ActionNotify
	l.install(t, s)
	l.waitBuffer(t, "discarded", func(b shm.BufferStats) bool { return b.Now == 0 && b.Discarded == 1 })
	l.dn.send(t, toUE(n6, ue1, "new"))
	l.waitBuffer(t, "held again", func(b shm.BufferStats) bool { return b.Now == 1 })
	if n := len(l.table.Notes()); n != 2 {
		t.Fatalf("%d notes, want 2: one per paging", n)
	}
	l.install(t, forwarding(s, gnbTEID))
	if got := l.received(t, 1); got[0] != "new" {
		t.Fatalf("gNB received %v, want only the packet after the failed paging", got)
	}
}

// A napping UPF-U takes UPF-C's command at once: UPF-C rings UPF-U's
// doorbell (UPF_WAKE_SUFFIX) after queuing it, so a paged UE's buffered
// packets leave when the SMF turns the FAR to FORW, not when the nap ends.
// Naps double from 10 µs up to the sleep (here 30 s), so 6 s after the
// last packet UPF-U is in the nap from 5.2 s to 10.5 s: without the
// doorbell the flush would wait more than 4 s.
func TestCommandEndsUPFUsNap(t *testing.T) {
	l := newLabWith(t, "UPFU_SLEEP=30s")
	_, n6 := l.ready()
	s := idle(1, ue1)
	l.install(t, s)
	l.sendNumbered(t, n6, ue1, "p", 1)
	l.waitBuffer(t, "1 packet held", func(b shm.BufferStats) bool { return b.Now == 1 })
	time.Sleep(6 * time.Second)
	l.install(t, forwarding(s, gnbTEID))
	const bound = 2 * time.Second
	if _, err := l.gnb.recv(bound, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff }); err != nil {
		t.Fatalf("the buffered packet did not leave within %v of the FAR turning to FORW (UPF-U still napping?): %v", bound, err)
	}
}
