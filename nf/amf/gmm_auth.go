package amf

// Authentication (TS 24.501 5.4.1.3, TS 33.501 6.1.3.2 5G-AKA) and NAS
// security mode control (TS 24.501 5.4.2, TS 33.501 6.7.2).

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// abba is the ABBA of TS 33.501 A.7.1: 0x0000 (no security features).
var abba = []byte{0x00, 0x00}

// servingNetworkName is the SN name of TS 24.501 9.12.1 ("5G:mnc093.mcc208.3gppnetwork.org").
func (n *NF) servingNetworkName() string {
	return security.ServingNetworkName(n.guami.PLMN.MCC, n.guami.PLMN.MNC)
}

// startAuthentication asks the AUSF for a 5G-AKA vector (TS 23.502
// 4.2.2.2.2 step 9; TS 33.501 6.1.3.2 step 1); onAuthVector goes on.
func (n *NF) startAuthentication(ue *ueContext) (State, error) {
	return n.authenticate(ue, nil)
}

func (n *NF) authenticate(ue *ueContext, resync *models.ResynchronizationInfo) (State, error) {
	id := ue.suci
	if id == "" {
		id = ue.supi
	}
	sn, c := n.servingNetworkName(), n.opts.Consumer
	n.call(ue, EvAuthVector, func(ctx context.Context) sbiAnswer {
		av, err := c.Authenticate(ctx, id, sn, resync)
		return sbiAnswer{av: av, err: err}
	})
	return StateAwaitingVector, nil
}

// onAuthVector sends Authentication Request with the AUSF's vector
// (TS 24.501 5.4.1.3.2), T3560.
func (n *NF) onAuthVector(ue *ueContext, in *input) (State, error) {
	a := n.answer(ue, in)
	if a == nil {
		return ue.state, nil
	}
	if a.err != nil {
		return ue.state, n.authenticationError(a.err)
	}
	av := a.av
	rand, err1 := hex16(av.RAND)
	autn, err2 := hex16(av.AUTN)
	if err1 != nil || err2 != nil {
		return ue.state, rejectRegistration(nasx.CauseProtocolErrorUnspecified, fmt.Errorf("AUSF vector: rand %v autn %v", err1, err2))
	}
	ue.auth.av = av
	ue.auth.ngKSI = nextKSI(ue.reg.ngKSI)
	req, err := nasx.BuildAuthenticationRequest(ue.auth.ngKSI, abba, rand, autn)
	if err != nil {
		return ue.state, err
	}
	if err := n.sendGuarded(ue, req, false, T3560); err != nil {
		return ue.state, err
	}
	return StateAuthentication, nil
}

// ausfLostContext: the confirmation's resource is gone at the AUSF
// (TS 29.509 5.2.2.2.2: the authCtxId the AMF holds names nothing).
func ausfLostContext(err error) bool {
	return sbi.StatusOf(err) == http.StatusNotFound
}

// nextKSI picks the ngKSI of a new context, different from the UE's
// (TS 24.501 9.11.3.32; 7 means "no key available").
func nextKSI(ueKSI uint8) uint8 {
	if ueKSI >= 7 {
		return 0
	}
	return (ueKSI + 1) % 7
}

func hex16(s string) ([16]byte, error) {
	var out [16]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return out, fmt.Errorf("%q: want 32 hex digits", s)
	}
	copy(out[:], b)
	return out, nil
}

// onAuthenticationResponse checks RES* against HXRES* and sends it to the
// AUSF for confirmation (TS 33.501 6.1.3.2 steps 9-10).
func (n *NF) onAuthenticationResponse(ue *ueContext, in *input) (State, error) {
	p := in.msg.m.AuthenticationResponse.AuthenticationResponseParameter
	if p == nil || p.GetLen() != 16 {
		return ue.state, statusError(nasx.CauseInvalidMandatoryInfo, errors.New("no RES*"))
	}
	n.stopTimer(ue)
	if err := checkHRESStar(ue.auth.av, p.Octet[:]); err != nil {
		return ue.state, rejectAuthentication(err)
	}
	uri, resStar, c := ue.auth.av.ConfirmURI, hex.EncodeToString(p.Octet[:]), n.opts.Consumer
	n.call(ue, EvAuthConfirmation, func(ctx context.Context) sbiAnswer {
		conf, err := c.ConfirmAuth(ctx, uri, resStar)
		return sbiAnswer{conf: conf, err: err}
	})
	return StateAwaitingConfirmation, nil
}

