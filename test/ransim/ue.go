package ransim

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/security"
)

// Subscriber is what the UE's USIM holds.
type Subscriber struct {
	IMSI   string // 15 digits: MCC, MNC, MSIN
	K, OPc []byte
	// SQN is the highest sequence number the USIM accepted so far (6
	// bytes); nil starts from zero. One ahead of the network's makes the
	// first challenge fail with synch failure (TS 33.102 6.3.5).
	SQN []byte
}

// Concealment says how the UE conceals its SUPI in a SUCI (TS 33.501 6.12.2).
type Concealment struct {
	Scheme   uint8  // security.SchemeNull, SchemeProfileA or SchemeProfileB
	KeyID    uint8  // home network public key identifier
	HNPublic []byte // home network public key (not for the null scheme)
}

// RejectError is the network refusing a procedure with a 5GMM cause.
type RejectError struct {
	Message string // e.g. "Registration Reject"
	Cause   uint8  // TS 24.501 9.11.3.2; 0 when the message carries none
	// T3346 is the back-off of a #22 reject (TS 24.501 5.3.9); 0: none given.
	T3346 time.Duration
}

func (e *RejectError) Error() string { return fmt.Sprintf("%s (5GMM cause %d)", e.Message, e.Cause) }

// ErrReleased is the N2 connection of the UE released mid-procedure.
var ErrReleased = errors.New("UE context released by the network")

// downlink is one event for a UE: a NAS PDU from the AMF, or the release of
// its N2 connection.
type downlink struct {
	amfID    int64
	name     string // NGAP message carrying it
	nas      []byte
	cause    *ngapType.Cause
	released bool
}

// ueSecurityCaps: 5G-EA0..EA2 and 5G-IA0..IA2 (TS 24.501 9.11.3.54).
var ueSecurityCaps = []byte{0xE0, 0xE0}

// ue5GMMCapability is an NR-only UE's 5GMM capability (TS 24.501
// 9.11.3.1): no S1 mode, no HO attach, no LPP. A UE includes the IE in
// initial and mobility registration (5.5.1.2.2, 5.5.1.3.2); cores reject a
// request without it (free5GC: #111).
var ue5GMMCapability = []byte{0x00}

// imeisvOf is the simulated UE's IMEISV (TS 23.003 6.2.2): TAC and serial
// number, 14 digits taken from the IMSI so each UE has its own, and
// software version 01.
func imeisvOf(imsi string) string { return peiDigits(imsi) + "01" }

// imeiOf is the simulated UE's IMEI (TS 23.003 6.2.1): the same 14 digits
// and the Luhn check digit of annex B.
func imeiOf(imsi string) string {
	d := peiDigits(imsi)
	return d + string('0'+luhn(d))
}

func peiDigits(imsi string) string {
	d := strings.Repeat("0", 14) + imsi
	return d[len(d)-14:]
}

// luhn is the check digit of TS 23.003 annex B: double every second digit
// from the right of the 14, sum the digits, and take what reaches a ten.
func luhn(d string) byte {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 0 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return byte((10 - sum%10) % 10)
}

// UE is one UE behind a gNB. Its methods run one procedure at a time.
type UE struct {
	g       *GNB
	sub     Subscriber
	supi    string // imsi-…
	conceal Concealment
	plmn    domain.PLMN // the serving network, whose MNC length splits the IMSI

	ranID     atomic.Int64 // 0 while CM-IDLE
	amfID     atomic.Int64
	inbox     chan downlink
	requested []models.Snssai

	sec   *security.NASContext // current 5G NAS security context
	kamf  []byte               // its KAMF
	ngKSI uint8                // its key set identifier; 7: no key
	sqnMS []byte               // highest SQN accepted (TS 33.102 C.1)
	guti  *nasx.GUTI
	// lastTAI is the last visited registered TAI (TS 24.501 9.11.3.8): the
	// TAI of the cell the last Registration Accept came through.
	lastTAI *domain.TAI

	// the 5G AKA run of this registration, until Security Mode Command takes it into use
	pendingKAMF  []byte
	pendingKSI   uint8
	lastRAND     []byte
	lastAuthResp []byte
	// the context a Security Mode Command verified under, taken into use
	// when the UE accepts the command
	smc smcContext

	// Allowed is the allowed NSSAI of the last Registration Accept.
	Allowed []models.Snssai
	// NetworkName is the full network name of the last Configuration Update Command.
	NetworkName string

	sessMu   sync.Mutex
	sessions map[uint8]*PDUSession // by PDU session identity
	lastPTI  uint8

	idle idleState // CM-IDLE: paging (idle.go)
	// lastSent is when the last registration attempt went out (T3510
	// counting, overload.go).
	lastSent time.Time
	// log is the first gNB's, for what other goroutines report about the
	// UE: g changes with a handover (handover.go).
	log *slog.Logger
}

