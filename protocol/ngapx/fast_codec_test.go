package ngapx

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/free5gc/ngap"
)

// TestFastEncoderMatchesLibrary: every hot message the AMF and the
// simulator build comes out of the fast encoder octet for octet as
// ngap.Encoder writes it, so peers (and tshark) see exactly what they saw.
func TestFastEncoderMatchesLibrary(t *testing.T) {
	for _, s := range hotSamples(t) {
		got, ok := encodeFast(s.pdu)
		if !ok {
			t.Errorf("%s: not covered by the fast path", s.name)
			continue
		}
		want, err := ngap.Encoder(*s.pdu)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n fast %x\n lib  %x", s.name, got, want)
		}
	}
}

// TestFastDecoderMatchesLibrary: the fast decoder gives the very value
// ngap.Decoder gives for every hot message.
func TestFastDecoderMatchesLibrary(t *testing.T) {
	for _, s := range hotSamples(t) {
		got, ok := decodeFast(s.bytes)
		if !ok {
			t.Errorf("%s: not covered by the fast path", s.name)
			continue
		}
		if !reflect.DeepEqual(got, s.pdu) {
			t.Errorf("%s:\n fast %s\n lib  %s", s.name, ngap.PrintResult(reflect.ValueOf(got), 0), ngap.PrintResult(reflect.ValueOf(s.pdu), 0))
		}
	}
}
