package n2

import (
	"bytes"
	"testing"
)

// mirrorAssoc is the peer of fuzzAssoc: its INIT is fuzzAssoc's peer's and
// the other way round, so the packets of one go to the other as they are.
// Its sent packets are kept.
func mirrorAssoc(t *testing.T) (*ownAssoc, *[][]byte) {
	t.Helper()
	var sent [][]byte
	o := Options{HeartbeatInterval: -1, MaxMessageSize: 8 << 10}
	b := newOwnAssoc(ownConfig{send: func(p []byte) error { sent = append(sent, append([]byte(nil), p...)); return nil },
		release: func() {}, neg: &negotiation{}, localPort: 38412, peerPort: 38412}, o)
	b.state = stateEstablished
	b.begin(initChunk{tag: 2, rwnd: 1 << 16, outbound: 4, inbound: 4, initialTSN: 5000},
		initChunk{tag: 1, rwnd: 1 << 16, outbound: 4, inbound: 4, initialTSN: 1000}, o)
	t.Cleanup(func() { b.drop(errAborted) })
	return b, &sent
}

func deliver(t *testing.T, to *ownAssoc, pkts [][]byte) {
	t.Helper()
	for _, raw := range pkts {
		p, err := parseSCTP(raw)
		if err != nil {
			t.Fatal(err)
		}
		to.receive(p, 0)
	}
}

// A message of two fragments with one MTU of cwnd (as after a T3-rtx
// expiry): the first fragment goes, the second waits for its SACK. The
// peer has one packet and no message to answer, so a delayed SACK would
// hold the message sackDelay (200 ms). The first packet carries the I bit
// and the peer SACKs it at once (RFC 9260 6.2), which lets the second go.
func TestCwndLimitedFragmentAsksForAnImmediateSack(t *testing.T) {
	a, sentA := sentAssoc(t)
	b, sentB := mirrorAssoc(t)
	a.mu.Lock()
	a.snd.cc.cwnd = ownMTU
	a.mu.Unlock()
	msg := bytes.Repeat([]byte{'n'}, ownMaxChunkData+100)
	if err := a.WriteMsg(msg, 1); err != nil {
		t.Fatal(err)
	}
	if got := dataTSNs(t, *sentA); len(got) != 1 {
		t.Fatalf("sent TSNs %v with one MTU of cwnd, want the first fragment only", got)
	}
	deliver(t, b, *sentA)
	if len(*sentB) != 1 {
		t.Fatalf("the peer sent %d packets on a fragment it must SACK at once, want 1 SACK", len(*sentB))
	}
	mark := len(*sentA)
	deliver(t, a, *sentB)
	if got := dataTSNs(t, (*sentA)[mark:]); len(got) != 1 || got[0] != 1001 {
		t.Fatalf("after the peer's SACK the sender sent TSNs %v, want the second fragment 1001", got)
	}
	deliver(t, b, (*sentA)[mark:])
	select {
	case m := <-b.msgs:
		if !bytes.Equal(m.pdu, msg) {
			t.Fatalf("delivered %d bytes, want the %d-byte message", len(m.pdu), len(msg))
		}
	default:
		t.Fatal("the message was not delivered after both fragments")
	}
}

// A lone message that cwnd lets go whole asks for no immediate SACK: the
// answer it provokes carries the SACK (6.2), and the receiver waits for it.
func TestLoneMessageKeepsTheDelayedSack(t *testing.T) {
	a, sentA := sentAssoc(t)
	b, sentB := mirrorAssoc(t)
	if err := a.WriteMsg([]byte("NGAP InitialUEMessage"), 1); err != nil {
		t.Fatal(err)
	}
	deliver(t, b, *sentA)
	if len(*sentB) != 0 {
		t.Fatalf("the peer sent %d packets for a lone message, want its SACK delayed for the answer to carry", len(*sentB))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.rcv.sackOwed() || !b.rcv.sackTimer.running() {
		t.Fatal("the peer owes no SACK or has no delayed-SACK timer running")
	}
}