// NewUE puts a UE under this gNB; it is switched off until Register.
func (g *GNB) NewUE(sub Subscriber, c Concealment) *UE {
	u := &UE{g: g, sub: sub, supi: "imsi-" + sub.IMSI, conceal: c, plmn: g.cfg.PLMN,
		inbox: make(chan downlink, 64), ngKSI: 7, sessions: map[uint8]*PDUSession{}, sqnMS: make([]byte, 6), requested: g.cfg.SNSSAIs}
	if len(sub.SQN) == 6 {
		u.sqnMS = append([]byte(nil), sub.SQN...)
	}
	u.amfID.Store(-1)
	u.idle.paged, u.idle.uplink = make(chan time.Time, 1), make(chan struct{}, 1)
	u.log = g.log
	return u
}

// SUPI is the UE's permanent identity (imsi-…).
func (u *UE) SUPI() string { return u.supi }

// GUTI is the 5G-GUTI of the last Registration Accept, nil before one.
func (u *UE) GUTI() *nasx.GUTI { return u.guti }

// ForgetGUTI makes the next registration identify the UE by SUCI again.
func (u *UE) ForgetGUTI() { u.guti, u.sec, u.ngKSI = nil, nil, 7 }

// took notes the AMF UE NGAP ID a downlink names.
func (u *UE) took(d downlink) downlink {
	if d.amfID >= 0 && !d.released {
		u.amfID.Store(d.amfID)
	}
	return d
}

func (u *UE) deliver(d downlink) {
	select {
	case u.inbox <- d:
	default:
		u.log.Warn("UE inbox full: downlink dropped", "supi", u.supi, "msg", d.name)
	}
}

// next returns the UE's next downlink event. What arrived before the
// association ended is still delivered.
func (u *UE) next(ctx context.Context) (downlink, error) {
	select {
	case d := <-u.inbox:
		return u.took(d), nil
	default:
	}
	select {
	case d := <-u.inbox:
		return u.took(d), nil
	case <-u.g.done:
		return downlink{}, fmt.Errorf("N2 association ended: %v", u.g.readErr)
	case <-ctx.Done():
		return downlink{}, ctx.Err()
	}
}

// Register runs a registration of type initial (TS 23.502 4.2.2.2.2),
// identified by the 5G-GUTI when the UE has one and by SUCI otherwise. It
// returns the time from the Initial UE Message to Registration Complete.
func (u *UE) Register(ctx context.Context) (time.Duration, error) {
	return u.register(ctx, nasMessage.RegistrationType5GSInitialRegistration)
}

// UpdateRegistration runs a mobility (periodic false) or periodic
// registration update (TS 23.502 4.2.2.2.2, TS 24.501 5.5.1.3).
func (u *UE) UpdateRegistration(ctx context.Context, periodic bool) (time.Duration, error) {
	t := uint8(nasMessage.RegistrationType5GSMobilityRegistrationUpdating)
	if periodic {
		t = nasMessage.RegistrationType5GSPeriodicRegistrationUpdating
	}
	return u.register(ctx, t)
}

func (u *UE) register(ctx context.Context, regType uint8) (time.Duration, error) {
	return u.registerFOR(ctx, regType, true)
}

