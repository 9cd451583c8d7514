package ngapx

import "testing"

// FuzzDecodeNGAP: the AMF's NGAP decode path never panics, whatever arrives.
func FuzzDecodeNGAP(f *testing.F) {
	for _, b := range samples(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pdu, err := Decode(b)
		if err != nil {
			return
		}
		_, _ = Summarize(pdu)
		_, _ = ParseNGSetupRequest(pdu)
		_, _ = ParseInitialUEMessage(pdu)
		_, _, _ = ResetAll(pdu)
	})
}
