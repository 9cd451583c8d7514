package smf

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/free5gc/openapi/models"
)

// FuzzPolicyModification: whatever SM policy decision a PCF (or the admin
// API) sends for an active session — malformed rates, filters, rules —
// the SMF applies it or refuses it with an error, never panics, and a
// refused decision leaves the session's flows and AMBR as they were.
func FuzzPolicyModification(f *testing.F) {
	n := fuzzSMF(f)
	for _, d := range []models.SmPolicyDecision{gbrDecision("2 Mbps", "5 Mbps"), ambrDecision("12 Mbps", "24 Mbps"),
		{PccRules: map[string]*models.PccRule{"x": {PccRuleId: "x", FlowInfos: []models.FlowInformation{{FlowDescription: "permit out 6 from 1.2.3.4/8 80 to assigned"}}}}}} {
		b, _ := json.Marshal(d)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d models.SmPolicyDecision
		if json.Unmarshal(b, &d) != nil {
			return
		}
		c := activeContext(n)
		flows, up, down := len(c.flows), c.ambrUp, c.ambrDown
		if _, err := n.policyModification(context.Background(), c, &d); err != nil && (len(c.flows) != flows || len(c.pending) != 0 ||
			c.ambrUp != up || c.ambrDown != down) {
			t.Fatalf("refused decision %s changed the session: %v", b, err)
		}
		n.teardown(context.Background(), c, "fuzz")
	})
}
