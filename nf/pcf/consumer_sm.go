package pcf

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// smPolicyData reads the UE's SM policy data for the slice and DNN (TS
// 29.519 policy-data/ues/{ueId}/sm-data, query snssai and dnn): nil, nil
// when the UDR holds none for a known UE (DATA_NOT_FOUND); a UE the UDR
// does not know is 400 USER_UNKNOWN (TS 29.512 5.7.3).
func (u *udrClient) smPolicyData(ctx context.Context, supi string, slice *models.Snssai, dnn string) (*models.SmPolicyData, error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return nil, err
	}
	sn, err := json.Marshal(slice)
	if err != nil {
		return nil, err
	}
	q := url.Values{"snssai": {string(sn)}, "dnn": {dnn}}
	var out models.SmPolicyData
	_, err = u.c.Do(ctx, http.MethodGet, base+"/nudr-dr/v1/policy-data/ues/"+url.PathEscape(supi)+"/sm-data?"+q.Encode(), nil, &out)
	switch {
	case sbi.StatusOf(err) == http.StatusNotFound && sbi.CauseOf(err) == sbi.CauseDataNotFound:
		return nil, nil
	case sbi.StatusOf(err) == http.StatusNotFound:
		return nil, sbi.Rejectf(http.StatusBadRequest, causeUserUnknown, "the UDR has no subscriber %s", supi)
	case err != nil:
		return nil, err
	}
	return &out, nil
}

// qosFlowsKey is where the UDR keeps a subscriber's QoS flows in its
// operator-specific policy data (nf/udr QosFlowsKey).
const qosFlowsKey = "l25gc-qos-flows"

// policyFlows reads the UE's QoS flows (TS 29.519 operator-specific-data);
// nil, nil when it has none.
func (u *udrClient) policyFlows(ctx context.Context, supi string) (*policyFlows, error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return nil, err
	}
	var out map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	_, err = u.c.Do(ctx, http.MethodGet, base+"/nudr-dr/v1/policy-data/ues/"+url.PathEscape(supi)+"/operator-specific-data", nil, &out)
	if sbi.StatusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, ok := out[qosFlowsKey]
	if !ok {
		return nil, nil
	}
	var f policyFlows
	if err := json.Unmarshal(c.Value, &f); err != nil {
		return nil, fmt.Errorf("the UDR's %s of %s: %w", qosFlowsKey, supi, err)
	}
	return &f, nil
}
