package pfcpx

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/tlv"
)

// Message is one PFCP message: its header and a pointer to its body, one
// of this package's session message structs or the library's node
// message structs (bodies below).
type Message = pfcp.Message

// headerLen is the shortest PFCP header (TS 29.244 7.2.2.1: no SEID).
const headerLen = 8

// bodies makes an empty body of each message type this package reads.
var bodies = map[pfcp.MessageType]func() any{
	pfcp.PFCP_HEARTBEAT_REQUEST:              func() any { return &pfcp.HeartbeatRequest{} },
	pfcp.PFCP_HEARTBEAT_RESPONSE:             func() any { return &pfcp.HeartbeatResponse{} },
	pfcp.PFCP_ASSOCIATION_SETUP_REQUEST:      func() any { return &pfcp.PFCPAssociationSetupRequest{} },
	pfcp.PFCP_ASSOCIATION_SETUP_RESPONSE:     func() any { return &pfcp.PFCPAssociationSetupResponse{} },
	pfcp.PFCP_ASSOCIATION_RELEASE_REQUEST:    func() any { return &pfcp.PFCPAssociationReleaseRequest{} },
	pfcp.PFCP_ASSOCIATION_RELEASE_RESPONSE:   func() any { return &pfcp.PFCPAssociationReleaseResponse{} },
	pfcp.PFCP_VERSION_NOT_SUPPORTED_RESPONSE: func() any { return &struct{}{} }, // header only (TS 29.244 7.4.4.7)
	pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST:  func() any { return &SessionEstablishmentRequest{} },
	pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE: func() any { return &SessionEstablishmentResponse{} },
	pfcp.PFCP_SESSION_MODIFICATION_REQUEST:   func() any { return &SessionModificationRequest{} },
	pfcp.PFCP_SESSION_MODIFICATION_RESPONSE:  func() any { return &SessionModificationResponse{} },
	pfcp.PFCP_SESSION_DELETION_REQUEST:       func() any { return &SessionDeletionRequest{} },
	pfcp.PFCP_SESSION_DELETION_RESPONSE:      func() any { return &SessionDeletionResponse{} },
	pfcp.PFCP_SESSION_REPORT_REQUEST:         func() any { return &SessionReportRequest{} },
	pfcp.PFCP_SESSION_REPORT_RESPONSE:        func() any { return &SessionReportResponse{} },
}

// IsSessionMessage reports whether t is a session related message, whose
// header carries a SEID (TS 29.244 7.2.2.1, 7.3: types 50 and up).
func IsSessionMessage(t pfcp.MessageType) bool { return t >= 50 }

// IsRequest reports whether t is a request (TS 29.244 7.3: odd types
// below 50, even types from 50).
func IsRequest(t pfcp.MessageType) bool {
	m := pfcp.Message{Header: pfcp.Header{MessageType: t}}
	return m.IsRequest()
}

// Encode writes m; it sets the header's version, S flag and length.
func Encode(m *Message) ([]byte, error) {
	m.Header.Version = pfcp.PfcpVersion
	m.Header.S = 0
	if IsSessionMessage(m.Header.MessageType) {
		m.Header.S = 1
	}
	if m.Header.SequenceNumber >= 1<<24 {
		return nil, fmt.Errorf("pfcp: sequence number %d does not fit 24 bits", m.Header.SequenceNumber)
	}
	return m.Marshal()
}

// DecodeError is a message that could not be read. When HeaderOK, Header
// says which message it was, so a request can be answered with Cause.
type DecodeError struct {
	Header   pfcp.Header
	HeaderOK bool
	Err      *Error
}

func (e *DecodeError) Error() string { return e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reads one PFCP message. An unknown message type (TS 29.244
// 7.2.2.4.1: to be ignored) is a DecodeError with cause 0.
func Decode(b []byte) (*Message, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, err
	}
	newBody, ok := bodies[h.MessageType]
	if !ok {
		return nil, &DecodeError{Header: h, HeaderOK: true, Err: &Error{Detail: fmt.Sprintf("message type %d not handled", h.MessageType)}}
	}
	body := newBody()
	if e := decodeBody(b[h.Len():], body); e != nil {
		return nil, &DecodeError{Header: h, HeaderOK: true, Err: e}
	}
	return &Message{Header: h, Body: body}, nil
}

// decodeHeader checks the header the library reads leniently: version,
// the S flag against the message type (the library places the body by
// type alone), and the length (TS 29.244 7.2.2).
func decodeHeader(b []byte) (pfcp.Header, error) {
	var h pfcp.Header
	if len(b) < headerLen {
		return h, &DecodeError{Err: &Error{Cause: CauseInvalidLength, Detail: fmt.Sprintf("%d octets, shorter than a PFCP header", len(b))}}
	}
	session := IsSessionMessage(pfcp.MessageType(b[1]))
	if session && len(b) < 16 {
		return h, &DecodeError{Err: &Error{Cause: CauseInvalidLength, Detail: fmt.Sprintf("session message of %d octets, shorter than its header", len(b))}}
	}
	if err := h.UnmarshalBinary(b); err != nil {
		return h, &DecodeError{Err: &Error{Cause: CauseInvalidLength, Detail: "header: " + err.Error()}}
	}
	if h.Version != pfcp.PfcpVersion {
		return h, &DecodeError{Header: h, HeaderOK: true, Err: &Error{Detail: fmt.Sprintf("PFCP version %d", h.Version)}}
	}
	if (h.S == 1) != session {
		return h, &DecodeError{Header: h, Err: &Error{Cause: CauseMandatoryIEIncorrect, Detail: fmt.Sprintf("S flag %d on message type %d", h.S, h.MessageType)}}
	}
	if int(binary.BigEndian.Uint16(b[2:4])) != len(b)-4 {
		return h, &DecodeError{Header: h, HeaderOK: true, Err: &Error{Cause: CauseInvalidLength,
			Detail: fmt.Sprintf("message length %d, datagram carries %d", h.MessageLength, len(b)-4)}}
	}
	return h, nil
}

// decodeBody reads the IEs of b into body. On failure it names the
// top-level IE at fault: the request's Offending IE.
func decodeBody(b []byte, body any) *Error {
	if err := safeUnmarshal(b, body); err == nil {
		return nil
	}
	for rest := b; len(rest) > 0; {
		if len(rest) < 4 || 4+int(binary.BigEndian.Uint16(rest[2:4])) > len(rest) {
			return &Error{Cause: CauseInvalidLength, Detail: "an IE runs past the end of the message"}
		}
		ie := rest[:4+int(binary.BigEndian.Uint16(rest[2:4]))]
		rest = rest[len(ie):]
		one := reflect.New(reflect.TypeOf(body).Elem()).Interface()
		if err := safeUnmarshal(ie, one); err != nil {
			t := binary.BigEndian.Uint16(ie)
			return &Error{Cause: CauseMandatoryIEIncorrect, OffendingIE: t, Detail: fmt.Sprintf("%s: %v", IEName(t), err)}
		}
	}
	return &Error{Cause: CauseMandatoryIEIncorrect, Detail: "IEs do not decode together"}
}

// safeUnmarshal is tlv.Unmarshal that returns the library's panics as
// errors: free5gc/pfcp v1.1.2's decoders index past short input in places
// (a Node ID of type FQDN with no name slices fqdn[:len-1] of ""), and a
// peer's bytes must never take UPF-C down.
func safeUnmarshal(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed IE (%v)", r)
		}
	}()
	return tlv.Unmarshal(b, v)
}
