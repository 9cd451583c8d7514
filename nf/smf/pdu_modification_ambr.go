package smf

// A changed Session-AMBR in a policy update (TS 23.502 4.3.3.2 step 1b,
// the session rule's authSessAmbr, TS 29.512 5.6.2.8): the SMF updates the
// session-level QER at the UPF (step 2, TS 29.244 7.5.4 Update QER), which
// is where the AMBR is enforced.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// updateSessionAMBR applies d's session rule to c and, when the AMBR
// changed, modifies the UPF's session QER. A bad AMBR is the PCF's error
// (400) and leaves the session as it was.
func (n *NF) updateSessionAMBR(ctx context.Context, c *smContext, d *models.SmPolicyDecision) error {
	up, down := c.ambrUp, c.ambrDown
	if err := c.applySessionAMBR(d); err != nil {
		c.ambrUp, c.ambrDown = up, down
		return sbi.Rejectf(http.StatusBadRequest, "INVALID_SESSION_RULE", "%v", err)
	}
	if c.ambrUp == up && c.ambrDown == down {
		return nil
	}
	n4, err := n.n4Client()
	if err == nil {
		_, err = n4.Modify(ctx, n.upf, c.upSEID, c.sessionAMBRUpdated())
	}
	if err != nil {
		c.ambrUp, c.ambrDown = up, down
		return fmt.Errorf("N4 session modification (session AMBR): %w", err)
	}
	n.log.Info("session AMBR updated", "supi", c.supi, "psi", c.psi, "ul_bps", c.ambrUp, "dl_bps", c.ambrDown)
	return nil
}

// applySessionAMBR takes the AMBR of d's session rule (one applies at a
// time, TS 29.512 4.2.2.2); a change of the default QoS at run time is not
// supported here, so only the AMBR is read.
func (c *smContext) applySessionAMBR(d *models.SmPolicyDecision) error {
	for _, id := range sortedKeys(d.SessRules) {
		if r := d.SessRules[id]; r != nil {
			if r.AuthSessAmbr == nil {
				return nil
			}
			return c.setAMBR(r.AuthSessAmbr)
		}
	}
	return nil
}
