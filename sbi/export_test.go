package sbi

import "time"

// SetClock replaces the NRF client's clock (discovery cache expiry).
func (n *NRFClient) SetClock(now func() time.Time) { n.now = now }

// SetRequestTimeout shortens the client's bound on one request.
func SetRequestTimeout(d time.Duration) (restore func()) {
	old := requestTimeout
	requestTimeout = d
	return func() { requestTimeout = old }
}

// SetClock replaces the issuer's clock (token iat and exp).
func (i *TokenIssuer) SetClock(now func() time.Time) { i.now = now }

// SetClock replaces the security's clock (token expiry, cache refresh).
func (s *Security) SetClock(now func() time.Time) { s.now = now }

// ForgetVerified empties the verified-token cache.
func (s *Security) ForgetVerified() {
	s.verifiedMu.Lock()
	clear(s.verified)
	s.verifiedMu.Unlock()
}
