package nasx

import (
	"fmt"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// Uplink 5GMM builders of the UE side (the simulator in test/ransim and the
// AMF's tests). Each returns the plain message; the UE protects it with its
// NAS security context when one is active.

func ueHeader(epd *nasType.ExtendedProtocolDiscriminator, sht *nasType.SpareHalfOctetAndSecurityHeaderType,
	typ interface{ SetMessageType(uint8) }, msgType uint8) {
	epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	sht.SetSecurityHeaderType(nas.SecurityHeaderTypePlainNas)
	typ.SetMessageType(msgType)
}

// RegistrationRequest is what a UE puts in Registration Request
// (TS 24.501 8.2.6).
type RegistrationRequest struct {
	Type         uint8 // 5GS registration type (9.11.3.7), e.g. nasMessage.RegistrationType5GSInitialRegistration
	NgKSI        uint8 // 7: no key available
	Identity     []byte
	SecurityCaps []byte          // UE security capability value (9.11.3.54)
	Requested    []models.Snssai // requested NSSAI; omitted when empty
	// Capability5GMM is the 5GMM capability value (9.11.3.1), which a UE
	// includes in initial registration and mobility registration updating
	// (5.5.1.2.2, 5.5.1.3.2); nil leaves the IE out.
	Capability5GMM []byte
	// LastVisited is the last visited registered TAI (9.11.3.8), included
	// when the UE holds a valid one (5.5.1.2.2, 5.5.1.3.2).
	LastVisited *domain.TAI
	// Cleartext leaves out the IEs that TS 24.501 4.4.6 keeps out of an
	// initial message: all of them without a security context; with one,
	// they travel ciphered in Container.
	Cleartext bool
	// Container is the NAS message container value (9.11.3.33) of a
	// cleartext initial message sent with a security context: the whole
	// message, ciphered (4.4.6). nil leaves the IE out.
	Container []byte
	// NoFollowOn clears "follow-on request pending" (9.11.3.7): a periodic
	// or mobility update after which the AMF releases the UE to CM-IDLE
	// (5.3.1.3).
	NoFollowOn bool
}

// BuildRegistrationRequest builds Registration Request (TS 24.501 8.2.6).
func BuildRegistrationRequest(p RegistrationRequest) ([]byte, error) {
	m := newGmm(nas.MsgTypeRegistrationRequest)
	r := nasMessage.NewRegistrationRequest(0)
	ueHeader(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType, &r.RegistrationRequestMessageIdentity, nas.MsgTypeRegistrationRequest)
	r.NgksiAndRegistrationType5GS.SetRegistrationType5GS(p.Type)
	r.NgksiAndRegistrationType5GS.SetNasKeySetIdentifiler(p.NgKSI)
	r.NgksiAndRegistrationType5GS.SetFOR(1)
	if p.NoFollowOn {
		r.NgksiAndRegistrationType5GS.SetFOR(0)
	}
	r.MobileIdentity5GS.SetLen(uint16(len(p.Identity)))
	r.MobileIdentity5GS.Buffer = p.Identity
	if len(p.SecurityCaps) > 0 {
		r.UESecurityCapability = nasType.NewUESecurityCapability(nasMessage.RegistrationRequestUESecurityCapabilityType)
		r.UESecurityCapability.SetLen(uint8(len(p.SecurityCaps)))
		r.UESecurityCapability.Buffer = p.SecurityCaps
	}
	if p.Cleartext {
		// TS 24.501 4.4.6: the rest is in the NAS message container, now
		// (with a security context) or in Security Mode Complete.
		if p.Container != nil {
			r.NASMessageContainer = nasType.NewNASMessageContainer(nasMessage.RegistrationRequestNASMessageContainerType)
			r.NASMessageContainer.SetLen(uint16(len(p.Container)))
			r.NASMessageContainer.Buffer = p.Container
		}
		m.RegistrationRequest = r
		return encode(m)
	}
	if len(p.Capability5GMM) > 0 {
		if len(p.Capability5GMM) > 13 {
			return nil, fmt.Errorf("5GMM capability of %d octets: want 1-13", len(p.Capability5GMM))
		}
		r.Capability5GMM = nasType.NewCapability5GMM(nasMessage.RegistrationRequestCapability5GMMType)
		r.Capability5GMM.SetLen(uint8(len(p.Capability5GMM)))
		copy(r.Capability5GMM.Octet[:], p.Capability5GMM)
	}
	if len(p.Requested) > 0 {
		ns, err := nssaiOctets(p.Requested)
		if err != nil {
			return nil, err
		}
		r.RequestedNSSAI = nasType.NewRequestedNSSAI(nasMessage.RegistrationRequestRequestedNSSAIType)
		r.RequestedNSSAI.SetLen(uint8(len(ns)))
		r.RequestedNSSAI.Buffer = ns
	}
	if p.LastVisited != nil {
		tai, err := p.LastVisited.ToNAS()
		if err != nil {
			return nil, err
		}
		r.LastVisitedRegisteredTAI = nasType.NewLastVisitedRegisteredTAI(nasMessage.RegistrationRequestLastVisitedRegisteredTAIType)
		copy(r.LastVisitedRegisteredTAI.Octet[:], tai)
	}
	m.RegistrationRequest = r
	return encode(m)
}

// BuildIdentityResponse builds Identity Response (TS 24.501 8.2.22).
func BuildIdentityResponse(identity []byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeIdentityResponse)
	r := nasMessage.NewIdentityResponse(0)
	ueHeader(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType, &r.IdentityResponseMessageIdentity, nas.MsgTypeIdentityResponse)
	r.MobileIdentity.SetLen(uint16(len(identity)))
	r.MobileIdentity.Buffer = identity
	m.IdentityResponse = r
	return encode(m)
}

