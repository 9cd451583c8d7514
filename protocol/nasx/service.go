package nasx

// The Service Request procedure's messages (TS 24.501 5.6.1), both sides:
// Service Request (8.2.16: the UE builds, the AMF reads), Service Accept
// (8.2.17) and Service Reject (8.2.18: the AMF builds, the UE reads), with
// the PDU session bitmaps they carry (PDU session status 9.11.3.44, Uplink
// data status 9.11.3.57, Allowed PDU session status 9.11.3.13, PDU session
// reactivation result 9.11.3.42) and the reactivation result error cause
// (9.11.3.43).

import (
	"fmt"
	"sort"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
)

// Service type values (TS 24.501 9.11.3.50).
const (
	ServiceTypeSignalling          uint8 = 0
	ServiceTypeData                uint8 = 1
	ServiceTypeMobileTerminated    uint8 = 2
	ServiceTypeEmergency           uint8 = 3
	ServiceTypeEmergencyFallback   uint8 = 4
	ServiceTypeHighPriorityAccess  uint8 = 5
	ServiceTypeElevatedSignalling  uint8 = 6
	serviceTypeUnusedReservedFirst uint8 = 7
)

// PSISet is a set of PDU session identities 1-15, the bitmap of the PDU
// session status family of IEs (TS 24.501 9.11.3.44 and siblings): bit i is
// PSI i; PSI 0 is spare and never a member.
type PSISet uint16

// PSIs is the set of the given PDU session identities (0 and >15 ignored).
func PSIs(ids ...uint8) PSISet {
	var s PSISet
	for _, id := range ids {
		s = s.With(id)
	}
	return s
}

// With is s plus id (ignored when not a PSI 1-15).
func (s PSISet) With(id uint8) PSISet {
	if id == 0 || id > 15 {
		return s
	}
	return s | 1<<id
}

// Has says whether id is in s.
func (s PSISet) Has(id uint8) bool { return id >= 1 && id <= 15 && s&(1<<id) != 0 }

// IDs lists the members in ascending order.
func (s PSISet) IDs() []uint8 {
	var out []uint8
	for id := uint8(1); id <= 15; id++ {
		if s.Has(id) {
			out = append(out, id)
		}
	}
	return out
}

// octets gives the two value octets: octet 3 holds PSI 7..0 (bit 8..1),
// octet 4 PSI 15..8 (TS 24.501 figure 9.11.3.44.1).
func (s PSISet) octets() []byte { return []byte{byte(s) &^ 1, byte(s >> 8)} }

// parsePSISet reads the value of a PDU session status-like IE: 2 to 32
// octets, the ones after the second spare (TS 24.501 9.11.3.44.1).
func parsePSISet(what string, b []byte) (PSISet, error) {
	if len(b) < 2 || len(b) > 32 {
		return 0, fail(CauseInvalidMandatoryInfo, "%s of %d octets, want 2-32", what, len(b))
	}
	return PSISet(uint16(b[0]&^1) | uint16(b[1])<<8), nil
}

// ServiceRequest is what Service Request carries (TS 24.501 8.2.16). A nil
// bitmap is an absent IE.
type ServiceRequest struct {
	ServiceType             uint8 // 9.11.3.50, e.g. ServiceTypeData
	NgKSI                   uint8 // 7: no key available
	STMSI                   STMSI
	UplinkDataStatus        *PSISet
	PDUSessionStatus        *PSISet
	AllowedPDUSessionStatus *PSISet
	// Cleartext leaves out the non-cleartext IEs (TS 24.501 4.4.6: with a
	// security context they travel in Container instead).
	Cleartext bool
	// Container is the NAS message container value (9.11.3.33): the whole
	// Service Request, ciphered (4.4.6). nil leaves the IE out.
	Container []byte
}

