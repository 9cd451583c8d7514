package nasx

import (
	"fmt"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"
)

// The NAS transport messages (TS 24.501 5.4.5): UL NAS Transport of the UE
// side, DL NAS Transport of the AMF side, and the 5GSM message a UE carries
// in them first, PDU Session Establishment Request.

// Payload container types of TS 24.501 9.11.3.40.
const (
	PayloadN1SMInformation uint8 = nasMessage.PayloadContainerTypeN1SMInfo
	PayloadSMS             uint8 = nasMessage.PayloadContainerTypeSMS
)

// Request types of TS 24.501 9.11.3.47.
const (
	RequestInitial         uint8 = nasMessage.ULNASTransportRequestTypeInitialRequest
	RequestExistingSession uint8 = nasMessage.ULNASTransportRequestTypeExistingPduSession
)

// ULNASTransport is what a UE puts in UL NAS Transport (TS 24.501 8.2.10).
type ULNASTransport struct {
	PayloadType  uint8
	Payload      []byte
	PDUSessionID uint8 // 0: IE left out (the UE includes it with N1 SM information, 8.2.10.2)
	RequestType  uint8 // 0: IE left out
	SNSSAI       *models.Snssai
	DNN          string
}

// BuildULNASTransport builds UL NAS Transport (TS 24.501 8.2.10).
func BuildULNASTransport(p ULNASTransport) ([]byte, error) {
	m := newGmm(nas.MsgTypeULNASTransport)
	u := nasMessage.NewULNASTransport(0)
	ueHeader(&u.ExtendedProtocolDiscriminator, &u.SpareHalfOctetAndSecurityHeaderType, &u.ULNASTRANSPORTMessageIdentity, nas.MsgTypeULNASTransport)
	if err := setPayload(&u.SpareHalfOctetAndPayloadContainerType, &u.PayloadContainer, p.PayloadType, p.Payload); err != nil {
		return nil, err
	}
	if p.PDUSessionID != 0 {
		u.PduSessionID2Value = nasType.NewPduSessionID2Value(nasMessage.ULNASTransportPduSessionID2ValueType)
		u.PduSessionID2Value.SetPduSessionID2Value(p.PDUSessionID)
	}
	if p.RequestType != 0 {
		u.RequestType = nasType.NewRequestType(nasMessage.ULNASTransportRequestTypeType)
		u.RequestType.SetRequestTypeValue(p.RequestType)
	}
	if p.SNSSAI != nil {
		s, err := snssaiIE(*p.SNSSAI)
		if err != nil {
			return nil, err
		}
		u.SNSSAI = s
	}
	if p.DNN != "" {
		u.DNN = nasType.NewDNN(nasMessage.ULNASTransportDNNType)
		u.DNN.SetDNN(p.DNN)
	}
	m.ULNASTransport = u
	return encode(m)
}

// snssaiIE is the S-NSSAI IE of UL NAS Transport (TS 24.501 9.11.2.8): the
// value of one entry of an NSSAI IE, whose encoding is the domain package's.
func snssaiIE(s models.Snssai) (*nasType.SNSSAI, error) {
	v, err := nssaiOctets([]models.Snssai{s})
	if err != nil {
		return nil, err
	}
	ie := nasType.NewSNSSAI(nasMessage.ULNASTransportSNSSAIType)
	ie.SetLen(v[0])
	copy(ie.Octet[:], v[1:])
	return ie, nil
}

// DLNASTransport is what the AMF puts in DL NAS Transport (TS 24.501 8.2.11).
type DLNASTransport struct {
	PayloadType  uint8
	Payload      []byte
	PDUSessionID uint8 // 0: IE left out
	Cause        uint8 // 5GMM cause; 0: IE left out (included when the payload was not forwarded)
}

// BuildDLNASTransport builds DL NAS Transport (TS 24.501 8.2.11).
func BuildDLNASTransport(p DLNASTransport) ([]byte, error) {
	m := newGmm(nas.MsgTypeDLNASTransport)
	d := nasMessage.NewDLNASTransport(0)
	header(&d.ExtendedProtocolDiscriminator, &d.SpareHalfOctetAndSecurityHeaderType)
	d.DLNASTRANSPORTMessageIdentity.SetMessageType(nas.MsgTypeDLNASTransport)
	if err := setPayload(&d.SpareHalfOctetAndPayloadContainerType, &d.PayloadContainer, p.PayloadType, p.Payload); err != nil {
		return nil, err
	}
	if p.PDUSessionID != 0 {
		d.PduSessionID2Value = nasType.NewPduSessionID2Value(nasMessage.DLNASTransportPduSessionID2ValueType)
		d.PduSessionID2Value.SetPduSessionID2Value(p.PDUSessionID)
	}
	if p.Cause != 0 {
		d.Cause5GMM = nasType.NewCause5GMM(nasMessage.DLNASTransportCause5GMMType)
		d.Cause5GMM.SetCauseValue(p.Cause)
	}
	m.DLNASTransport = d
	return encode(m)
}

// setPayload fills the two mandatory IEs of both transport messages: the
// payload container type (9.11.3.40) and the payload container (9.11.3.39,
// LV-E with at least one octet).
func setPayload(t *nasType.SpareHalfOctetAndPayloadContainerType, c *nasType.PayloadContainer, typ uint8, payload []byte) error {
	if len(payload) == 0 || len(payload) > 0xFFFF {
		return fmt.Errorf("payload container of %d octets: want 1-65535", len(payload))
	}
	t.SetPayloadContainerType(typ)
	c.SetLen(uint16(len(payload)))
	c.SetPayloadContainerContents(payload)
	return nil
}

// BuildPDUSessionEstablishmentRequest builds the 5GSM PDU Session
// Establishment Request (TS 24.501 8.3.1) a UE sends first in UL NAS
// Transport: IPv4, no integrity protection limit ("full data rate", 9.11.4.7).
func BuildPDUSessionEstablishmentRequest(sessionID, pti uint8) ([]byte, error) {
	m := nas.NewMessage()
	m.GsmMessage = nas.NewGsmMessage()
	m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	m.GsmHeader.SetMessageType(nas.MsgTypePDUSessionEstablishmentRequest)
	r := nasMessage.NewPDUSessionEstablishmentRequest(0)
	r.ExtendedProtocolDiscriminator.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	r.PDUSessionID.SetPDUSessionID(sessionID)
	r.PTI.SetPTI(pti)
	r.PDUSESSIONESTABLISHMENTREQUESTMessageIdentity.SetMessageType(nas.MsgTypePDUSessionEstablishmentRequest)
	r.IntegrityProtectionMaximumDataRate.SetMaximumDataRatePerUEForUserPlaneIntegrityProtectionForUpLink(0xFF)
	r.IntegrityProtectionMaximumDataRate.SetMaximumDataRatePerUEForUserPlaneIntegrityProtectionForDownLink(0xFF)
	r.PDUSessionType = nasType.NewPDUSessionType(nasMessage.PDUSessionEstablishmentRequestPDUSessionTypeType)
	r.PDUSessionType.SetPDUSessionTypeValue(nasMessage.PDUSessionTypeIPv4)
	m.PDUSessionEstablishmentRequest = r
	b, err := m.PlainNasEncode()
	if err != nil {
		return nil, fmt.Errorf("encode PDU Session Establishment Request: %w", err)
	}
	return b, nil
}
