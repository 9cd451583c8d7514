package gtpu

import (
	"bytes"
	"net/netip"
	"testing"
)

// FuzzParse: any input parses or fails with an error, never a panic; what
// parses encodes again, and that encoding is stable.
func FuzzParse(f *testing.F) {
	f.Add(ulVector)
	f.Add(must(GPDU(9, DLPDUSessionInformation, 5, []byte{0x45, 0}).Marshal()))
	f.Add(must(EchoRequest(1).Marshal()))
	f.Add(must(EchoResponse(EchoRequest(1)).Marshal()))
	f.Add(must(ErrorIndication(3, netip.MustParseAddr("2001:db8::1")).Marshal()))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		e1, err := m.Marshal()
		if err != nil {
			t.Fatalf("parsed message does not encode: %v (%+v)", err, m)
		}
		m2, err := Parse(e1)
		if err != nil {
			t.Fatalf("own encoding does not parse: %v\n% x", err, e1)
		}
		e2, err := m2.Marshal()
		if err != nil || !bytes.Equal(e1, e2) {
			t.Fatalf("encoding not stable: %v\n% x\n% x", err, e1, e2)
		}
	})
}