// BuildServiceRequest builds Service Request (TS 24.501 8.2.16).
func BuildServiceRequest(p ServiceRequest) ([]byte, error) {
	if p.ServiceType >= serviceTypeUnusedReservedFirst {
		return nil, fmt.Errorf("service request: service type %d", p.ServiceType)
	}
	m := newGmm(nas.MsgTypeServiceRequest)
	r := nasMessage.NewServiceRequest(0)
	ueHeader(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType, &r.ServiceRequestMessageIdentity, nas.MsgTypeServiceRequest)
	r.ServiceTypeAndNgksi.SetServiceTypeValue(p.ServiceType)
	r.ServiceTypeAndNgksi.SetNasKeySetIdentifiler(p.NgKSI & 7)
	r.TMSI5GS.SetLen(7)
	copy(r.TMSI5GS.Octet[:], EncodeSTMSI(p.STMSI))
	if !p.Cleartext {
		if p.UplinkDataStatus != nil {
			r.UplinkDataStatus = nasType.NewUplinkDataStatus(nasMessage.ServiceRequestUplinkDataStatusType)
			r.UplinkDataStatus.SetLen(2)
			r.UplinkDataStatus.Buffer = p.UplinkDataStatus.octets()
		}
		if p.PDUSessionStatus != nil {
			r.PDUSessionStatus = nasType.NewPDUSessionStatus(nasMessage.ServiceRequestPDUSessionStatusType)
			r.PDUSessionStatus.SetLen(2)
			r.PDUSessionStatus.Buffer = p.PDUSessionStatus.octets()
		}
		if p.AllowedPDUSessionStatus != nil {
			r.AllowedPDUSessionStatus = nasType.NewAllowedPDUSessionStatus(nasMessage.ServiceRequestAllowedPDUSessionStatusType)
			r.AllowedPDUSessionStatus.SetLen(2)
			r.AllowedPDUSessionStatus.Buffer = p.AllowedPDUSessionStatus.octets()
		}
	}
	if p.Container != nil {
		r.NASMessageContainer = nasType.NewNASMessageContainer(nasMessage.ServiceRequestNASMessageContainerType)
		r.NASMessageContainer.SetLen(uint16(len(p.Container)))
		r.NASMessageContainer.Buffer = p.Container
	}
	m.ServiceRequest = r
	return encode(m)
}

// ParseServiceRequest reads a decoded Service Request (the AMF's side). A
// malformed bitmap or identity is #96 invalid mandatory information, which
// the AMF answers with Service Reject (TS 24.501 7.5.2).
func ParseServiceRequest(r *nasMessage.ServiceRequest) (ServiceRequest, error) {
	out := ServiceRequest{ServiceType: r.ServiceTypeAndNgksi.GetServiceTypeValue(),
		NgKSI: r.ServiceTypeAndNgksi.GetNasKeySetIdentifiler()}
	id, err := ParseMobileIdentity(r.TMSI5GS.Octet[:])
	if err != nil || id.Type != IdentitySTMSI {
		return out, fail(CauseInvalidMandatoryInfo, "service request: 5G-S-TMSI expected, got %v (%v)", id.Type, err)
	}
	out.STMSI = id.STMSI
	if out.ServiceType >= serviceTypeUnusedReservedFirst {
		// TS 24.501 9.11.3.50: unused values are read as "signalling".
		out.ServiceType = ServiceTypeSignalling
	}
	if r.UplinkDataStatus != nil {
		if out.UplinkDataStatus, err = psiSetIE("uplink data status", r.UplinkDataStatus.Buffer); err != nil {
			return out, err
		}
	}
	if r.PDUSessionStatus != nil {
		if out.PDUSessionStatus, err = psiSetIE("PDU session status", r.PDUSessionStatus.Buffer); err != nil {
			return out, err
		}
	}
	if r.AllowedPDUSessionStatus != nil {
		if out.AllowedPDUSessionStatus, err = psiSetIE("allowed PDU session status", r.AllowedPDUSessionStatus.Buffer); err != nil {
			return out, err
		}
	}
	if r.NASMessageContainer != nil {
		out.Container = append([]byte(nil), r.NASMessageContainer.Buffer...)
	}
	return out, nil
}

