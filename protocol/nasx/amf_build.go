package nasx

import (
	"fmt"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// Downlink 5GMM builders of the AMF. Each returns the plain message; the AMF
// protects it with its NAS security context (package security) when one is
// active.

func newGmm(msgType uint8) *nas.Message {
	m := nas.NewMessage()
	m.GmmMessage = nas.NewGmmMessage()
	m.GmmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	m.GmmHeader.SetMessageType(msgType)
	return m
}

func header(epd *nasType.ExtendedProtocolDiscriminator, sht *nasType.SpareHalfOctetAndSecurityHeaderType) {
	epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	sht.SetSecurityHeaderType(nas.SecurityHeaderTypePlainNas)
}

func encode(m *nas.Message) ([]byte, error) {
	b, err := m.PlainNasEncode()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", MessageName(m.GmmHeader.GetMessageType()), err)
	}
	return b, nil
}

// RegistrationAccept carries what TS 24.501 5.5.1.2.4 sends on acceptance.
type RegistrationAccept struct {
	GUTI    *GUTI // nil: keep the UE's GUTI (no new one assigned)
	TAIs    []domain.TAI
	Allowed []models.Snssai
	T3512   time.Duration
}

// BuildRegistrationAccept builds Registration Accept (TS 24.501 8.2.7) with
// 5GS registration result "3GPP access" (9.11.3.6).
func BuildRegistrationAccept(p RegistrationAccept) ([]byte, error) {
	m := newGmm(nas.MsgTypeRegistrationAccept)
	a := nasMessage.NewRegistrationAccept(0)
	header(&a.ExtendedProtocolDiscriminator, &a.SpareHalfOctetAndSecurityHeaderType)
	a.RegistrationAcceptMessageIdentity.SetMessageType(nas.MsgTypeRegistrationAccept)
	a.RegistrationResult5GS.SetLen(1)
	a.RegistrationResult5GS.SetRegistrationResultValue5GS(nasMessage.AccessType3GPP)
	if p.GUTI != nil {
		g, err := EncodeGUTI(*p.GUTI)
		if err != nil {
			return nil, err
		}
		a.GUTI5G = nasType.NewGUTI5G(nasMessage.RegistrationAcceptGUTI5GType)
		a.GUTI5G.SetLen(uint16(len(g)))
		copy(a.GUTI5G.Octet[:], g)
	}
	if len(p.TAIs) > 0 {
		tl, err := domain.TAIListToNAS(p.TAIs)
		if err != nil {
			return nil, err
		}
		a.TAIList = nasType.NewTAIList(nasMessage.RegistrationAcceptTAIListType)
		a.TAIList.SetLen(uint8(len(tl)))
		a.TAIList.Buffer = tl
	}
	if len(p.Allowed) > 0 {
		ns, err := nssaiOctets(p.Allowed)
		if err != nil {
			return nil, err
		}
		a.AllowedNSSAI = nasType.NewAllowedNSSAI(nasMessage.RegistrationAcceptAllowedNSSAIType)
		a.AllowedNSSAI.SetLen(uint8(len(ns)))
		a.AllowedNSSAI.Buffer = ns
	}
	if p.T3512 != 0 {
		a.T3512Value = nasType.NewT3512Value(nasMessage.RegistrationAcceptT3512ValueType)
		a.T3512Value.SetLen(1)
		a.T3512Value.Octet = GPRSTimer3(p.T3512)
	}
	m.RegistrationAccept = a
	return encode(m)
}

// BuildRegistrationReject builds Registration Reject (TS 24.501 8.2.9).
func BuildRegistrationReject(cause uint8) ([]byte, error) {
	return BuildRegistrationRejectWithT3346(cause, 0)
}

