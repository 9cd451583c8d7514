package amf

import "time"

// There is no default N2 listener: the caller passes one (cmd/l25gc:
// amf.AdaptListen(n2.Listen)), so the AMF does not import its transport.
// The default Crypto is package security (securityCrypto).

func nowIfZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