// BuildAuthenticationResponse builds Authentication Response carrying RES*
// (TS 24.501 8.2.2, 9.11.3.17).
func BuildAuthenticationResponse(resStar []byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeAuthenticationResponse)
	a := nasMessage.NewAuthenticationResponse(0)
	ueHeader(&a.ExtendedProtocolDiscriminator, &a.SpareHalfOctetAndSecurityHeaderType, &a.AuthenticationResponseMessageIdentity, nas.MsgTypeAuthenticationResponse)
	a.AuthenticationResponseParameter = nasType.NewAuthenticationResponseParameter(nasMessage.AuthenticationResponseAuthenticationResponseParameterType)
	a.AuthenticationResponseParameter.SetLen(uint8(len(resStar)))
	copy(a.AuthenticationResponseParameter.Octet[:], resStar)
	m.AuthenticationResponse = a
	return encode(m)
}

// BuildAuthenticationFailure builds Authentication Failure (TS 24.501
// 8.2.4) with 5GMM cause 20 (MAC failure), 21 (synch failure, with AUTS)
// or 26 (non-5G authentication unacceptable).
func BuildAuthenticationFailure(cause uint8, auts []byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeAuthenticationFailure)
	f := nasMessage.NewAuthenticationFailure(0)
	ueHeader(&f.ExtendedProtocolDiscriminator, &f.SpareHalfOctetAndSecurityHeaderType, &f.AuthenticationFailureMessageIdentity, nas.MsgTypeAuthenticationFailure)
	f.Cause5GMM.SetCauseValue(cause)
	if auts != nil {
		f.AuthenticationFailureParameter = nasType.NewAuthenticationFailureParameter(nasMessage.AuthenticationFailureAuthenticationFailureParameterType)
		f.AuthenticationFailureParameter.SetLen(uint8(len(auts)))
		copy(f.AuthenticationFailureParameter.Octet[:], auts)
	}
	m.AuthenticationFailure = f
	return encode(m)
}

// BuildSecurityModeComplete builds Security Mode Complete (TS 24.501
// 8.2.26), carrying the whole initial message when the network asked for
// it or the initial message was cut to cleartext IEs (4.4.6).
func BuildSecurityModeComplete(container []byte) ([]byte, error) {
	return BuildSecurityModeCompleteWithIMEISV(container, "")
}

