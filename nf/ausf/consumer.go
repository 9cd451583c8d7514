package ausf

// Consumer: the AUSF's calls to the UDM (Nudm_UEAuthentication, TS 29.503 5.4).

import (
	"context"
	"net/http"
	"net/url"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// udmClient reaches the UDM found through the NRF (cached for the
// discovery's validity period).
type udmClient struct {
	c   *sbi.Client
	nrf *sbi.NRFClient
}

func (u *udmClient) base(ctx context.Context) (string, error) {
	return u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UEAU)
}

// generateAuthData is Nudm_UEAuthentication_Get (TS 29.503 5.4.2.2).
func (u *udmClient) generateAuthData(ctx context.Context, supiOrSuci string, req models.AuthenticationInfoRequest) (*models.UdmUeauAuthenticationInfoResult, error) {
	base, err := u.base(ctx)
	if err != nil {
		return nil, err
	}
	var res models.UdmUeauAuthenticationInfoResult
	// A vector asked twice (the UDM died before answering) only skips an
	// SQN the UE never saw (sbi.SafeToRepeat).
	_, err = u.c.Do(sbi.SafeToRepeat(ctx), http.MethodPost, base+"/nudm-ueau/v1/"+url.PathEscape(supiOrSuci)+"/security-information/generate-auth-data", req, &res)
	return &res, err
}

// reportResult is Nudm_UEAuthentication_ResultConfirmation (TS 29.503 5.4.2.3).
func (u *udmClient) reportResult(ctx context.Context, supi string, ev models.AuthEvent) error {
	base, err := u.base(ctx)
	if err != nil {
		return err
	}
	_, err = u.c.Do(ctx, http.MethodPost, base+"/nudm-ueau/v1/"+url.PathEscape(supi)+"/auth-events", ev, nil)
	return err
}
