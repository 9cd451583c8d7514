package amf

import "time"

// defaultListen and defaultCrypto bind the production packages n2 and
// security; they are nil until those packages are wired in.
var (
	defaultListen ListenFunc
	defaultCrypto = func() Crypto { return nil }
)

func nowIfZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
