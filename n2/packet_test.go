package n2

import (
	"net/netip"
	"testing"
)

// discardLayer swallows what the listener sends.
type discardLayer struct{ udpLayer }

func (discardLayer) writePacket([]byte, netip.AddrPort) error { return nil }

// FuzzRawPacket feeds the packet parser and the listener's handling of
// packets from anyone (INIT, COOKIE ECHO, out of the blue) arbitrary bytes:
// a wrong checksum or a chunk length past the end is refused, nothing
// panics, and nothing but a valid COOKIE ECHO (which needs our key) sets up
// an association.
func FuzzRawPacket(f *testing.F) {
	f.Add(buildPacket(5000, 38412, 0, encodeChunk(chunkInit, 0, initValue(7, 2, 2, 1))))
	f.Add(buildPacket(5000, 38412, 9, encodeChunk(chunkCookieEcho, 0, make([]byte, 80))))
	f.Add(buildPacket(5000, 38412, 9, encodeChunk(chunkData, 3, []byte("0123456789abcdef"))))
	f.Add(buildPacket(5000, 38412, 9, encodeChunk(chunkShutdownAck, 0, nil), encodeChunk(chunkAbort, 1, nil)))
	f.Add([]byte{0, 1, 2})
	l := &sctpListener{pl: discardLayer{}, port: 38412, jar: newCookieJar(), assocs: map[endpoint]*peerConn{}}
	from := netip.MustParseAddrPort("192.0.2.1:0")
	f.Fuzz(func(t *testing.T, raw []byte) {
		pkt, err := parseSCTP(raw)
		if err == nil {
			for _, c := range pkt.chunks {
				if c.off+c.length > len(raw) || c.length < 4 {
					t.Fatalf("chunk %+v outside %d bytes", c, len(raw))
				}
			}
		} else if checksumOK(raw) && len(raw) >= commonHeaderLen+4 && err == errChecksum {
			t.Fatal("a packet with a valid checksum refused for its checksum")
		}
		// The checksum would refuse most inputs: fix it so the chunk
		// handling below is reached too.
		if len(raw) >= commonHeaderLen {
			fixed := append([]byte(nil), raw...)
			fillChecksum(fixed)
			l.handle(from, fixed)
		}
		l.handle(from, raw)
		if n := l.associations(); n != 0 {
			t.Fatalf("%d associations from fuzzed packets", n)
		}
	})
}

// A packet with one flipped bit fails its CRC32c (RFC 4960 6.8); chunks
// running past the end are refused.
func TestParseSCTPRefusesDamage(t *testing.T) {
	good := buildPacket(1, 2, 3, encodeChunk(chunkData, 3, []byte("payload")))
	if _, err := parseSCTP(good); err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-1] ^= 0x10
	if _, err := parseSCTP(flipped); err != errChecksum {
		t.Fatalf("flipped bit: %v, want %v", err, errChecksum)
	}
	long := append([]byte(nil), good...)
	long[commonHeaderLen+3] = 200 // chunk length past the end
	fillChecksum(long)
	if _, err := parseSCTP(long); err == nil {
		t.Fatal("a chunk longer than the packet was accepted")
	}
}