// onAuthConfirmation takes the AUSF's verdict on RES*; on success it derives
// KAMF from KSEAF (TS 33.501 6.1.3.2 steps 10-12, A.7) and starts security
// mode.
func (n *NF) onAuthConfirmation(ue *ueContext, in *input) (State, error) {
	a := n.answer(ue, in)
	if a == nil {
		return ue.state, nil
	}
	conf, err := a.conf, a.err
	if err != nil {
		if ausfLostContext(err) && !ue.auth.renewed {
			// The AUSF restarted and forgot the authentication context
			// (TS 29.509 6.1.7.3: 404). The network may authenticate the
			// UE at any time (TS 24.501 5.4.1.3.1): start again, once,
			// rather than reject a UE that did nothing wrong.
			ue.auth.renewed = true
			return n.authenticate(ue, nil)
		}
		// Not a verdict on the UE: the AUSF failed or lost the context.
		return ue.state, n.peerError(fmt.Errorf("AUSF confirmation: %w", err))
	}
	if !conf.Success {
		// TS 33.501 6.1.3.2 step 11: the AUSF found RES* wrong.
		return ue.state, rejectAuthentication(errors.New("AUSF confirmation: authResult AUTHENTICATION_FAILURE"))
	}
	kseaf, err := hex.DecodeString(conf.KSEAF)
	if err != nil || len(kseaf) != 32 || conf.SUPI == "" {
		return ue.state, rejectRegistration(nasx.CauseProtocolErrorUnspecified, errors.New("AUSF confirmation without SUPI/KSEAF"))
	}
	kamf, err := n.opts.Crypto.KAMF(kseaf, conf.SUPI, abba)
	if err != nil {
		return ue.state, err
	}
	if ue.supi != conf.SUPI {
		// A fresh registration replaces any parked context of the UE.
		for _, old := range n.ues.takeIdleSUPI(conf.SUPI) {
			n.endContext(old)
		}
	}
	n.ues.setSUPI(ue, conf.SUPI)
	if ue.service == nil {
		// TS 23.502 4.2.2.2.2 step 14b's reads go out while security mode
		// runs (registration_prefetch.go).
		ue.reg.prefetch = n.prefetchSubscription(conf.SUPI)
	}
	return n.startSecurityMode(ue, kamf)
}

// checkHRESStar is the SEAF's own check (TS 33.501 6.1.3.2 step 10):
// HRES* from RAND and RES* must equal the AUSF's HXRES*.
func checkHRESStar(av AuthVector, resStar []byte) error {
	if av.HXRESStar == "" {
		return nil // the AUSF gave none; it verifies RES* itself
	}
	rand, err := hex.DecodeString(av.RAND)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(security.HResStar(rand, resStar)); !strings.EqualFold(got, av.HXRESStar) {
		return errors.New("HRES* does not match HXRES*")
	}
	return nil
}

// onAuthenticationFailure: TS 24.501 5.4.1.3.7 c) synch failure ->
// resynchronise once via the AUSF (TS 33.501 6.1.3.3); a) MAC failure and
// anything else -> Authentication Reject.
func (n *NF) onAuthenticationFailure(ue *ueContext, in *input) (State, error) {
	n.stopTimer(ue)
	f := in.msg.m.AuthenticationFailure
	cause := f.Cause5GMM.GetCauseValue()
	if cause == nasx.CauseSynchFailure && f.AuthenticationFailureParameter != nil && !ue.auth.resynced {
		ue.auth.resynced = true
		auts := f.AuthenticationFailureParameter.Octet
		return n.authenticate(ue, &models.ResynchronizationInfo{Rand: ue.auth.av.RAND, Auts: hex.EncodeToString(auts[:])})
	}
	return ue.state, rejectAuthentication(fmt.Errorf("UE authentication failure, cause #%d", cause))
}