// registerFOR is register with the "follow-on request pending" bit
// (TS 24.501 9.11.3.7) as given: a UE with nothing to send clears it.
func (u *UE) registerFOR(ctx context.Context, regType uint8, followOn bool) (time.Duration, error) {
	u.drain()
	identity, err := u.identity()
	if err != nil {
		return 0, err
	}
	req := u.registrationRequest(regType, identity)
	req.NoFollowOn = !followOn
	full, err := nasx.BuildRegistrationRequest(req)
	if err != nil {
		return 0, err
	}
	cleartext := u.sec == nil
	initial, err := u.initialRequestFOR(regType, identity, full, followOn)
	if err != nil {
		return 0, err
	}
	u.lastRAND = nil
	// TS 38.413 8.7.6.2: under the AMF's Overload Start the gNB holds a
	// registration back (RRC cause mo-Signalling, TS 24.501 D.1).
	if err := u.g.awaitAdmission(ctx, ngapType.RRCEstablishmentCausePresentMoSignalling); err != nil {
		return 0, fmt.Errorf("registration of %s: %w", u.supi, err)
	}
	start := time.Now()
	u.lastSent = start
	if err := u.sendInitial(initial); err != nil {
		return 0, err
	}
	for {
		m, err := u.nextNAS(ctx)
		if err != nil {
			return 0, fmt.Errorf("registration of %s: %w", u.supi, err)
		}
		switch m.GmmHeader.GetMessageType() {
		case nas.MsgTypeRegistrationAccept:
			return u.traced(ProcedureRegistration, start), u.onRegistrationAccept(m.RegistrationAccept)
		case nas.MsgTypeRegistrationReject:
			return 0, registrationReject(m.RegistrationReject)
		case nas.MsgTypeSecurityModeCommand:
			err = u.onSecurityModeCommand(m, full, cleartext)
		default:
			err = u.onCommon(m)
		}
		if err != nil {
			return 0, fmt.Errorf("registration of %s: %w", u.supi, err)
		}
	}
}

// initialRequest is the Registration Request as the initial message carries
// it (TS 24.501 4.4.6): only the cleartext IEs; with a security context the
// whole request follows ciphered in the NAS message container (and the
// message is integrity protected by sendInitial), without one it follows
// in Security Mode Complete.
func (u *UE) initialRequest(regType uint8, identity, full []byte) ([]byte, error) {
	return u.initialRequestFOR(regType, identity, full, true)
}

// initialRequestFOR is initialRequest with the follow-on request bit as
// given; it is a cleartext IE (TS 24.501 4.4.6), so both copies agree.
func (u *UE) initialRequestFOR(regType uint8, identity, full []byte, followOn bool) ([]byte, error) {
	r := nasx.RegistrationRequest{Type: regType, NgKSI: u.ngKSI, Identity: identity, SecurityCaps: ueSecurityCaps,
		Cleartext: true, NoFollowOn: !followOn}
	if u.sec != nil {
		c, err := u.sec.CipherContainer(full)
		if err != nil {
			return nil, err
		}
		r.Container = c
	}
	return nasx.BuildRegistrationRequest(r)
}

// registrationRequest is what a UE puts in a Registration Request
// (TS 24.501 5.5.1.2.2, 5.5.1.3.2): its identity, security capability and
// requested NSSAI, its 5GMM capability (initial and mobility registration)
// and the last visited registered TAI when it holds one. No UE status IE: it
// is for UEs supporting S1 mode, and this one does not.
func (u *UE) registrationRequest(regType uint8, identity []byte) nasx.RegistrationRequest {
	r := nasx.RegistrationRequest{Type: regType, NgKSI: u.ngKSI, Identity: identity, SecurityCaps: ueSecurityCaps,
		Requested: u.requested, LastVisited: u.lastTAI}
	if regType != nasMessage.RegistrationType5GSPeriodicRegistrationUpdating {
		r.Capability5GMM = ue5GMMCapability
	}
	return r
}

func (u *UE) identity() ([]byte, error) {
	if u.guti != nil {
		return nasx.EncodeGUTI(*u.guti)
	}
	return u.suci()
}

// suci conceals the MSIN afresh (a new ephemeral key every time, TS 33.501 6.12.2).
func (u *UE) suci() ([]byte, error) {
	imsi, err := domain.ParseIMSI(u.sub.IMSI, len(u.plmn.MNC))
	if err != nil {
		return nil, err
	}
	msin := imsi.MSIN
	out, err := security.ConcealSUCI(u.conceal.Scheme, u.conceal.HNPublic, msin, nil)
	if err != nil {
		return nil, err
	}
	output := msin
	if u.conceal.Scheme != security.SchemeNull {
		output = hex.EncodeToString(out)
	}
	return nasx.EncodeSUCI(fmt.Sprintf("suci-0-%s-%s-0000-%d-%d-%s", imsi.PLMN.MCC, imsi.PLMN.MNC, u.conceal.Scheme, u.conceal.KeyID, output))
}