func psiSetIE(what string, b []byte) (*PSISet, error) {
	s, err := parsePSISet(what, b)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// ServiceAccept is what Service Accept carries (TS 24.501 8.2.17).
type ServiceAccept struct {
	PDUSessionStatus *PSISet
	// ReactivationResult has the sessions whose user-plane resources could
	// not be set up (bit 1 = failure, 9.11.3.42); nil leaves the IE out.
	ReactivationResult *PSISet
	// ReactivationErrors is the 5GMM cause per PSI that failed (9.11.3.43).
	ReactivationErrors map[uint8]uint8
}

// BuildServiceAccept builds Service Accept (TS 24.501 8.2.17).
func BuildServiceAccept(p ServiceAccept) ([]byte, error) {
	m := newGmm(nas.MsgTypeServiceAccept)
	a := nasMessage.NewServiceAccept(0)
	header(&a.ExtendedProtocolDiscriminator, &a.SpareHalfOctetAndSecurityHeaderType)
	a.ServiceAcceptMessageIdentity.SetMessageType(nas.MsgTypeServiceAccept)
	if p.PDUSessionStatus != nil {
		a.PDUSessionStatus = nasType.NewPDUSessionStatus(nasMessage.ServiceAcceptPDUSessionStatusType)
		a.PDUSessionStatus.SetLen(2)
		a.PDUSessionStatus.Buffer = p.PDUSessionStatus.octets()
	}
	if p.ReactivationResult != nil {
		a.PDUSessionReactivationResult = nasType.NewPDUSessionReactivationResult(nasMessage.ServiceAcceptPDUSessionReactivationResultType)
		a.PDUSessionReactivationResult.SetLen(2)
		a.PDUSessionReactivationResult.Buffer = p.ReactivationResult.octets()
	}
	if len(p.ReactivationErrors) > 0 {
		v := reactivationErrorOctets(p.ReactivationErrors)
		a.PDUSessionReactivationResultErrorCause = nasType.NewPDUSessionReactivationResultErrorCause(nasMessage.ServiceAcceptPDUSessionReactivationResultErrorCauseType)
		a.PDUSessionReactivationResultErrorCause.SetLen(uint16(len(v)))
		a.PDUSessionReactivationResultErrorCause.Buffer = v
	}
	m.ServiceAccept = a
	return encode(m)
}

// reactivationErrorOctets lists (PSI, cause) pairs in PSI order
// (TS 24.501 figure 9.11.3.43.1).
func reactivationErrorOctets(errs map[uint8]uint8) []byte {
	ids := make([]int, 0, len(errs))
	for id := range errs {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	v := make([]byte, 0, 2*len(ids))
	for _, id := range ids {
		v = append(v, byte(id), errs[uint8(id)])
	}
	return v
}

// ParseServiceAccept reads a decoded Service Accept (the UE's side).
func ParseServiceAccept(a *nasMessage.ServiceAccept) (ServiceAccept, error) {
	var out ServiceAccept
	var err error
	if a.PDUSessionStatus != nil {
		if out.PDUSessionStatus, err = psiSetIE("PDU session status", a.PDUSessionStatus.Buffer); err != nil {
			return out, err
		}
	}
	if a.PDUSessionReactivationResult != nil {
		if out.ReactivationResult, err = psiSetIE("PDU session reactivation result", a.PDUSessionReactivationResult.Buffer); err != nil {
			return out, err
		}
	}
	if e := a.PDUSessionReactivationResultErrorCause; e != nil {
		b := e.Buffer
		if len(b) < 2 || len(b)%2 != 0 {
			return out, fail(CauseInvalidMandatoryInfo, "PDU session reactivation result error cause of %d octets", len(b))
		}
		out.ReactivationErrors = make(map[uint8]uint8, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			out.ReactivationErrors[b[i]] = b[i+1]
		}
	}
	return out, nil
}

// ServiceReject is what Service Reject carries (TS 24.501 8.2.18).
type ServiceReject struct {
	Cause            uint8
	PDUSessionStatus *PSISet
	T3346            time.Duration // back-off of #22 congestion (5.3.9); 0 leaves it out
}

// BuildServiceRejectWith builds Service Reject (TS 24.501 8.2.18) with its
// optional IEs.
func BuildServiceRejectWith(p ServiceReject) ([]byte, error) {
	m := newGmm(nas.MsgTypeServiceReject)
	r := nasMessage.NewServiceReject(0)
	header(&r.ExtendedProtocolDiscriminator, &r.SpareHalfOctetAndSecurityHeaderType)
	r.ServiceRejectMessageIdentity.SetMessageType(nas.MsgTypeServiceReject)
	r.Cause5GMM.SetCauseValue(p.Cause)
	if p.PDUSessionStatus != nil {
		r.PDUSessionStatus = nasType.NewPDUSessionStatus(nasMessage.ServiceRejectPDUSessionStatusType)
		r.PDUSessionStatus.SetLen(2)
		r.PDUSessionStatus.Buffer = p.PDUSessionStatus.octets()
	}
	if p.T3346 > 0 {
		r.T3346Value = nasType.NewT3346Value(nasMessage.ServiceRejectT3346ValueType)
		r.T3346Value.SetLen(1)
		r.T3346Value.SetGPRSTimer2Value(GPRSTimer2(p.T3346))
	}
	m.ServiceReject = r
	return encode(m)
}

// ParseServiceReject reads a decoded Service Reject (the UE's side).
func ParseServiceReject(r *nasMessage.ServiceReject) (ServiceReject, error) {
	out := ServiceReject{Cause: r.Cause5GMM.GetCauseValue()}
	if r.PDUSessionStatus != nil {
		s, err := psiSetIE("PDU session status", r.PDUSessionStatus.Buffer)
		if err != nil {
			return out, err
		}
		out.PDUSessionStatus = s
	}
	if r.T3346Value != nil {
		out.T3346 = GPRSTimer2Duration(r.T3346Value.GetGPRSTimer2Value())
	}
	return out, nil
}

// GPRSTimer2Duration decodes GPRS timer 2 (TS 24.008 10.5.7.4): units of
// 2 s, 1 min or 6 min; "deactivated" and undefined units read as 0.
func GPRSTimer2Duration(v uint8) time.Duration {
	n := time.Duration(v & 0x1F)
	switch v >> 5 {
	case 0b000:
		return n * 2 * time.Second
	case 0b001:
		return n * time.Minute
	case 0b010:
		return n * 6 * time.Minute
	}
	return 0
}
