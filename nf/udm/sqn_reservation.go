package udm

// One UDR round trip per vector (TS 33.501 6.1.3.2 step 2; TS 33.102 C.3):
// the UDR's SQN reservation (nf/udr/handler_sqn_reservation.go, an l25gc
// extension) moves SQN_HE forward and answers the credentials at once,
// where the standard resources need a GET, then a compare-and-set PATCH,
// in sequence. A UDR that does not know the reservation (another core's)
// answers 404 or 405 and is asked the standard way from then on.
//
// Why not answer before the SQN is stored instead: a vector that leaves
// before its SQN is durable at the UDR can be issued again with the same
// SQN when the UDM dies (or the PATCH loses a compare-and-set to another
// UDM) in between — exactly what C.3 forbids. The reservation keeps the
// rule (the SQN is stored before the vector exists) and still saves the
// round trip.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// sqnReservationPath is udr.SQNReservationPath (a test keeps them equal;
// the UDM does not import the UDR's package).
const sqnReservationPath = "/authentication-data/authentication-subscription/l25gc-sqn-reservation"

// sqnReservation is the UDR's answer, with the credentials in every shape
// authSubscription reads.
type sqnReservation struct {
	AuthenticationSubscription authSubscription `json:"authenticationSubscription"`
	SQN                        string           `json:"sqn"`
}

// errNoReservation: the UDR does not offer the reservation; use GET+PATCH.
var errNoReservation = errors.New("the UDR offers no SQN reservation")

// reservations remembers the UDRs (by API root) that do not offer it.
type reservations struct {
	unsupported sync.Map // base URI → struct{}
}

// reserveSQN asks the UDR for the subscriber's credentials and a fresh SQN
// in one round trip. errNoReservation means: ask the standard way. A 404
// USER_NOT_FOUND is the answer the standard GET would give, so it is
// returned as is.
func (u *udrClient) reserveSQN(ctx context.Context, supi string) (*authSubscription, uint64, error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return nil, 0, err
	}
	if _, no := u.res.unsupported.Load(base); no {
		return nil, 0, errNoReservation
	}
	var out sqnReservation
	// Sent twice (the UDR died after answering), it only skips an SQN.
	_, err = u.c.Do(sbi.SafeToRepeat(ctx), http.MethodPost, base+udrDataPath+url.PathEscape(supi)+sqnReservationPath, nil, &out)
	if err != nil {
		return nil, 0, u.reservationFailed(base, err)
	}
	sqn, err := hexLen("reserved sequence number", out.SQN, security.SQNLen)
	if err != nil {
		return nil, 0, errNoReservation
	}
	return &out.AuthenticationSubscription, sqnValue(sqn), nil
}

// reservationFailed sorts a failed reservation: USER_NOT_FOUND stands, a
// route the UDR does not know is remembered, anything else is retried the
// standard way (whose error then is the one the UDM answers, as before).
func (u *udrClient) reservationFailed(base string, err error) error {
	status, cause := sbi.StatusOf(err), sbi.CauseOf(err)
	switch {
	case status == http.StatusNotFound && cause == sbi.CauseUserNotFound:
		return userNotFound(err)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented:
		u.res.unsupported.Store(base, struct{}{})
	}
	return errNoReservation
}

// issueReservedVector is steps 2 and 4-6 of generateAuthData on one
// reservation: the SQN is stored before the vector is made. ok false means
// the UDR offers no reservation and the caller asks the standard way.
func (n *NF) issueReservedVector(ctx context.Context, supi string, req *models.AuthenticationInfoRequest) (res *models.UdmUeauAuthenticationInfoResult, ok bool, err error) {
	sub, sqn, err := n.udr.reserveSQN(ctx, supi)
	if errors.Is(err, errNoReservation) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	cred, err := credentialsOf(sub)
	if err != nil {
		return nil, true, sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected, "%s: %v", supi, err)
	}
	res, err = n.vectorFor(ctx, supi, cred, sqn, req.ServingNetworkName)
	return res, true, err
}
