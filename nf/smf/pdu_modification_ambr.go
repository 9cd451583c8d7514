package smf

// A changed Session-AMBR in a policy update (TS 23.502 4.3.3.2 step 1b,
// the session rule's authSessAmbr, TS 29.512 5.6.2.8): the SMF updates the
// session-level QER at the UPF (step 2, TS 29.244 7.5.4 Update QER), which
// is where the AMBR is enforced, and tells the UE and the gNB the new
// Session-AMBR (step 3b; pdu_modification_policy.go).

import (
	"errors"
	"fmt"

	"github.com/free5gc/openapi/models"
)

// requestedAMBR is the AMBR of d's session rule (one applies at a time,
// TS 29.512 4.2.2.2), or c's own when d sets none; a change of the default
// QoS at run time is not supported here, so only the AMBR is read.
func (c *smContext) requestedAMBR(d *models.SmPolicyDecision) (up, down uint64, err error) {
	for _, id := range sortedKeys(d.SessRules) {
		r := d.SessRules[id]
		if r == nil {
			continue
		}
		if r.AuthSessAmbr == nil {
			break
		}
		up, errUp := parseBitRate(r.AuthSessAmbr.Uplink)
		down, errDown := parseBitRate(r.AuthSessAmbr.Downlink)
		if err := errors.Join(errUp, errDown); err != nil {
			return 0, 0, fmt.Errorf("session rule %s: authSessAmbr: %w", id, err)
		}
		if up == 0 || down == 0 {
			// TS 24.501 9.11.4.14 and TS 38.413 9.3.1.69 carry no zero AMBR.
			return 0, 0, fmt.Errorf("session rule %s: authSessAmbr %q/%q: both directions must be above 0", id, r.AuthSessAmbr.Uplink, r.AuthSessAmbr.Downlink)
		}
		return up, down, nil
	}
	return c.ambrUp, c.ambrDown, nil
}
