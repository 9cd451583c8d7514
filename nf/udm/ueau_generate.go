package udm

// Authentication vector generation at the UDM/ARPF: TS 33.501 6.1.3.2
// (5G AKA, steps 1-2), TS 29.503 5.4.2.2 (Nudm_UEAuthentication_Get), with
// SQN management of TS 33.102 6.3.2, C.3 and re-synchronisation of 6.3.5.

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// sqnMask keeps SQN to its 48 bits (TS 33.102 6.3.7).
const sqnMask = 1<<48 - 1

// generateAuthData runs the ARPF for one request, top-down:
//  1. SIDF: SUCI → SUPI (TS 33.501 6.12.2);
//  2. read the subscriber's credentials and SQN_HE from the UDR;
//  3. on synchronisation failure, verify AUTS and take SQN_MS (TS 33.102 6.3.5);
//  4. SQN := SQN_HE + 1 (C.3.2, SEQ incremented; IND of length 0);
//  5. store SQN in the UDR before the vector exists, so no SQN is issued twice;
//  6. build the 5G HE AV: RAND, AUTN, XRES*, KAUSF (TS 33.501 6.1.3.2 step 2).
//
// Without re-synchronisation, steps 2, 4 and 5 are one UDR round trip
// when the UDR offers the SQN reservation (sqn_reservation.go).
//
// Steps 2-6 hold the SUPI's lock: concurrent requests for one UE are
// serialised and never lose an increment; the write of step 5 is atomic
// at the UDR (the reservation's increment, or a compare-and-set PATCH), so
// other UDM instances cannot either.
func (n *NF) generateAuthData(ctx context.Context, supiOrSuci string, req *models.AuthenticationInfoRequest) (*models.UdmUeauAuthenticationInfoResult, error) {
	_, sidf := tracing.Start(ctx, "SUCI de-concealment (SIDF)", tracing.HopCrypto)
	supi, err := resolveSUPI(supiOrSuci, n.keys)
	sidf.End()
	if err != nil {
		return nil, err
	}
	if req.ServingNetworkName == "" {
		return nil, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "servingNetworkName is missing")
	}
	unlock := n.ues.sqn.lock(supi)
	defer unlock()
	// Re-synchronisation needs SQN_MS from AUTS before SQN_HE is set,
	// so only a plain request takes the one-round-trip reservation.
	if req.ResynchronizationInfo == nil {
		if res, ok, err := n.issueReservedVector(ctx, supi, req); ok {
			return res, err
		}
	}
	// The lock serialises this UDM; the UDR's compare-and-set catches
	// another UDM instance, and then the vector is made again.
	for range maxSQNAttempts {
		res, err := n.issueVector(ctx, supi, req)
		if !errors.Is(err, errSQNMoved) {
			return res, err
		}
	}
	return nil, sbi.Rejectf(http.StatusInternalServerError, sbi.CauseSystemFailure, "the SQN of %s kept moving at the UDR", supi)
}

// maxSQNAttempts bounds the retries when other UDMs keep moving the SQN.
const maxSQNAttempts = 3

// issueVector is steps 2-6 for one SQN read.
func (n *NF) issueVector(ctx context.Context, supi string, req *models.AuthenticationInfoRequest) (*models.UdmUeauAuthenticationInfoResult, error) {
	sub, err := n.udr.authSubscription(ctx, supi)
	if err != nil {
		return nil, err
	}
	cred, err := credentialsOf(sub)
	if err != nil {
		return nil, sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected, "%s: %v", supi, err)
	}
	sqnHE := cred.sqn
	if r := req.ResynchronizationInfo; r != nil {
		if sqnHE, err = resynchronise(cred, r); err != nil {
			return nil, err
		}
		n.log.Info("SQN re-synchronised from AUTS", "supi", supi, "sqnHE", fmt.Sprintf("%012x", cred.sqn), "sqnMS", fmt.Sprintf("%012x", sqnHE))
	}
	sqn := (sqnHE + 1) & sqnMask
	if err := n.udr.storeSQN(ctx, supi, sub.SequenceNumber.Sqn, nextSequenceNumber(sub.SequenceNumber, sqn)); err != nil {
		return nil, err
	}
	return n.vectorFor(ctx, supi, cred, sqn, req.ServingNetworkName)
}