// BuildSecurityModeCompleteWithIMEISV is Security Mode Complete with the
// UE's IMEISV (16 digits), which the UE includes when the command requested
// it (TS 24.501 5.4.2.3, 8.2.26.2); "" leaves the IE out.
func BuildSecurityModeCompleteWithIMEISV(container []byte, imeisv string) ([]byte, error) {
	m := newGmm(nas.MsgTypeSecurityModeComplete)
	s := nasMessage.NewSecurityModeComplete(0)
	ueHeader(&s.ExtendedProtocolDiscriminator, &s.SpareHalfOctetAndSecurityHeaderType, &s.SecurityModeCompleteMessageIdentity, nas.MsgTypeSecurityModeComplete)
	if imeisv != "" {
		v, err := EncodeIMEISV(imeisv)
		if err != nil {
			return nil, err
		}
		s.IMEISV = nasType.NewIMEISV(nasMessage.SecurityModeCompleteIMEISVType)
		s.IMEISV.SetLen(uint16(len(v)))
		copy(s.IMEISV.Octet[:], v)
	}
	if container != nil {
		s.NASMessageContainer = nasType.NewNASMessageContainer(nasMessage.SecurityModeCompleteNASMessageContainerType)
		s.NASMessageContainer.SetLen(uint16(len(container)))
		s.NASMessageContainer.Buffer = container
	}
	m.SecurityModeComplete = s
	return encode(m)
}

// BuildSecurityModeReject builds Security Mode Reject (TS 24.501 8.2.27),
// e.g. with #23 when the replayed UE security capabilities do not match
// the UE's (5.4.2.5).
func BuildSecurityModeReject(cause uint8) ([]byte, error) {
	m := newGmm(nas.MsgTypeSecurityModeReject)
	r := nasMessage.NewSecurityModeReject(0)
	ueHeader(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType, &r.SecurityModeRejectMessageIdentity, nas.MsgTypeSecurityModeReject)
	r.Cause5GMM.SetCauseValue(cause)
	m.SecurityModeReject = r
	return encode(m)
}

// BuildRegistrationComplete builds Registration Complete (TS 24.501 8.2.8).
func BuildRegistrationComplete() ([]byte, error) {
	m := newGmm(nas.MsgTypeRegistrationComplete)
	c := nasMessage.NewRegistrationComplete(0)
	ueHeader(&c.ExtendedProtocolDiscriminator, &c.SpareHalfOctetAndSecurityHeaderType, &c.RegistrationCompleteMessageIdentity, nas.MsgTypeRegistrationComplete)
	m.RegistrationComplete = c
	return encode(m)
}

// BuildConfigurationUpdateComplete builds Configuration Update Complete
// (TS 24.501 8.2.20), the UE's acknowledgement of a command that asked for
// one (5.4.4.3).
func BuildConfigurationUpdateComplete() ([]byte, error) {
	m := newGmm(nas.MsgTypeConfigurationUpdateComplete)
	c := nasMessage.NewConfigurationUpdateComplete(0)
	ueHeader(&c.ExtendedProtocolDiscriminator, &c.SpareHalfOctetAndSecurityHeaderType, &c.ConfigurationUpdateCompleteMessageIdentity,
		nas.MsgTypeConfigurationUpdateComplete)
	m.ConfigurationUpdateComplete = c
	return encode(m)
}

// BuildDeregistrationRequest builds Deregistration Request, UE originating
// (TS 24.501 8.2.11), for 3GPP access; switchOff says the UE is powering
// down and expects no answer (5.5.2.2.1).
func BuildDeregistrationRequest(switchOff bool, ngKSI uint8, identity []byte) ([]byte, error) {
	m := newGmm(nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration)
	d := nasMessage.NewDeregistrationRequestUEOriginatingDeregistration(0)
	ueHeader(&d.ExtendedProtocolDiscriminator, &d.SpareHalfOctetAndSecurityHeaderType, &d.DeregistrationRequestMessageIdentity,
		nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration)
	d.NgksiAndDeregistrationType.SetAccessType(nasMessage.AccessType3GPP)
	if switchOff {
		d.NgksiAndDeregistrationType.SetSwitchOff(1)
	}
	d.NgksiAndDeregistrationType.SetNasKeySetIdentifiler(ngKSI)
	d.MobileIdentity5GS.SetLen(uint16(len(identity)))
	d.MobileIdentity5GS.Buffer = identity
	m.DeregistrationRequestUEOriginatingDeregistration = d
	return encode(m)
}
