package ngapx

import (
	"bytes"
	"testing"

	"github.com/free5gc/openapi/models"
)

// TS 38.413 8.3.1.2 / TS 23.501 5.4.4.1: the UE Radio Capability the AMF
// kept reaches the gNB in Initial Context Setup Request; without one the
// gNB reads none (and asks the UE).
func TestInitialContextSetupRequestCarriesTheKeptRadioCapability(t *testing.T) {
	capability := []byte("opaque UE radio capability")
	for _, c := range []struct {
		name string
		give []byte
	}{{"kept", capability}, {"none", nil}} {
		b, err := BuildInitialContextSetupRequest(InitialContext{AMFUEID: 3, RANUEID: 4, GUAMI: testGUAMI,
			Allowed: []models.Snssai{{Sst: 1}}, KgNB: make([]byte, 32), RadioCapability: c.give})
		if err != nil {
			t.Fatal(err)
		}
		pdu, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseRANInitialContextSetupRequest(pdu)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.RadioCapability, c.give) || (c.give == nil) != (got.RadioCapability == nil) {
			t.Errorf("%s: the gNB read radio capability %q, want %q", c.name, got.RadioCapability, c.give)
		}
	}
}
