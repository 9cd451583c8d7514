package u_test

import (
	"testing"
	"time"
)

// A downlink packet for a UE reaches N3 while UPF-U naps, without waiting
// the nap out (issue 12: paging's first packet, TS 23.502 4.2.3.3 step 1):
// the af_packet port's side socket ends the nap, and the counter of naps
// ended by a packet (l25gc status "idle naps ended by", l25gc_upf_naps_total)
// says so. Naps double from 10 µs up to the sleep (here 30 s), so 6 s after
// the last packet UPF-U is in the nap from 5.2 s to 10.5 s: a nap only a
// timeout ends would hold the packet more than 4 s.
func TestDownlinkPacketEndsUPFUsNap(t *testing.T) {
	l := newLabWith(t, "UPFU_SLEEP=30s")
	_, n6 := l.ready()
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	before := l.table.Stats()
	l.dn.send(t, downlinkFrame(n6, "after a long idle"))
	const bound = 2 * time.Second
	if _, err := l.gnb.recv(bound, isGTPU); err != nil {
		t.Fatalf("the downlink packet did not reach N3 within %v (UPF-U still napping?): %v (stats %+v)", bound, err, l.table.Stats())
	}
	after := l.table.Stats()
	if after.NapsByPacket <= before.NapsByPacket {
		t.Errorf("naps ended by a packet %d -> %d: want more after the downlink packet", before.NapsByPacket, after.NapsByPacket)
	}
	if before.Naps == 0 {
		t.Errorf("no nap counted in 6 s of idle")
	}
}
