package amf

import "time"

// defaultListen binds the production N2 transport (package n2); nil until
// that package is wired in. defaultCrypto is package security.
var (
	defaultListen ListenFunc
	defaultCrypto = func() Crypto { return securityCrypto{} }
)

func nowIfZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
