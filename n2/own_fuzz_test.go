package n2

import (
	"bytes"
	"testing"
)

// fuzzAssoc is an established own-data-path association whose packets go
// nowhere: what the listener's reader hands packets to.
func fuzzAssoc() *ownAssoc {
	o := Options{HeartbeatInterval: -1, MaxMessageSize: 8 << 10}
	a := newOwnAssoc(ownConfig{send: func([]byte) error { return nil }, release: func() {}, neg: &negotiation{},
		localPort: 38412, peerPort: 38412}, o)
	a.state = stateEstablished
	a.begin(initChunk{tag: 1, rwnd: 1 << 16, outbound: 4, inbound: 4, initialTSN: 1000},
		initChunk{tag: 2, rwnd: 1 << 16, outbound: 4, inbound: 4, initialTSN: 5000}, o)
	return a
}

// FuzzOwnDataPathChunks feeds arbitrary chunks, in a packet with our tag
// and a valid checksum, to an established association: no input may
// panic it, and whatever it delivers is a whole NGAP message no larger
// than MaxMessageSize.
func FuzzOwnDataPathChunks(f *testing.F) {
	data := func(flags uint8, tsn uint32, payload string) []byte {
		return appendData(nil, sctpData{flags: flags, tsn: tsn, stream: 1, ppid: PPIDNGAP, data: []byte(payload)})
	}
	f.Add(data(flagDataBegin|flagDataEnd, 5000, "whole"))
	f.Add(append(data(flagDataBegin, 5000, "first "), data(flagDataEnd, 5001, "last")...))
	f.Add(append(data(flagDataEnd, 5002, "late"), data(flagDataBegin|flagDataEnd, 5000, "early")...))
	f.Add(appendSack(nil, sack{cumTSN: 999, rwnd: 4096, gaps: []gapBlock{{2, 3}}, dups: []uint32{7}}))
	f.Add(encodeChunk(chunkHeartbeat, 0, encodeParam(1, []byte("info"))))
	f.Add(encodeChunk(chunkShutdown, 0, []byte{0, 0, 3, 0xe7}))
	f.Add(encodeChunk(chunkAbort, 0, nil))
	f.Add(append(encodeChunk(0x80, 0, []byte("skip me")), data(flagDataBegin|flagDataEnd, 5000, "after")...))
	f.Fuzz(func(t *testing.T, chunks []byte) {
		a := fuzzAssoc()
		defer a.drop(errAborted)
		pkt := append(a.header(1), chunks...)
		fillChecksum(pkt)
		p, err := parseSCTP(pkt)
		if err != nil {
			return
		}
		a.receive(p, 0)
		for {
			select {
			case m := <-a.msgs:
				if len(m.pdu) == 0 || len(m.pdu) > int(a.maxMessage) || !bytes.Contains(chunks, m.pdu[:min(len(m.pdu), 4)]) {
					t.Fatalf("delivered %d bytes that no DATA chunk carried whole", len(m.pdu))
				}
			default:
				return
			}
		}
	})
}

// FuzzSackChunk: a SACK that parses encodes back to the same bytes.
func FuzzSackChunk(f *testing.F) {
	f.Add(appendSack(nil, sack{cumTSN: 1, rwnd: 2, gaps: []gapBlock{{1, 2}}, dups: []uint32{3}}))
	f.Fuzz(func(t *testing.T, chunk []byte) {
		s, err := parseSack(chunk)
		if err != nil {
			return
		}
		if again := appendSack(nil, s); !bytes.Equal(again[4:], chunk[4:]) {
			t.Fatalf("SACK %x re-encoded as %x", chunk, again)
		}
	})
}