// vectorFor is step 6 for an SQN already stored at the UDR (step 5 done).
func (n *NF) vectorFor(ctx context.Context, supi string, cred credentials, sqn uint64, snn string) (*models.UdmUeauAuthenticationInfoResult, error) {
	_, heav := tracing.Start(ctx, "5G HE AV (Milenage, XRES*, KAUSF)", tracing.HopCrypto)
	av, err := security.GenerateAuthVector(cred.k, cred.opc, sqnBytes(sqn), cred.amf, nil, snn)
	heav.End()
	if err != nil {
		return nil, sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected, "%s: %v", supi, err)
	}
	n.ues.markAuthenticating(supi)
	n.seen.saw(supi)
	return &models.UdmUeauAuthenticationInfoResult{
		AuthType: models.UdmUeauAuthType__5_G_AKA, Supi: supi,
		AuthenticationVector: &models.AuthenticationVector{
			AvType: models.AvType__5_G_HE_AKA,
			Rand:   hex.EncodeToString(av.RAND), Autn: hex.EncodeToString(av.AUTN),
			XresStar: hex.EncodeToString(av.XRESStar), Kausf: hex.EncodeToString(av.KAUSF),
		},
	}, nil
}

// credentials are a subscriber's AKA parameters (TS 33.102 6.3.2).
type credentials struct {
	k, opc, amf []byte
	sqn         uint64
}

// credentialsOf reads K, OPc (derived from OP when only OP is stored, TS
// 35.206 4.1), the AMF field and SQN_HE from the authentication subscription.
func credentialsOf(s *authSubscription) (credentials, error) {
	var c credentials
	if m := s.AuthenticationMethod; m != "" && m != models.AuthMethod__5_G_AKA {
		return c, fmt.Errorf("authentication method %s is not supported (5G_AKA only)", m)
	}
	kHex := s.EncPermanentKey
	if kHex == "" && s.PermanentKey != nil {
		kHex = s.PermanentKey.PermanentKeyValue
	}
	var err error
	if c.k, err = hexLen("permanent key K", kHex, security.KeyLen); err != nil {
		return c, err
	}
	if c.opc, err = opcOf(s, c.k); err != nil {
		return c, err
	}
	amf := s.AuthenticationManagementField
	if amf == "" {
		amf = "8000" // separation bit set: a vector for 5G (TS 33.501 6.1.3.2, Annex A)
	}
	if c.amf, err = hexLen("authentication management field", amf, security.AMFLen); err != nil {
		return c, err
	}
	if s.SequenceNumber == nil {
		return c, errors.New("no sequence number stored")
	}
	sqn, err := hexLen("sequence number", s.SequenceNumber.Sqn, security.SQNLen)
	if err != nil {
		return c, err
	}
	c.sqn = sqnValue(sqn)
	return c, nil
}

func opcOf(s *authSubscription, k []byte) ([]byte, error) {
	switch {
	case s.EncOpcKey != "":
		return hexLen("OPc", s.EncOpcKey, security.KeyLen)
	case s.Opc != nil && s.Opc.OpcValue != "":
		return hexLen("OPc", s.Opc.OpcValue, security.KeyLen)
	case s.Milenage != nil && s.Milenage.Op != nil && s.Milenage.Op.OpValue != "":
		op, err := hexLen("OP", s.Milenage.Op.OpValue, security.KeyLen)
		if err != nil {
			return nil, err
		}
		return security.DeriveOPc(k, op)
	}
	return nil, errors.New("neither OPc nor OP is stored")
}

// resynchronise recovers SQN_MS from AUTS and checks MAC-S against the RAND
// of the failed challenge (TS 33.102 6.3.5); SQN_HE is then reset to SQN_MS.
// A MAC-S that does not verify means the AUTS did not come from the
// subscriber's USIM: 403 AUTHENTICATION_REJECTED (TS 29.503 6.3.3.2.3.1).
func resynchronise(c credentials, r *models.ResynchronizationInfo) (uint64, error) {
	rnd, err := hexLen("resynchronizationInfo.rand", r.Rand, security.RANDLen)
	if err != nil {
		return 0, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "%v", err)
	}
	auts, err := hexLen("resynchronizationInfo.auts", r.Auts, security.AUTSLen)
	if err != nil {
		return 0, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "%v", err)
	}
	sqnMS, err := security.SQNFromAUTS(c.k, c.opc, rnd, auts)
	if err != nil {
		return 0, sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected, "AUTS: %v", err)
	}
	return sqnValue(sqnMS), nil
}

// nextSequenceNumber is the stored SequenceNumber with the new SQN, its
// other attributes kept.
func nextSequenceNumber(old *models.SequenceNumber, sqn uint64) models.SequenceNumber {
	seq := models.SequenceNumber{SqnScheme: models.SqnScheme_NON_TIME_BASED}
	if old != nil {
		seq = *old
	}
	seq.Sqn = fmt.Sprintf("%012x", sqn)
	return seq
}

func hexLen(what, s string, n int) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != n {
		return nil, fmt.Errorf("%s is not %d hex digits", what, 2*n)
	}
	return b, nil
}

func sqnValue(b []byte) uint64 {
	var x [8]byte
	copy(x[2:], b)
	return binary.BigEndian.Uint64(x[:])
}

func sqnBytes(sqn uint64) []byte {
	var x [8]byte
	binary.BigEndian.PutUint64(x[:], sqn)
	return x[2:]
}
