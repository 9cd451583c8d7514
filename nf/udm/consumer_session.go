package udm

// Consumer calls for PDU sessions: session management subscription data
// (TS 29.505 5.2.2.2, provisioned-data/sm-data) and the SMF registrations
// kept as context data (TS 29.505 context-data/smf-registrations).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/free5gc/openapi/models"
)

// smData reads the SM subscription data, passing the SMF's single-nssai and
// dnn filters on (both already checked; "" for none), as the UDR encoded
// it: Nudm_SDM_Get answers it unchanged (as the AM data, provisioned_reads.go),
// so decoding it into the models and encoding it again would only cost
// CPU on every PDU session. It must be a JSON array (or null); empty says
// whether it holds no element.
func (u *udrClient) smData(ctx context.Context, supi, plmn, snssai, dnn string) (raw json.RawMessage, empty bool, err error) {
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
	if err := u.do(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, false, err
	}
	empty, ok := emptyJSONArray(raw)
	if !ok {
		return nil, false, errors.New("UDR sm-data is not a JSON array")
	}
	return raw, empty, nil
}

// emptyJSONArray reads a JSON value already checked valid: ok when it is
// an array or null (or absent), empty when it holds no element.
func emptyJSONArray(raw json.RawMessage) (empty, ok bool) {
	b := bytes.TrimSpace(raw)
	switch {
	case len(b) == 0 || string(b) == "null":
		return true, true
	case b[0] != '[':
		return false, false
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0, true
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
