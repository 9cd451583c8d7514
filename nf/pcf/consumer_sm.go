package pcf

import (
	"context"
	"encoding/json"
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
