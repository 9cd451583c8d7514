package nasx

import (
	"errors"
	"fmt"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
)

// 5GMM causes the AMF answers malformed input with (TS 24.501 9.11.3.2, annex A).
const (
	CauseIllegalUE                     uint8 = 3
	CauseIllegalME                     uint8 = 6
	Cause5GSServicesNotAllowed         uint8 = 7
	CauseUEIdentityCannotBeDerived     uint8 = 9
	CauseImplicitlyDeregistered        uint8 = 10
	CausePLMNNotAllowed                uint8 = 11
	CauseTANotAllowed                  uint8 = 12
	CauseMACFailure                    uint8 = 20
	CauseSynchFailure                  uint8 = 21
	CauseCongestion                    uint8 = 22
	CauseUESecurityCapMismatch         uint8 = 23
	CauseSecurityModeRejected          uint8 = 24
	CauseNon5GAuthUnacceptable         uint8 = 26
	CauseNoNetworkSlicesAvailable      uint8 = 62
	CausePayloadNotForwarded           uint8 = 90
	CauseSemanticallyIncorrect         uint8 = 95
	CauseInvalidMandatoryInfo          uint8 = 96
	CauseMessageTypeNonExistent        uint8 = 97
	CauseMessageTypeNotCompatible      uint8 = 98
	CauseIENonExistent                 uint8 = 99
	CauseConditionalIEError            uint8 = 100
	CauseMessageNotCompatibleWithState uint8 = 101
	CauseProtocolErrorUnspecified      uint8 = 111
)

// Error is a NAS decoding failure with the 5GMM cause to report it with.
type Error struct {
	Cause uint8
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("NAS (5GMM cause #%d): %v", e.Cause, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// CauseOf gives the 5GMM cause of a decode error (#111 when unclassified).
func CauseOf(err error) uint8 {
	var e *Error
	if errors.As(err, &e) {
		return e.Cause
	}
	return CauseProtocolErrorUnspecified
}

func fail(cause uint8, format string, a ...any) error {
	return &Error{Cause: cause, Err: fmt.Errorf(format, a...)}
}

// Header is the first octets of any 5GS NAS message (TS 24.501 9.1.1, 9.3).
type Header struct {
	EPD                uint8
	SecurityHeaderType uint8
	MAC                uint32 // protected messages only
	SQN                uint8  // protected messages only
	MessageType        uint8  // plain messages only
}

// Protected says whether the message carries a security header with MAC.
func (h Header) Protected() bool { return h.SecurityHeaderType != nas.SecurityHeaderTypePlainNas }

// PeekHeader reads the header without decoding the body.
func PeekHeader(b []byte) (Header, error) {
	if len(b) < 3 {
		return Header{}, fail(CauseInvalidMandatoryInfo, "message of %d octets", len(b))
	}
	h := Header{EPD: b[0]}
	switch h.EPD {
	case nasMessage.Epd5GSMobilityManagementMessage:
		h.SecurityHeaderType = b[1] & 0x0F
	case nasMessage.Epd5GSSessionManagementMessage:
		// A 5GSM message has no security header: octet 2 is the PDU session
		// identity (TS 24.501 9.4), so it never reads as protected. (It did,
		// and the AMF cut a short one at the 7-octet security header.)
		h.MessageType = 0 // 5GSM travels inside UL NAS Transport here
		return h, nil
	default:
		return h, fail(CauseProtocolErrorUnspecified, "extended protocol discriminator %#x", h.EPD)
	}
	switch {
	case h.SecurityHeaderType == nas.SecurityHeaderTypePlainNas:
		h.MessageType = b[2]
	case h.SecurityHeaderType <= nas.SecurityHeaderTypeIntegrityProtectedAndCipheredWithNew5gNasSecurityContext:
		if len(b) < 7+3 { // security header (7) + at least a plain header
			return h, fail(CauseInvalidMandatoryInfo, "protected message of %d octets", len(b))
		}
		h.MAC = uint32(b[2])<<24 | uint32(b[3])<<16 | uint32(b[4])<<8 | uint32(b[5])
		h.SQN = b[6]
	default:
		return h, fail(CauseProtocolErrorUnspecified, "security header type %d", h.SecurityHeaderType)
	}
	return h, nil
}

// Decode decodes a plain 5GMM message. It never panics: free5gc's decoder
// can panic on crafted input, so this boundary recovers and reports the
// message as invalid (TS 24.501 7: the AMF answers, it does not crash).
func Decode(b []byte) (msg *nas.Message, err error) {
	h, err := PeekHeader(b)
	if err != nil {
		return nil, err
	}
	if h.Protected() {
		return nil, fail(CauseProtocolErrorUnspecified, "protected message: verify it before decoding")
	}
	if h.EPD != nasMessage.Epd5GSMobilityManagementMessage {
		return nil, fail(CauseMessageTypeNonExistent, "not a 5GMM message (EPD %#x)", h.EPD)
	}
	if !knownGMMType(h.MessageType) {
		return nil, fail(CauseMessageTypeNonExistent, "5GMM message type %d", h.MessageType)
	}
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fail(CauseInvalidMandatoryInfo, "5GMM message type %d: decoder panic: %v", h.MessageType, r)
		}
	}()
	msg = nas.NewMessage()
	buf := append([]byte(nil), b...) // the decoder must not alias the caller's buffer
	if err := msg.PlainNasDecode(&buf); err != nil {
		return nil, fail(CauseInvalidMandatoryInfo, "5GMM message type %d: %v", h.MessageType, err)
	}
	return msg, nil
}

