package pfcpx

import (
	"context"

	"github.com/l25gc/l25gc/upf/rules"
)

// ModifyCreated is Modify for a modification that creates PDRs asking the
// UPF to choose their F-TEIDs (CH): it returns those F-TEIDs by PDR ID
// (Created PDR in the Session Modification Response, TS 29.244 7.5.5.2).
// The SMF's indirect data forwarding of an N2 handover needs the one the
// source gNB forwards to (TS 23.502 4.9.1.3.2 step 9a).
func (c *Client) ModifyCreated(ctx context.Context, upf string, upSEID uint64, m *rules.Modification) (map[uint16]rules.FTEID, error) {
	r, err := c.modify(ctx, upf, upSEID, m)
	if err != nil {
		return nil, err
	}
	return CreatedFTEIDsOf(r.CreatedPDR)
}
