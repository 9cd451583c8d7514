package udm

// Consumer: the UDM's calls to the UDR (Nudr_DataRepository, TS 29.504
// 5.2.2; resources of TS 29.505 subscription data).

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

const udrDataPath = "/nudr-dr/v1/subscription-data/"

// udrClient reaches the UDR found through the NRF (cached for the
// discovery's validity period).
type udrClient struct {
	c   *sbi.Client
	nrf *sbi.NRFClient
	res reservations // UDRs without the SQN reservation (sqn_reservation.go)
	// noPairs are the UDRs (API roots) without provisioned-data reads
	// (provisioned_reads.go).
	noPairs sync.Map
}

// do sends one request to the UDR at path below /nudr-dr/v1/subscription-data/.
func (u *udrClient) do(ctx context.Context, method, path string, in, out any) error {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return err
	}
	_, err = u.c.Do(ctx, method, base+udrDataPath+path, in, out)
	return userNotFound(err)
}

// userNotFound gives a UDR 404 the cause the UDM answers with (TS 29.503
// 6.3.7.3 and friends: USER_NOT_FOUND), unless the UDR said the user exists
// but the data set does not (DATA_NOT_FOUND).
func userNotFound(err error) error {
	if sbi.StatusOf(err) != http.StatusNotFound || sbi.CauseOf(err) == sbi.CauseDataNotFound {
		return err
	}
	return sbi.Rejectf(http.StatusNotFound, sbi.CauseUserNotFound, "the UDR has no subscriber: %v", err)
}

// authSubscription is the UDR's authentication subscription (TS 29.505
// 5.4.2.2) plus the fields of free5GC's older documents (permanentKey,
// milenage.op, opc), so a database written by either web console works.
type authSubscription struct {
	models.AuthenticationSubscription
	PermanentKey *struct {
		PermanentKeyValue string `json:"permanentKeyValue"`
	} `json:"permanentKey,omitempty"`
	Milenage *struct {
		Op *struct {
			OpValue string `json:"opValue"`
		} `json:"op,omitempty"`
	} `json:"milenage,omitempty"`
	Opc *struct {
		OpcValue string `json:"opcValue"`
	} `json:"opc,omitempty"`
}

func (u *udrClient) authSubscription(ctx context.Context, supi string) (*authSubscription, error) {
	var out authSubscription
	err := u.do(ctx, http.MethodGet, url.PathEscape(supi)+"/authentication-data/authentication-subscription", nil, &out)
	return &out, err
}

// storeSQN writes the new SQN_HE back (TS 29.505 5.4.2.3): a JSON Patch
// (RFC 6902) replacing /sequenceNumber, as free5GC's UDM sends it, preceded
// by a "test" of the SQN read, so the write is a compare-and-set: if
// another UDM instance moved the SQN meanwhile the UDR answers 409 and no
// SQN is issued twice (errSQNMoved).
func (u *udrClient) storeSQN(ctx context.Context, supi, read string, seq models.SequenceNumber) error {
	patch := []models.PatchItem{
		{Op: models.PatchOperation_TEST, Path: "/sequenceNumber/sqn", Value: read},
		{Op: models.PatchOperation_REPLACE, Path: "/sequenceNumber", Value: seq},
	}
	err := u.do(ctx, http.MethodPatch, url.PathEscape(supi)+"/authentication-data/authentication-subscription", patch, nil)
	if sbi.StatusOf(err) == http.StatusConflict {
		return errSQNMoved
	}
	return err
}

// errSQNMoved: the SQN changed between read and write (another UDM).
var errSQNMoved = errors.New("the UDR's SQN moved since it was read")

// amf3GPPAccess reads the stored serving AMF, e.g. after a UDM restart.
func (u *udrClient) amf3GPPAccess(ctx context.Context, supi string) (*models.Amf3GppAccessRegistration, error) {
	var out models.Amf3GppAccessRegistration
	err := u.do(ctx, http.MethodGet, url.PathEscape(supi)+"/context-data/amf-3gpp-access", nil, &out)
	return &out, err
}

func (u *udrClient) amData(ctx context.Context, supi, plmn string) (*models.AccessAndMobilitySubscriptionData, error) {
	var out models.AccessAndMobilitySubscriptionData
	err := u.do(ctx, http.MethodGet, url.PathEscape(supi)+"/"+url.PathEscape(plmn)+"/provisioned-data/am-data", nil, &out)
	return &out, err
}

// putAMF3GPPAccess stores the serving AMF (TS 29.505 5.2.2.3 context data).
func (u *udrClient) putAMF3GPPAccess(ctx context.Context, supi string, reg *models.Amf3GppAccessRegistration) error {
	return u.do(ctx, http.MethodPut, url.PathEscape(supi)+"/context-data/amf-3gpp-access", reg, nil)
}
