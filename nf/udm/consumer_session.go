package udm

// Consumer calls for PDU sessions: session management subscription data
// (TS 29.505 5.2.2.2, provisioned-data/sm-data) and the SMF registrations
// kept as context data (TS 29.505 context-data/smf-registrations).

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/free5gc/openapi/models"
)

// smData reads the SM subscription data, passing the SMF's single-nssai and
// dnn filters on (both already checked; "" for none).
func (u *udrClient) smData(ctx context.Context, supi, plmn, snssai, dnn string) ([]models.SessionManagementSubscriptionData, error) {
	q := url.Values{}
	if snssai != "" {
		q.Set("single-nssai", snssai)
	}
	if dnn != "" {
		q.Set("dnn", dnn)
	}
	path := url.PathEscape(supi) + "/" + url.PathEscape(plmn) + "/provisioned-data/sm-data"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out []models.SessionManagementSubscriptionData
	err := u.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

func smfRegPath(supi string, id int32) string {
	return url.PathEscape(supi) + "/context-data/smf-registrations/" + strconv.Itoa(int(id))
}

// putSMFRegistration stores the session's SMF; created is false when it
// replaced an earlier registration (the UDR then answers 204, without the
// Location of a new resource).
func (u *udrClient) putSMFRegistration(ctx context.Context, supi string, reg *models.SmfRegistration) (created bool, err error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return false, err
	}
	h, err := u.c.Do(ctx, http.MethodPut, base+udrDataPath+smfRegPath(supi, reg.PduSessionId), reg, nil)
	if err != nil {
		return false, userNotFound(err)
	}
	return h.Get("Location") != "", nil
}

func (u *udrClient) deleteSMFRegistration(ctx context.Context, supi string, id int32) error {
	return u.do(ctx, http.MethodDelete, smfRegPath(supi, id), nil, nil)
}

func (u *udrClient) smfRegistrations(ctx context.Context, supi string) ([]models.SmfRegistration, error) {
	var out []models.SmfRegistration
	err := u.do(ctx, http.MethodGet, url.PathEscape(supi)+"/context-data/smf-registrations", nil, &out)
	return out, err
}