// onCommon handles what any procedure may meet: identification,
// authentication and network notifications (TS 24.501 5.4).
func (u *UE) onCommon(m *nas.Message) error {
	switch m.GmmHeader.GetMessageType() {
	case nas.MsgTypeIdentityRequest:
		id, err := u.identityOfType(nasx.IdentityType(m.IdentityRequest.SpareHalfOctetAndIdentityType.GetTypeOfIdentity()))
		if err != nil {
			return err
		}
		return u.sendUplink(nasx.BuildIdentityResponse(id))
	case nas.MsgTypeAuthenticationRequest:
		return u.onAuthenticationRequest(m.AuthenticationRequest)
	case nas.MsgTypeAuthenticationReject:
		u.ForgetGUTI()
		return &RejectError{Message: "Authentication Reject"}
	case nas.MsgTypeConfigurationUpdateCommand:
		return u.onConfigurationUpdate(m.ConfigurationUpdateCommand)
	case nas.MsgTypeDLNASTransport:
		return u.onDLNASTransport(m.DLNASTransport)
	case nas.MsgTypeStatus5GMM:
		u.g.log.Info("5GMM Status from the AMF", "supi", u.supi, "cause", m.Status5GMM.Cause5GMM.GetCauseValue())
	default:
		u.g.log.Debug("unexpected 5GMM message", "supi", u.supi, "type", nasx.MessageName(m.GmmHeader.GetMessageType()))
	}
	return nil
}

// identityOfType is the identity an Identity Request asks for (TS 24.501
// 5.4.3.3): a fresh SUCI, the IMEI or the IMEISV; "no identity" for the
// types a UE on 3GPP access does not have (MAC, EUI-64).
func (u *UE) identityOfType(t nasx.IdentityType) ([]byte, error) {
	switch t {
	case nasx.IdentitySUCI:
		return u.suci()
	case nasx.IdentityIMEI:
		return nasx.EncodePEI(nasx.IdentityIMEI, imeiOf(u.sub.IMSI))
	case nasx.IdentityIMEISV:
		return nasx.EncodePEI(nasx.IdentityIMEISV, imeisvOf(u.sub.IMSI))
	}
	return []byte{byte(nasx.IdentityNone)}, nil
}

// onConfigurationUpdate takes what a Configuration Update Command changes
// (network name, 5G-GUTI, allowed NSSAI) and acknowledges it when the
// network asks (TS 24.501 5.4.4.3).
func (u *UE) onConfigurationUpdate(c *nasMessage.ConfigurationUpdateCommand) error {
	if c.FullNameForNetwork != nil {
		u.NetworkName = nasx.DecodeNetworkName(c.FullNameForNetwork.Buffer)
	}
	if c.GUTI5G != nil {
		id, err := nasx.ParseMobileIdentity(c.GUTI5G.Octet[:c.GUTI5G.GetLen()])
		if err != nil {
			return fmt.Errorf("Configuration Update Command: 5G-GUTI: %w", err)
		}
		g := id.GUTI
		u.guti = &g
	}
	if c.AllowedNSSAI != nil {
		allowed, err := nasx.NSSAIModels(c.AllowedNSSAI.Buffer)
		if err != nil {
			return fmt.Errorf("Configuration Update Command: allowed NSSAI: %w", err)
		}
		u.Allowed = allowed
	}
	if c.ConfigurationUpdateIndication == nil || c.ConfigurationUpdateIndication.GetACK() != 1 {
		return nil
	}
	return u.sendUplink(nasx.BuildConfigurationUpdateComplete())
}

