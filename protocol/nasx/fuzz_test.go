package nasx

import "testing"

// FuzzDecodeNAS: the AMF's NAS decode path never panics, whatever arrives.
func FuzzDecodeNAS(f *testing.F) {
	for _, b := range samples(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := PeekHeader(b); err == nil && !h.Protected() {
			_, _ = Decode(b)
		}
		_, _ = Decode(b)
		if len(b) > 1 {
			_, _ = ParseMobileIdentity(b[1:])
			_, _ = DecodeNSSAI(b[1:])
		}
	})
}