// startSecurityMode selects algorithms by the configured preference among
// those the UE supports (TS 33.501 6.7.2) and sends Security Mode Command
// integrity protected with the new context (TS 24.501 5.4.2.2), T3560.
func (n *NF) startSecurityMode(ue *ueContext, kamf []byte) (State, error) {
	caps := ue.reg.secCap
	ia, okI := nasx.SelectAlgorithm(algorithms(n.cfg.AMF.NAS.Integrity, "NIA"), caps.SupportsIA)
	ea, okE := nasx.SelectAlgorithm(algorithms(n.cfg.AMF.NAS.Ciphering, "NEA"), caps.SupportsEA)
	if !okI || !okE {
		return ue.state, rejectRegistration(nasx.CauseUESecurityCapMismatch, errors.New("no common NAS algorithm"))
	}
	nctx, err := n.opts.Crypto.NewNASContext(kamf, ea, ia)
	if err != nil {
		return ue.state, err
	}
	ue.sec = &secContext{ngKSI: ue.auth.ngKSI, kamf: kamf, ea: ea, ia: ia, nas: nctx, active: true}
	ue.capability = caps
	smc, err := nasx.BuildSecurityModeCommand(nasx.SecurityModeCommand{IA: ia, EA: ea, NgKSI: ue.auth.ngKSI,
		ReplayedUECap: caps, IMEISVRequest: true,
		// TS 24.501 4.4.6: a container the AMF could not decipher (the
		// request did not verify) is asked for again, in the clear.
		RetransmitInitial: ue.reg.container != nil})
	if err != nil {
		return ue.state, err
	}
	if err := n.sendGuarded(ue, smc, true, T3560); err != nil {
		return ue.state, err
	}
	return StateSecurityMode, nil
}

// algorithms turns "NIA2"-style names into algorithm numbers.
func algorithms(names []string, prefix string) []uint8 {
	var out []uint8
	for _, s := range names {
		if v, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(s), prefix)); err == nil && v >= 0 && v < 8 {
			out = append(out, uint8(v))
		}
	}
	return out
}

// onSecurityModeComplete: TS 24.501 5.4.2.4. It must be protected with the
// new context; its NAS message container, when present, holds the full
// Registration Request (TS 24.501 4.4.6).
func (n *NF) onSecurityModeComplete(ue *ueContext, in *input) (State, error) {
	if !in.msg.verified {
		return ue.state, &gmmError{kind: replyDiscard, err: errors.New("Security Mode Complete not integrity protected")}
	}
	n.stopTimer(ue)
	ue.sec.confirmed = true
	c := in.msg.m.SecurityModeComplete
	if c.IMEISV != nil {
		if id, err := nasx.ParseMobileIdentity(c.IMEISV.Octet[:c.IMEISV.GetLen()]); err == nil {
			ue.pei = id.PEI
		}
	}
	if ue.service != nil {
		return n.serveAfterSecurity(ue, c) // a Service Request that failed the integrity check
	}
	if c.NASMessageContainer != nil {
		if err := n.readFullRequest(ue, c.NASMessageContainer.Buffer); err != nil {
			return ue.state, err
		}
	}
	return n.completeRegistration(ue)
}

// readFullRequest takes the non-cleartext IEs of the full Registration Request.
func (n *NF) readFullRequest(ue *ueContext, b []byte) error {
	m, err := nasx.Decode(b)
	if err != nil || m.RegistrationRequest == nil {
		return rejectRegistration(nasx.CauseOf(err), fmt.Errorf("NAS message container: %v", err))
	}
	full, err := parseRegistration(m.RegistrationRequest)
	if err != nil {
		return err
	}
	if full.requested != nil {
		ue.reg.requested = full.requested
	}
	return nil
}

// onSecurityModeReject: TS 24.501 5.4.2.5 — stop T3560 and abort the
// procedure that started security mode (here, registration).
func (n *NF) onSecurityModeReject(ue *ueContext, in *input) (State, error) {
	n.stopTimer(ue)
	cause := in.msg.m.SecurityModeReject.Cause5GMM.GetCauseValue()
	n.log.Info("Security Mode Reject", "amfUeNgapId", ue.amfID, "cause", cause)
	ue.sec = nil
	n.finishProcedure(ue, procRegistration, resultReject)
	return n.release(ue, causeNasUnspecified())
}

// parseBitRate reads "1 Gbps"-style bit rates (TS 29.571 5.5.2 BitRate).
func parseBitRate(s string) int64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0
	}
	mult := map[string]float64{"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}[strings.ToLower(f[1])]
	return int64(v * mult)
}
