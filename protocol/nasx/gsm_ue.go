package nasx

import (
	"fmt"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
)

// The UE's side of 5GSM (TS 24.501 6.4, 8.3): the messages a UE sends are
// built here, the ones the network sends are read into plain structs. The
// SMF's side lives in its own file; both encode through free5gc/nas.

// GSMEstablishmentRequest is what a UE puts in PDU Session Establishment
// Request (TS 24.501 8.3.1).
type GSMEstablishmentRequest struct {
	SessionID uint8
	PTI       uint8
	Type      uint8 // PDU session type (9.11.4.11), e.g. nasMessage.PDUSessionTypeIPv4
	SSCMode   uint8 // 1-3 (9.11.4.16); 0: IE left out
}

// BuildGSMEstablishmentRequest builds PDU Session Establishment Request
// (TS 24.501 8.3.1): integrity protection maximum data rate "full data
// rate" both ways (9.11.4.7), the PDU session type and the SSC mode.
func BuildGSMEstablishmentRequest(p GSMEstablishmentRequest) ([]byte, error) {
	m := ueGsm(nas.MsgTypePDUSessionEstablishmentRequest)
	r := nasMessage.NewPDUSessionEstablishmentRequest(0)
	ueGsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, p.SessionID, p.PTI)
	r.PDUSESSIONESTABLISHMENTREQUESTMessageIdentity.SetMessageType(nas.MsgTypePDUSessionEstablishmentRequest)
	r.IntegrityProtectionMaximumDataRate.SetMaximumDataRatePerUEForUserPlaneIntegrityProtectionForUpLink(0xFF)
	r.IntegrityProtectionMaximumDataRate.SetMaximumDataRatePerUEForUserPlaneIntegrityProtectionForDownLink(0xFF)
	if p.Type != 0 {
		r.PDUSessionType = nasType.NewPDUSessionType(nasMessage.PDUSessionEstablishmentRequestPDUSessionTypeType)
		r.PDUSessionType.SetPDUSessionTypeValue(p.Type)
	}
	if p.SSCMode != 0 {
		r.SSCMode = nasType.NewSSCMode(nasMessage.PDUSessionEstablishmentRequestSSCModeType)
		r.SSCMode.SetSSCMode(p.SSCMode)
	}
	m.PDUSessionEstablishmentRequest = r
	return ueGsmEncode(m)
}

// BuildGSMReleaseRequest builds PDU Session Release Request (TS 24.501
// 8.3.12), UE-requested release (6.4.3.2), with 5GSM cause #36 regular
// deactivation when cause is 0.
func BuildGSMReleaseRequest(sessionID, pti, cause uint8) ([]byte, error) {
	if cause == 0 {
		cause = nasMessage.Cause5GSMRegularDeactivation
	}
	m := ueGsm(nas.MsgTypePDUSessionReleaseRequest)
	r := nasMessage.NewPDUSessionReleaseRequest(0)
	ueGsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, sessionID, pti)
	r.PDUSESSIONRELEASEREQUESTMessageIdentity.SetMessageType(nas.MsgTypePDUSessionReleaseRequest)
	r.Cause5GSM = nasType.NewCause5GSM(nasMessage.PDUSessionReleaseRequestCause5GSMType)
	r.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionReleaseRequest = r
	return ueGsmEncode(m)
}

// BuildGSMReleaseComplete builds PDU Session Release Complete (TS 24.501
// 8.3.15) with the PTI of the command it answers (6.4.3.3).
func BuildGSMReleaseComplete(sessionID, pti uint8) ([]byte, error) {
	m := ueGsm(nas.MsgTypePDUSessionReleaseComplete)
	c := nasMessage.NewPDUSessionReleaseComplete(0)
	ueGsmHeader(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, sessionID, pti)
	c.PDUSESSIONRELEASECOMPLETEMessageIdentity.SetMessageType(nas.MsgTypePDUSessionReleaseComplete)
	m.PDUSessionReleaseComplete = c
	return ueGsmEncode(m)
}

// BuildGSMModificationComplete builds PDU Session Modification Complete
// (TS 24.501 8.3.10) with the PTI of the command it answers (6.4.2.3).
func BuildGSMModificationComplete(sessionID, pti uint8) ([]byte, error) {
	m := ueGsm(nas.MsgTypePDUSessionModificationComplete)
	c := nasMessage.NewPDUSessionModificationComplete(0)
	ueGsmHeader(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, sessionID, pti)
	c.PDUSESSIONMODIFICATIONCOMPLETEMessageIdentity.SetMessageType(nas.MsgTypePDUSessionModificationComplete)
	m.PDUSessionModificationComplete = c
	return ueGsmEncode(m)
}

// BuildGSMModificationCommandReject builds PDU Session Modification Command
// Reject (TS 24.501 8.3.11): the UE cannot apply the command, e.g. #84
// syntactical error in the QoS operation (6.4.2.4).
func BuildGSMModificationCommandReject(sessionID, pti, cause uint8) ([]byte, error) {
	m := ueGsm(nas.MsgTypePDUSessionModificationCommandReject)
	r := nasMessage.NewPDUSessionModificationCommandReject(0)
	ueGsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, sessionID, pti)
	r.PDUSESSIONMODIFICATIONCOMMANDREJECTMessageIdentity.SetMessageType(nas.MsgTypePDUSessionModificationCommandReject)
	r.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionModificationCommandReject = r
	return ueGsmEncode(m)
}

func ueGsm(msgType uint8) *nas.Message {
	m := nas.NewMessage()
	m.GsmMessage = nas.NewGsmMessage()
	m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	m.GsmHeader.SetMessageType(msgType)
	return m
}

func ueGsmHeader(epd *nasType.ExtendedProtocolDiscriminator, id *nasType.PDUSessionID, pti *nasType.PTI, sessionID, ptiValue uint8) {
	epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	id.SetPDUSessionID(sessionID)
	pti.SetPTI(ptiValue)
}

func ueGsmEncode(m *nas.Message) ([]byte, error) {
	b, err := m.PlainNasEncode()
	if err != nil {
		return nil, fmt.Errorf("encode 5GSM message type %d: %w", m.GsmHeader.GetMessageType(), err)
	}
	return b, nil
}
