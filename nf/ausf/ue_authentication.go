package ausf

// 5G AKA at the AUSF, TS 33.501 6.1.3.2 (TS 23.502 4.2.2.2.2 step 9):
// start (steps 2-5) and confirmation (steps 9-12).

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// challenge is the 5G SE AV for the SEAF (step 5) and where it lives.
type challenge struct {
	id  string
	av  models.Av5gAka
	snn string
}

// authenticate starts 5G AKA:
//  1. the serving network must be this PLMN (TS 33.501 6.1.2: the AUSF
//     checks the requesting SEAF is entitled to the serving network name);
//  2. Nudm_UEAuthentication_Get returns the 5G HE AV and the SUPI (step 2);
//  3. HXRES* from XRES* (A.5), KSEAF from KAUSF (A.6) (step 4);
//  4. XRES*, KSEAF and the SUPI are kept under a fresh authCtxId; the SEAF
//     gets RAND, AUTN and HXRES* only (step 5).
func (n *NF) authenticate(ctx context.Context, in *models.AuthenticationInfo) (*challenge, error) {
	if in.SupiOrSuci == "" || in.ServingNetworkName == "" {
		return nil, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "supiOrSuci and servingNetworkName are mandatory")
	}
	if in.ServingNetworkName != n.snn {
		return nil, sbi.Rejectf(http.StatusForbidden, sbi.CauseServingNetworkNotAuthorized,
			"serving network %q is not %q", in.ServingNetworkName, n.snn)
	}
	res, err := n.udm.generateAuthData(ctx, in.SupiOrSuci, models.AuthenticationInfoRequest{
		ServingNetworkName: in.ServingNetworkName, AusfInstanceId: n.id, ResynchronizationInfo: in.ResynchronizationInfo})
	if err != nil {
		return nil, err
	}
	he, err := decodeHEAV(res)
	if err != nil {
		return nil, sbi.Rejectf(http.StatusGatewayTimeout, sbi.CauseUpstreamServerError, "UDM vector: %v", err)
	}
	_, kdf := tracing.Start(ctx, "5G SE AV (KSEAF, HXRES*)", tracing.HopCrypto)
	kseaf, err := security.DeriveKSEAF(he.kausf, in.ServingNetworkName)
	defer kdf.End()
	if err != nil {
		return nil, sbi.Rejectf(http.StatusGatewayTimeout, sbi.CauseUpstreamServerError, "UDM vector: %v", err)
	}
	id := n.auths.add(&authContext{supi: res.Supi, snn: in.ServingNetworkName, xresStar: he.xresStar, kseaf: kseaf})
	return &challenge{id: id, snn: in.ServingNetworkName, av: models.Av5gAka{
		Rand: hex.EncodeToString(he.rand), Autn: hex.EncodeToString(he.autn),
		HxresStar: hex.EncodeToString(security.HResStar(he.rand, he.xresStar)),
	}}, nil
}

// heAV is the 5G HE AV of TS 33.501 6.1.3.2 step 2, decoded.
type heAV struct {
	rand, autn, xresStar, kausf []byte
}

func decodeHEAV(res *models.UdmUeauAuthenticationInfoResult) (heAV, error) {
	var he heAV
	av := res.AuthenticationVector
	switch {
	case res.AuthType != models.UdmUeauAuthType__5_G_AKA:
		return he, fmt.Errorf("authType %q, only 5G_AKA is supported", res.AuthType)
	case av == nil || av.AvType != models.AvType__5_G_HE_AKA:
		return he, fmt.Errorf("no 5G HE AKA vector")
	case res.Supi == "":
		return he, fmt.Errorf("no SUPI")
	}
	fields := []struct {
		dst *[]byte
		hex string
		n   int
	}{{&he.rand, av.Rand, security.RANDLen}, {&he.autn, av.Autn, security.AUTNLen}, {&he.xresStar, av.XresStar, 16}, {&he.kausf, av.Kausf, security.KAUSFLen}}
	for _, f := range fields {
		b, err := hex.DecodeString(f.hex)
		if err != nil || len(b) != f.n {
			return he, fmt.Errorf("a vector field is not %d hex digits", 2*f.n)
		}
		*f.dst = b
	}
	return he, nil
}

// confirm is steps 9-12: RES* must equal XRES* (compared in constant time);
// only then do the SUPI and KSEAF leave the AUSF. A context is used once.
// The result goes to the UDM in the background (step 12): the SEAF's
// answer does not wait for it.
func (n *NF) confirm(authCtxID string, in *models.ConfirmationData) (*models.ConfirmationDataResponse, error) {
	if in.ResStar == "" {
		return nil, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "resStar is mandatory")
	}
	c := n.auths.take(authCtxID)
	if c == nil {
		return nil, sbi.Rejectf(http.StatusNotFound, sbi.CauseContextNotFound, "no authentication %s in progress (unknown, expired or already confirmed)", authCtxID)
	}
	resStar, err := hex.DecodeString(in.ResStar)
	ok := err == nil && subtle.ConstantTimeCompare(resStar, c.xresStar) == 1
	n.reportResult(c, ok)
	if !ok {
		n.log.Info("5G AKA failed: RES* does not match", "supi", c.supi)
		return &models.ConfirmationDataResponse{AuthResult: models.AusfUeAuthenticationAuthResult_FAILURE}, nil
	}
	return &models.ConfirmationDataResponse{AuthResult: models.AusfUeAuthenticationAuthResult_SUCCESS,
		Supi: c.supi, Kseaf: hex.EncodeToString(c.kseaf)}, nil
}

// reportResult tells the UDM the outcome (TS 33.501 6.1.3.2 step 12,
// Nudm_UEAuthentication_ResultConfirmation) without holding up the SEAF.
func (n *NF) reportResult(c *authContext, success bool) {
	now := time.Now().UTC()
	ev := models.AuthEvent{NfInstanceId: n.id, Success: success, TimeStamp: &now,
		AuthType: models.UdmUeauAuthType__5_G_AKA, ServingNetworkName: c.snn}
	n.events.Add(1)
	go func() {
		defer n.events.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := n.udm.reportResult(ctx, c.supi, ev); err != nil {
			n.log.Warn("UDM did not take the authentication result", "supi", c.supi, "err", err)
		}
	}()
}
