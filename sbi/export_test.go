package sbi

import "time"

// SetClock replaces the NRF client's clock (discovery cache expiry).
func (n *NRFClient) SetClock(now func() time.Time) { n.now = now }
