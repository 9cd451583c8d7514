package u_test

import "testing"

// A shaped session (issue 13) sends through the same next-hop hold: what
// waited for the gNB's address leaves first, in order, then what came
// after it was learnt (the order TestHeldPacketsLeaveInOrderBeforeLaterOnes
// checks for a plain session; here the shaper releases the packets).
func TestShapedSessionsHeldPacketsLeaveInOrderBeforeLaterOnes(t *testing.T) {
	l := newLab(t)
	n6 := resolveUPF(t, l.dn, dnIP, upfN6.Addr()) // the gNB stays silent
	if err := l.table.Install(qosSession(1, ueIP, 100*mbit, 0, 0)); err != nil {
		t.Fatal(err)
	}
	want := numbered(1, 10)
	for _, p := range want[:5] {
		l.dn.send(t, downlinkFrame(n6, p))
	}
	n3 := awaitARPRequest(t, l.gnb, gnbIP)
	l.gnb.send(t, arpFrame(2, gnbMAC, gnbIP, n3, upfN3.Addr()))
	for _, p := range want[5:] {
		l.dn.send(t, downlinkFrame(n6, p))
	}
	if got := payloads(t, l.gnb, len(want), isGTPU, n3PayloadOff); !equal(got, want) {
		t.Errorf("gNB got %q, want %q", got, want)
	}
}