// onAuthenticationRequest is the USIM and ME of 5G AKA (TS 33.501 6.1.3.2
// steps 5-6): verify AUTN, derive KAMF, answer RES*; or report the failure
// (TS 24.501 5.4.1.3.7).
func (u *UE) onAuthenticationRequest(r *nasMessage.AuthenticationRequest) error {
	if r.AuthenticationParameterRAND == nil || r.AuthenticationParameterAUTN == nil {
		return errors.New("Authentication Request without RAND or AUTN")
	}
	rand := r.AuthenticationParameterRAND.GetRANDValue()
	autn := r.AuthenticationParameterAUTN.GetAUTN()
	if bytes.Equal(u.lastRAND, rand[:]) { // a retransmission (T3560): same answer
		return u.sendUplink(u.lastAuthResp, nil)
	}
	aka, err := security.VerifyChallenge(u.sub.K, u.sub.OPc, rand[:], autn[:], u.sqnMS)
	var synch *security.SynchFailure
	switch {
	case errors.As(err, &synch):
		return u.sendUplink(nasx.BuildAuthenticationFailure(nasMessage.Cause5GMMSynchFailure, synch.AUTS))
	case errors.Is(err, security.ErrMACFailure):
		return u.sendUplink(nasx.BuildAuthenticationFailure(nasMessage.Cause5GMMMACFailure, nil))
	case errors.Is(err, security.ErrNon5GAuthentication):
		return u.sendUplink(nasx.BuildAuthenticationFailure(nasMessage.Cause5GMMNon5GAuthenticationUnacceptable, nil))
	case err != nil:
		return err
	}
	u.sqnMS = aka.SQN
	sn := security.ServingNetworkName(u.plmn.MCC, u.plmn.MNC)
	kseaf := security.KSEAF(security.KAUSF(aka.CK, aka.IK, sn, aka.SQNXorAK), sn)
	u.pendingKAMF = security.KAMF(kseaf, u.sub.IMSI, r.ABBA.GetABBAContents())
	u.pendingKSI = r.SpareHalfOctetAndNgksi.GetNasKeySetIdentifiler()
	resp, err := nasx.BuildAuthenticationResponse(security.ResStar(aka.CK, aka.IK, sn, rand[:], aka.RES))
	if err != nil {
		return err
	}
	u.lastRAND, u.lastAuthResp = append([]byte(nil), rand[:]...), resp
	return u.sendUplink(resp, nil)
}

// smcContext is a context a Security Mode Command proposes.
type smcContext struct {
	sec   *security.NASContext
	kamf  []byte
	ngKSI uint8
}

// onSecurityModeCommand takes the context the command verified under into
// use (TS 24.501 5.4.2.3) and answers Security Mode Complete: with the
// IMEISV when the command asks for it, and with the whole initial message
// when that went out with cleartext IEs only or the network asks for it
// again (RINMR) (4.4.6).
func (u *UE) onSecurityModeCommand(m *nas.Message, full []byte, cleartext bool) error {
	c := m.SecurityModeCommand
	if !bytes.Equal(c.ReplayedUESecurityCapabilities.Buffer, ueSecurityCaps) {
		// TS 24.501 5.4.2.5: Security Mode Reject #23, under the old context.
		return u.sendUplink(nasx.BuildSecurityModeReject(nasMessage.Cause5GMMUESecurityCapabilitiesMismatch))
	}
	u.sec, u.kamf, u.ngKSI = u.smc.sec, u.smc.kamf, u.smc.ngKSI
	var container []byte
	if cleartext || c.Additional5GSecurityInformation != nil && c.Additional5GSecurityInformation.GetRINMR() == 1 {
		container = full
	}
	imeisv := ""
	if c.IMEISVRequest != nil && c.IMEISVRequest.GetIMEISVRequestValue() == nasMessage.IMEISVRequested {
		imeisv = imeisvOf(u.sub.IMSI)
	}
	return u.sendUplink(nasx.BuildSecurityModeCompleteWithIMEISV(container, imeisv))
}

// onRegistrationAccept keeps the 5G-GUTI and allowed NSSAI and completes
// the registration (TS 24.501 5.5.1.2.4).
func (u *UE) onRegistrationAccept(a *nasMessage.RegistrationAccept) error {
	if a.GUTI5G != nil {
		id, err := nasx.ParseMobileIdentity(a.GUTI5G.Octet[:a.GUTI5G.GetLen()])
		if err != nil {
			return fmt.Errorf("Registration Accept: 5G-GUTI: %w", err)
		}
		g := id.GUTI
		u.guti = &g
	}
	if a.AllowedNSSAI != nil {
		allowed, err := nasx.NSSAIModels(a.AllowedNSSAI.Buffer)
		if err != nil {
			return fmt.Errorf("Registration Accept: allowed NSSAI: %w", err)
		}
		u.Allowed = allowed
	}
	tai := u.g.cell.TAI
	u.lastTAI = &tai
	if a.GUTI5G == nil {
		return nil // nothing to acknowledge
	}
	return u.sendUplink(nasx.BuildRegistrationComplete())
}

