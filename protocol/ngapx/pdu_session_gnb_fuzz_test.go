package ngapx_test

import (
	"testing"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

// FuzzDecodeSetupRequestTransfer: the transfer an SMF writes reaches the
// gNB as opaque octets; reading them never panics.
func FuzzDecodeSetupRequestTransfer(f *testing.F) {
	if b, err := ngapxtest.SetupRequestTransfer(ngapxtest.Session{ID: 1, UL: upf, QFIs: []uint8{1}}); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ngapx.DecodeSetupRequestTransfer(b)
	})
}
