package ngapx

import (
	"bytes"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/free5gc/ngap"

	"github.com/l25gc/l25gc/internal/tsharkcap"
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

// TestFastEncodedMessagesDissectInTShark: the hot messages as Encode now
// writes them (the fast path, octet-identical to ngap.Encoder as the test
// above shows) dissect in tshark as the messages they are, without error.
func TestFastEncodedMessagesDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	var pdus [][]byte
	var names []string
	for _, s := range hotSamples(t) {
		b, ok := encodeFast(s.pdu)
		if !ok || !bytes.Equal(b, s.bytes) {
			t.Fatalf("%s: fast path missed or differs", s.name)
		}
		pdus = append(pdus, b)
		names = append(names, strings.SplitN(s.name, "/", 2)[0])
	}
	text := tsharkcap.DissectNGAP(t, pdus...)
	for _, want := range names {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags a message:\n%s", text)
	}
}

// TestFastSummaryMatches: the AMF routes a hot message exactly as the
// reflective summary would.
func TestFastSummaryMatches(t *testing.T) {
	for _, s := range hotSamples(t) {
		got, ok := summarizeFast(s.pdu)
		want, err := summarizeAny(s.pdu)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast %+v (%v), reflective %+v (%v)", s.name, got, ok, want, err)
		}
	}
}