// Deregister runs UE-initiated deregistration (TS 23.502 4.2.2.3.2): the
// AMF answers Deregistration Accept (unless switchOff) and releases the N2
// connection. It returns the time until the release.
func (u *UE) Deregister(ctx context.Context, switchOff bool) (time.Duration, error) {
	u.drain()
	if u.guti == nil || u.sec == nil {
		return 0, errors.New("deregistration: the UE is not registered")
	}
	identity, err := nasx.EncodeGUTI(*u.guti)
	if err != nil {
		return 0, err
	}
	req, err := nasx.BuildDeregistrationRequest(switchOff, u.ngKSI, identity)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if u.ranID.Load() == 0 {
		err = u.sendInitial(req)
	} else {
		err = u.sendUplink(req, nil)
	}
	if err != nil {
		return 0, err
	}
	accepted := switchOff
	for {
		m, err := u.nextNAS(ctx)
		switch {
		case errors.Is(err, ErrReleased) && accepted:
			u.forgetSessions()
			return time.Since(start), nil
		case err != nil:
			return 0, fmt.Errorf("deregistration of %s: %w", u.supi, err)
		case m.GmmHeader.GetMessageType() == nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration:
			accepted = true
		default:
			if err := u.onCommon(m); err != nil {
				return 0, fmt.Errorf("deregistration of %s: %w", u.supi, err)
			}
		}
	}
}

// NotForwardedError is the AMF sending a 5GSM message back in DL NAS
// Transport because it could not forward it (TS 24.501 5.4.5.2.5), e.g.
// #90 "payload was not forwarded" from a core without an SMF.
type NotForwardedError struct {
	Cause        uint8
	PDUSessionID uint8
	Payload      []byte // the 5GSM message as the UE sent it
}

func (e *NotForwardedError) Error() string {
	return fmt.Sprintf("5GSM message of PDU session %d not forwarded (5GMM cause %d)", e.PDUSessionID, e.Cause)
}

// AwaitConfigurationUpdate waits for a Configuration Update Command
// (TS 24.501 5.4.4), which follows Registration Complete.
func (u *UE) AwaitConfigurationUpdate(ctx context.Context) error {
	for {
		m, err := u.nextNAS(ctx)
		if err != nil {
			return err
		}
		if err := u.onCommon(m); err != nil {
			return err
		}
		if m.GmmHeader.GetMessageType() == nas.MsgTypeConfigurationUpdateCommand {
			return nil
		}
	}
}

// drain handles what arrived between procedures (a Configuration Update
// Command, a release) before a new procedure starts.
func (u *UE) drain() {
	for {
		select {
		case d := <-u.inbox:
			if d.released {
				// The network released the N2 connection between
				// procedures: the UE is CM-IDLE (TS 24.501 5.3.1.1).
				u.ranID.Store(0)
				continue
			}
			if m, err := u.readNAS(d); err == nil && m != nil {
				_ = u.onCommon(m)
			}
		default:
			return
		}
	}
}

// nextNAS returns the next downlink 5GMM message that passes the UE's
// security checks; others are discarded (TS 24.501 4.4.4.2, 4.4.3.2).
func (u *UE) nextNAS(ctx context.Context) (*nas.Message, error) {
	for {
		d, err := u.next(ctx)
		if err != nil {
			return nil, err
		}
		if d.released {
			u.ranID.Store(0)
			return nil, ErrReleased
		}
		if d.name == "ErrorIndication" {
			return nil, fmt.Errorf("Error Indication from the AMF: %s", ngapx.CauseString(d.cause))
		}
		m, err := u.readNAS(d)
		if err != nil {
			u.g.log.Warn("downlink NAS discarded", "supi", u.supi, "err", err)
			continue
		}
		if m != nil {
			return m, nil
		}
	}
}

func (u *UE) readNAS(d downlink) (*nas.Message, error) {
	if d.nas == nil {
		return nil, nil
	}
	h, err := nasx.PeekHeader(d.nas)
	if err != nil {
		return nil, err
	}
	if !h.Protected() {
		m, err := nasx.Decode(d.nas)
		if err == nil && u.sec != nil && plainMeansNoContext(m.GmmHeader.GetMessageType()) {
			// The AMF asks in the clear: it has no context for us (e.g. it
			// removed it at deregistration), so ours is useless and the
			// answers go in the clear too (TS 24.501 4.4.4.2, 4.4.6).
			u.sec, u.kamf, u.ngKSI = nil, nil, 7
		}
		return m, err
	}
	if h.SecurityHeaderType == nas.SecurityHeaderTypeIntegrityProtectedWithNew5gNasSecurityContext {
		return u.verifySecurityModeCommand(d.nas)
	}
	if u.sec == nil {
		return nil, errors.New("protected message without a security context")
	}
	plain, _, err := u.sec.Unprotect(d.nas)
	if err != nil {
		return nil, err
	}
	return nasx.Decode(plain)
}

