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
