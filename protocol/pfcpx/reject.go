package pfcpx

import (
	"net/netip"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"
)

// RejectionOf is the response rejecting request h with e (TS 29.244
// 7.2.2.4.2), from node nodeID: Cause, Offending IE and Failed Rule ID.
// The SEID is seid, the CP function's when known, else 0. Nil for a
// request that has no response carrying a cause (heartbeat).
func RejectionOf(h pfcp.Header, e *Error, nodeID netip.Addr, seid uint64) *Message {
	cause := &pfcpType.Cause{CauseValue: e.Cause}
	var off *pfcpType.OffendingIE
	if e.OffendingIE != 0 {
		off = &pfcpType.OffendingIE{TypeOfOffendingIe: e.OffendingIE}
	}
	hdr := pfcp.Header{MessageType: h.MessageType + 1, SequenceNumber: h.SequenceNumber, SEID: seid}
	var body any
	switch h.MessageType {
	case pfcp.PFCP_ASSOCIATION_SETUP_REQUEST:
		body = &pfcp.PFCPAssociationSetupResponse{NodeID: NodeIDOf(nodeID), Cause: cause}
	case pfcp.PFCP_ASSOCIATION_RELEASE_REQUEST:
		body = &pfcp.PFCPAssociationReleaseResponse{NodeID: NodeIDOf(nodeID), Cause: cause}
	case pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST:
		body = &SessionEstablishmentResponse{NodeID: NodeIDOf(nodeID), Cause: cause, OffendingIE: off, FailedRuleID: FailedRuleIE(e.Rule)}
	case pfcp.PFCP_SESSION_MODIFICATION_REQUEST:
		body = &SessionModificationResponse{Cause: cause, OffendingIE: off, FailedRuleID: FailedRuleIE(e.Rule)}
	case pfcp.PFCP_SESSION_DELETION_REQUEST:
		body = &SessionDeletionResponse{Cause: cause, OffendingIE: off}
	case pfcp.PFCP_SESSION_REPORT_REQUEST:
		body = &SessionReportResponse{Cause: cause, OffendingIE: off}
	default:
		return nil
	}
	return &Message{Header: hdr, Body: body}
}

// CauseOf is the Cause a message carries, 0 when none.
func CauseOf(m *Message) uint8 {
	var c *pfcpType.Cause
	switch b := m.Body.(type) {
	case *pfcp.PFCPAssociationSetupResponse:
		c = b.Cause
	case *pfcp.PFCPAssociationReleaseResponse:
		c = b.Cause
	case *SessionEstablishmentResponse:
		c = b.Cause
	case *SessionModificationResponse:
		c = b.Cause
	case *SessionDeletionResponse:
		c = b.Cause
	case *SessionReportResponse:
		c = b.Cause
	}
	if c == nil {
		return 0
	}
	return c.CauseValue
}

// TypeName is a message type as metrics and logs name it (TS 29.244
// 7.3, Table 7.3-1).
func TypeName(t pfcp.MessageType) string { return typeName(t) }

func typeName(t pfcp.MessageType) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "unknown"
}

var typeNames = map[pfcp.MessageType]string{
	pfcp.PFCP_HEARTBEAT_REQUEST:              "heartbeat_request",
	pfcp.PFCP_HEARTBEAT_RESPONSE:             "heartbeat_response",
	pfcp.PFCP_ASSOCIATION_SETUP_REQUEST:      "association_setup_request",
	pfcp.PFCP_ASSOCIATION_SETUP_RESPONSE:     "association_setup_response",
	pfcp.PFCP_ASSOCIATION_RELEASE_REQUEST:    "association_release_request",
	pfcp.PFCP_ASSOCIATION_RELEASE_RESPONSE:   "association_release_response",
	pfcp.PFCP_VERSION_NOT_SUPPORTED_RESPONSE: "version_not_supported_response",
	pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST:  "session_establishment_request",
	pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE: "session_establishment_response",
	pfcp.PFCP_SESSION_MODIFICATION_REQUEST:   "session_modification_request",
	pfcp.PFCP_SESSION_MODIFICATION_RESPONSE:  "session_modification_response",
	pfcp.PFCP_SESSION_DELETION_REQUEST:       "session_deletion_request",
	pfcp.PFCP_SESSION_DELETION_RESPONSE:      "session_deletion_response",
	pfcp.PFCP_SESSION_REPORT_REQUEST:         "session_report_request",
	pfcp.PFCP_SESSION_REPORT_RESPONSE:        "session_report_response",
}