// plainMeansNoContext: message types the network sends without protection
// only when it has no security context for the UE.
func plainMeansNoContext(t uint8) bool {
	return t == nas.MsgTypeIdentityRequest || t == nas.MsgTypeAuthenticationRequest
}

// verifySecurityModeCommand checks the command's MAC under the context it
// names: the one the last 5G AKA made, or the current one (TS 33.501 6.7.2).
func (u *UE) verifySecurityModeCommand(pdu []byte) (*nas.Message, error) {
	if len(pdu) < 7 {
		return nil, errors.New("short Security Mode Command")
	}
	m, err := nasx.Decode(pdu[7:])
	if err != nil {
		return nil, err
	}
	c := m.SecurityModeCommand
	if c == nil {
		return nil, errors.New("new-context header on a message that is not Security Mode Command")
	}
	ksi := c.SpareHalfOctetAndNgksi.GetNasKeySetIdentifiler()
	kamf := u.kamf
	if u.pendingKAMF != nil && ksi == u.pendingKSI {
		kamf = u.pendingKAMF
	}
	if kamf == nil {
		return nil, fmt.Errorf("Security Mode Command for unknown ngKSI %d", ksi)
	}
	alg := c.SelectedNASSecurityAlgorithms
	sec := security.NewNASContext(kamf, alg.GetTypeOfCipheringAlgorithm(), alg.GetTypeOfIntegrityProtectionAlgorithm(), security.Uplink)
	if _, _, err := sec.Unprotect(pdu); err != nil {
		return nil, fmt.Errorf("Security Mode Command: %w", err)
	}
	u.smc = smcContext{sec: sec, kamf: kamf, ngKSI: ksi}
	return m, nil
}

// sendInitial opens the UE's N2 connection with an Initial UE Message: the
// NAS message integrity protected when the UE has a context (TS 24.501 4.4.6).
func (u *UE) sendInitial(plain []byte) error {
	return u.sendInitialWithCause(plain, ngapType.RRCEstablishmentCausePresentMoSignalling)
}

// sendInitialWithCause is sendInitial with the RRC establishment cause the
// UE gave the gNB (TS 38.331 5.3.3), e.g. mt-Access answering paging.
func (u *UE) sendInitialWithCause(plain []byte, rrcCause aper.Enumerated) error {
	pdu := plain
	if u.sec != nil {
		var err error
		if pdu, err = u.sec.Protect(plain, nas.SecurityHeaderTypeIntegrityProtected); err != nil {
			return err
		}
	}
	ranID := u.g.attach(u)
	u.ranID.Store(ranID)
	u.amfID.Store(-1)
	var stmsi *nasx.STMSI
	if u.guti != nil {
		s := u.guti.STMSI()
		stmsi = &s
	}
	b, err := ngapx.BuildInitialUEMessageWithCause(ranID, pdu, u.g.cell, stmsi, rrcCause)
	if err != nil {
		return err
	}
	u.g.tracer().Sent(ranID, b)
	return u.g.conn.WriteMsg(b, u.g.stream(ranID))
}

// sendUplink sends a 5GMM message in Uplink NAS Transport, integrity
// protected and ciphered once the UE has a context.
func (u *UE) sendUplink(plain []byte, err error) error {
	if err != nil {
		return err
	}
	pdu := plain
	if u.sec != nil {
		sht := uint8(nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
		if plain[2] == nas.MsgTypeSecurityModeComplete {
			sht = nas.SecurityHeaderTypeIntegrityProtectedAndCipheredWithNew5gNasSecurityContext
		}
		if pdu, err = u.sec.Protect(plain, sht); err != nil {
			return err
		}
	}
	ranID := u.ranID.Load()
	b, err := ngapx.BuildUplinkNASTransport(u.amfID.Load(), ranID, pdu, u.g.cell)
	if err != nil {
		return err
	}
	u.g.tracer().Sent(ranID, b)
	return u.g.conn.WriteMsg(b, u.g.stream(ranID))
}
