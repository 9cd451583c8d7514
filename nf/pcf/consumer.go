package pcf

// Consumer: the PCF's calls to the UDR (Nudr_DataRepository policy data,
// TS 29.519 5.2.2).

import (
	"context"
	"net/http"
	"net/url"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// udrClient reaches the UDR found through the NRF (cached for the
// discovery's validity period).
type udrClient struct {
	c   *sbi.Client
	nrf *sbi.NRFClient
}

// amPolicyData reads the UE's AM policy data; nil, nil when the UDR holds
// none (404): the PCF then applies no UE-specific policy.
func (u *udrClient) amPolicyData(ctx context.Context, supi string) (*models.AmPolicyData, error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return nil, err
	}
	var out models.AmPolicyData
	_, err = u.c.Do(ctx, http.MethodGet, base+"/nudr-dr/v1/policy-data/ues/"+url.PathEscape(supi)+"/am-data", nil, &out)
	if sbi.StatusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