// BuildRegistrationRejectWithT3346 builds Registration Reject with the T3346
// value IE (TS 24.501 8.2.9.2, GPRS timer 2) when t3346 is positive: the
// back-off of #22 congestion (TS 24.501 5.3.9, 5.5.1.2.5).
func BuildRegistrationRejectWithT3346(cause uint8, t3346 time.Duration) ([]byte, error) {
	m := newGmm(nas.MsgTypeRegistrationReject)
	r := nasMessage.NewRegistrationReject(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.RegistrationRejectMessageIdentity.SetMessageType(nas.MsgTypeRegistrationReject)
	r.Cause5GMM.SetCauseValue(cause)
	if t3346 > 0 {
		r.T3346Value = nasType.NewT3346Value(nasMessage.RegistrationRejectT3346ValueType)
		r.T3346Value.SetLen(1)
		r.T3346Value.SetGPRSTimer2Value(GPRSTimer2(t3346))
	}
	m.RegistrationReject = r
	return encode(m)
}

// BuildAuthenticationRequest builds Authentication Request for 5G-AKA
// (TS 24.501 8.2.1, 5.4.1.3.2) with ngKSI, ABBA, RAND and AUTN.
func BuildAuthenticationRequest(ngKSI uint8, abba []byte, rand, autn [16]byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeAuthenticationRequest)
	r := nasMessage.NewAuthenticationRequest(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.AuthenticationRequestMessageIdentity.SetMessageType(nas.MsgTypeAuthenticationRequest)
	r.SpareHalfOctetAndNgksi.SetTSC(nasMessage.TypeOfSecurityContextFlagNative)
	r.SpareHalfOctetAndNgksi.SetNasKeySetIdentifiler(ngKSI & 7)
	r.ABBA.SetLen(uint8(len(abba)))
	r.ABBA.SetABBAContents(abba)
	r.AuthenticationParameterRAND = nasType.NewAuthenticationParameterRAND(nasMessage.AuthenticationRequestAuthenticationParameterRANDType)
	r.AuthenticationParameterRAND.SetRANDValue(rand)
	r.AuthenticationParameterAUTN = nasType.NewAuthenticationParameterAUTN(nasMessage.AuthenticationRequestAuthenticationParameterAUTNType)
	r.AuthenticationParameterAUTN.SetLen(16)
	r.AuthenticationParameterAUTN.SetAUTN(autn)
	m.AuthenticationRequest = r
	return encode(m)
}

// BuildAuthenticationReject builds Authentication Reject (TS 24.501 8.2.5).
func BuildAuthenticationReject() ([]byte, error) {
	m := newGmm(nas.MsgTypeAuthenticationReject)
	r := nasMessage.NewAuthenticationReject(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.AuthenticationRejectMessageIdentity.SetMessageType(nas.MsgTypeAuthenticationReject)
	m.AuthenticationReject = r
	return encode(m)
}

// BuildAuthenticationResult builds Authentication Result (TS 24.501 8.2.4),
// used by EAP-AKA' only; eap is the EAP-Success/Failure packet.
func BuildAuthenticationResult(ngKSI uint8, eap []byte, abba []byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeAuthenticationResult)
	r := nasMessage.NewAuthenticationResult(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.AuthenticationResultMessageIdentity.SetMessageType(nas.MsgTypeAuthenticationResult)
	r.SpareHalfOctetAndNgksi.SetNasKeySetIdentifiler(ngKSI & 7)
	r.EAPMessage.SetLen(uint16(len(eap)))
	r.EAPMessage.SetEAPMessage(eap)
	if abba != nil {
		r.ABBA = nasType.NewABBA(nasMessage.AuthenticationResultABBAType)
		r.ABBA.SetLen(uint8(len(abba)))
		r.ABBA.SetABBAContents(abba)
	}
	m.AuthenticationResult = r
	return encode(m)
}

// SecurityModeCommand is what TS 24.501 5.4.2.2 sends.
type SecurityModeCommand struct {
	IA, EA        uint8
	NgKSI         uint8
	ReplayedUECap SecurityCapability // replayed bit-exact as received
	IMEISVRequest bool
	// RetransmitInitial asks the UE for its whole initial message in Security
	// Mode Complete (RINMR, 9.11.3.12), when the AMF could not read the
	// initial message's NAS message container (4.4.6).
	RetransmitInitial bool
}

// BuildSecurityModeCommand builds Security Mode Command (TS 24.501 8.2.25).
func BuildSecurityModeCommand(p SecurityModeCommand) ([]byte, error) {
	if !p.ReplayedUECap.Valid() {
		return nil, fmt.Errorf("security mode command: UE security capability of %d octets", len(p.ReplayedUECap.Raw))
	}
	m := newGmm(nas.MsgTypeSecurityModeCommand)
	c := nasMessage.NewSecurityModeCommand(0)
	header(&c.ExtendedProtocolDiscriminator, &c.SpareHalfOctetAndSecurityHeaderType)
	c.SecurityModeCommandMessageIdentity.SetMessageType(nas.MsgTypeSecurityModeCommand)
	c.SelectedNASSecurityAlgorithms.SetTypeOfCipheringAlgorithm(p.EA)
	c.SelectedNASSecurityAlgorithms.SetTypeOfIntegrityProtectionAlgorithm(p.IA)
	c.SpareHalfOctetAndNgksi.SetTSC(nasMessage.TypeOfSecurityContextFlagNative)
	c.SpareHalfOctetAndNgksi.SetNasKeySetIdentifiler(p.NgKSI & 7)
	c.ReplayedUESecurityCapabilities.SetLen(uint8(len(p.ReplayedUECap.Raw)))
	c.ReplayedUESecurityCapabilities.Buffer = append([]byte(nil), p.ReplayedUECap.Raw...)
	if p.IMEISVRequest {
		c.IMEISVRequest = nasType.NewIMEISVRequest(nasMessage.SecurityModeCommandIMEISVRequestType)
		c.IMEISVRequest.SetIMEISVRequestValue(nasMessage.IMEISVRequested)
	}
	if p.RetransmitInitial {
		c.Additional5GSecurityInformation = nasType.NewAdditional5GSecurityInformation(nasMessage.SecurityModeCommandAdditional5GSecurityInformationType)
		c.Additional5GSecurityInformation.SetLen(1)
		c.Additional5GSecurityInformation.SetRINMR(1)
	}
	m.SecurityModeCommand = c
	return encode(m)
}

// BuildIdentityRequest builds Identity Request (TS 24.501 8.2.21) for t.
func BuildIdentityRequest(t IdentityType) ([]byte, error) {
	m := newGmm(nas.MsgTypeIdentityRequest)
	r := nasMessage.NewIdentityRequest(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.IdentityRequestMessageIdentity.SetMessageType(nas.MsgTypeIdentityRequest)
	r.SpareHalfOctetAndIdentityType.SetTypeOfIdentity(uint8(t))
	m.IdentityRequest = r
	return encode(m)
}

// BuildConfigurationUpdateCommand builds Configuration Update Command
// (TS 24.501 8.2.19) carrying the network names (9.11.3.35), with no
// acknowledgement requested (5.4.4.2).
func BuildConfigurationUpdateCommand(full, short string) ([]byte, error) {
	m := newGmm(nas.MsgTypeConfigurationUpdateCommand)
	c := nasMessage.NewConfigurationUpdateCommand(0)
	header(&c.ExtendedProtocolDiscriminator, &c.SpareHalfOctetAndSecurityHeaderType)
	c.ConfigurationUpdateCommandMessageIdentity.SetMessageType(nas.MsgTypeConfigurationUpdateCommand)
	if full != "" {
		v := NetworkName(full)
		c.FullNameForNetwork = nasType.NewFullNameForNetwork(nasMessage.ConfigurationUpdateCommandFullNameForNetworkType)
		c.FullNameForNetwork.SetLen(uint8(len(v)))
		c.FullNameForNetwork.Buffer = v
	}
	if short != "" {
		v := NetworkName(short)
		c.ShortNameForNetwork = nasType.NewShortNameForNetwork(nasMessage.ConfigurationUpdateCommandShortNameForNetworkType)
		c.ShortNameForNetwork.SetLen(uint8(len(v)))
		c.ShortNameForNetwork.Buffer = v
	}
	m.ConfigurationUpdateCommand = c
	return encode(m)
}

// BuildDeregistrationAccept builds Deregistration Accept, UE originating
// (TS 24.501 8.2.13).
func BuildDeregistrationAccept() ([]byte, error) {
	m := newGmm(nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration)
	a := nasMessage.NewDeregistrationAcceptUEOriginatingDeregistration(0)
	header(&a.ExtendedProtocolDiscriminator, &a.SpareHalfOctetAndSecurityHeaderType)
	a.DeregistrationAcceptMessageIdentity.SetMessageType(nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration)
	m.DeregistrationAcceptUEOriginatingDeregistration = a
	return encode(m)
}

// BuildServiceReject builds Service Reject (TS 24.501 8.2.18).
func BuildServiceReject(cause uint8) ([]byte, error) {
	m := newGmm(nas.MsgTypeServiceReject)
	r := nasMessage.NewServiceReject(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.ServiceRejectMessageIdentity.SetMessageType(nas.MsgTypeServiceReject)
	r.Cause5GMM.SetCauseValue(cause)
	m.ServiceReject = r
	return encode(m)
}

// BuildStatus builds 5GMM Status (TS 24.501 8.2.29), the answer to a message
// the AMF cannot process (TS 24.501 7.3-7.5).
func BuildStatus(cause uint8) ([]byte, error) {
	m := newGmm(nas.MsgTypeStatus5GMM)
	s := nasMessage.NewStatus5GMM(0)
	header(&s.ExtendedProtocolDiscriminator, &s.SpareHalfOctetAndSecurityHeaderType)
	s.STATUSMessageIdentity5GMM.SetMessageType(nas.MsgTypeStatus5GMM)
	s.Cause5GMM.SetCauseValue(cause)
	m.Status5GMM = s
	return encode(m)
}
