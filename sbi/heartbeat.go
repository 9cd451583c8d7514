package sbi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"
)

// heartbeatPatch is the heartbeat NFUpdate body (TS 29.510 5.2.2.3.2): a
// JSON Patch replacing nfStatus with REGISTERED.
var heartbeatPatch = []models.PatchItem{{Op: models.PatchOperation_REPLACE, Path: "/nfStatus",
	Value: string(models.NrfNfManagementNfStatus_REGISTERED)}}

// HeartbeatPeriod is the heartBeatTimer the NRF assigned at registration
// (0 before registration or when the NRF asks for none).
func (n *NRFClient) HeartbeatPeriod() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.heartbeat
}

// KeepAlive sends a heartbeat every heartbeat period until ctx ends
// (TS 29.510 5.2.2.3.2); report, when not nil, learns each failure. It
// returns at once when the NF is not registered or no period was assigned.
func (n *NRFClient) KeepAlive(ctx context.Context, report func(error)) {
	for {
		period := n.HeartbeatPeriod()
		if period <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		if err := n.Heartbeat(ctx); err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
	}
}

// Heartbeat sends one heartbeat. An NRF that does not know the instance
// (404: it restarted, or it removed the profile) gets the whole profile
// again (TS 29.510 5.2.2.3.2: the NF registers anew).
func (n *NRFClient) Heartbeat(ctx context.Context) error {
	n.mu.Lock()
	self := n.self
	n.mu.Unlock()
	if self.NfInstanceId == "" {
		return fmt.Errorf("heartbeat: not registered")
	}
	_, err := n.client.Do(ctx, http.MethodPatch, n.nrfURI+NFManagementPath+self.NfInstanceId, heartbeatPatch, nil)
	if StatusOf(err) != http.StatusNotFound {
		return err
	}
	if err := n.Register(ctx, self); err != nil {
		return fmt.Errorf("heartbeat answered 404; registering again: %w", err)
	}
	return nil
}