func knownGMMType(t uint8) bool {
	switch t {
	case nas.MsgTypeRegistrationRequest, nas.MsgTypeRegistrationAccept, nas.MsgTypeRegistrationComplete,
		nas.MsgTypeRegistrationReject, nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration,
		nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration,
		nas.MsgTypeDeregistrationRequestUETerminatedDeregistration,
		nas.MsgTypeDeregistrationAcceptUETerminatedDeregistration, nas.MsgTypeServiceRequest,
		nas.MsgTypeServiceReject, nas.MsgTypeServiceAccept, nas.MsgTypeConfigurationUpdateCommand,
		nas.MsgTypeConfigurationUpdateComplete, nas.MsgTypeAuthenticationRequest,
		nas.MsgTypeAuthenticationResponse, nas.MsgTypeAuthenticationReject,
		nas.MsgTypeAuthenticationFailure, nas.MsgTypeAuthenticationResult, nas.MsgTypeIdentityRequest,
		nas.MsgTypeIdentityResponse, nas.MsgTypeSecurityModeCommand, nas.MsgTypeSecurityModeComplete,
		nas.MsgTypeSecurityModeReject, nas.MsgTypeStatus5GMM, nas.MsgTypeNotification,
		nas.MsgTypeNotificationResponse, nas.MsgTypeULNASTransport, nas.MsgTypeDLNASTransport:
		return true
	}
	return false
}

// MessageName names a 5GMM message type for logs and metrics.
func MessageName(t uint8) string {
	names := map[uint8]string{
		nas.MsgTypeRegistrationRequest: "RegistrationRequest", nas.MsgTypeRegistrationAccept: "RegistrationAccept",
		nas.MsgTypeRegistrationComplete: "RegistrationComplete", nas.MsgTypeRegistrationReject: "RegistrationReject",
		nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration: "DeregistrationRequest(UE originating)",
		nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration:  "DeregistrationAccept(UE originating)",
		nas.MsgTypeServiceRequest:                                   "ServiceRequest", nas.MsgTypeServiceReject: "ServiceReject",
		nas.MsgTypeConfigurationUpdateCommand: "ConfigurationUpdateCommand", nas.MsgTypeConfigurationUpdateComplete: "ConfigurationUpdateComplete",
		nas.MsgTypeAuthenticationRequest: "AuthenticationRequest", nas.MsgTypeAuthenticationResponse: "AuthenticationResponse",
		nas.MsgTypeAuthenticationReject: "AuthenticationReject", nas.MsgTypeAuthenticationFailure: "AuthenticationFailure",
		nas.MsgTypeAuthenticationResult: "AuthenticationResult", nas.MsgTypeIdentityRequest: "IdentityRequest",
		nas.MsgTypeIdentityResponse: "IdentityResponse", nas.MsgTypeSecurityModeCommand: "SecurityModeCommand",
		nas.MsgTypeSecurityModeComplete: "SecurityModeComplete", nas.MsgTypeSecurityModeReject: "SecurityModeReject",
		nas.MsgTypeStatus5GMM: "5GMMStatus", nas.MsgTypeULNASTransport: "ULNASTransport", nas.MsgTypeDLNASTransport: "DLNASTransport",
	}
	if n, ok := names[t]; ok {
		return n
	}
	return fmt.Sprintf("5GMM(%d)", t)
}
