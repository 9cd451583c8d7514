package pfcpx

import (
	"errors"
	"fmt"

	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// PFCP causes (TS 29.244 8.2.1, Table 8.2.1-1). Note the numbers: 73 is
// Rule creation/modification Failure, 75 No resources available.
const (
	CauseAccepted               = pfcpType.CauseRequestAccepted
	CauseRejected               = pfcpType.CauseRequestRejected
	CauseSessionNotFound        = pfcpType.CauseSessionContextNotFound
	CauseMandatoryIEMissing     = pfcpType.CauseMandatoryIeMissing
	CauseConditionalIEMissing   = pfcpType.CauseConditionalIeMissing
	CauseInvalidLength          = pfcpType.CauseInvalidLength
	CauseMandatoryIEIncorrect   = pfcpType.CauseMandatoryIeIncorrect
	CauseInvalidFTEIDAllocation = pfcpType.CauseInvalidFTeidAllocationOption
	CauseNoAssociation          = pfcpType.CauseNoEstablishedPfcpAssociation
	CauseRuleFailure            = pfcpType.CauseRuleCreationModificationFailure
	CauseNoResources            = pfcpType.CauseNoResourcesAvailable
	CauseServiceNotSupported    = pfcpType.CauseServiceNotSupported
	CauseSystemFailure          = pfcpType.CauseSystemFailure
)

// Error is a PFCP request's rejection with its cause and, when an IE is at
// fault, its type (Offending IE, TS 29.244 8.2.22) or the failed rule
// (Failed Rule ID, 8.2.80).
type Error struct {
	Cause       uint8
	OffendingIE uint16 // 0: none
	Rule        *FailedRule
	Detail      string
}

// FailedRule names the rule a Rule creation/modification failure is about.
type FailedRule struct {
	Type uint8 // pfcpType.RuleIdType*: 0 PDR, 1 FAR, 2 QER, 3 URR
	ID   uint32
}

func (e *Error) Error() string {
	s := fmt.Sprintf("pfcp cause %d (%s)", e.Cause, CauseName(e.Cause))
	if e.OffendingIE != 0 {
		s += fmt.Sprintf(", offending IE %d (%s)", e.OffendingIE, IEName(e.OffendingIE))
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// missing is Mandatory IE missing for IE ie (TS 29.244 7.2.2.4.2: the
// Offending IE names it).
func missing(ie uint16, where string) *Error {
	return &Error{Cause: CauseMandatoryIEMissing, OffendingIE: ie, Detail: fmt.Sprintf("%s has no %s", where, IEName(ie))}
}

// incorrect is Mandatory IE incorrect for IE ie.
func incorrect(ie uint16, format string, args ...any) *Error {
	return &Error{Cause: CauseMandatoryIEIncorrect, OffendingIE: ie, Detail: fmt.Sprintf(format, args...)}
}

// RuleFailure is Rule creation/modification failure about one rule.
func RuleFailure(ruleType uint8, id uint32, format string, args ...any) *Error {
	return &Error{Cause: CauseRuleFailure, Rule: &FailedRule{Type: ruleType, ID: id}, Detail: fmt.Sprintf(format, args...)}
}

// Failed-rule types (TS 29.244 8.2.80).
const (
	RulePDR uint8 = 0
	RuleFAR uint8 = 1
	RuleQER uint8 = 2
	RuleURR uint8 = 3
)

// AsError is err as a PFCP rejection: itself when it is one, else System
// failure (TS 29.244 8.2.1: the receiver failed, not the request).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Cause: CauseSystemFailure, Detail: err.Error()}
}

// CauseError is e as the rules.N4 contract's error.
func (e *Error) CauseError() *rules.CauseError {
	return &rules.CauseError{Cause: e.Cause, Detail: e.Error()}
}

// CauseName is cause's name in TS 29.244 8.2.1.
func CauseName(cause uint8) string {
	if n, ok := causeNames[cause]; ok {
		return n
	}
	return "unknown cause"
}

var causeNames = map[uint8]string{
	CauseAccepted:                        "Request accepted",
	CauseRejected:                        "Request rejected",
	CauseSessionNotFound:                 "Session context not found",
	CauseMandatoryIEMissing:              "Mandatory IE missing",
	CauseConditionalIEMissing:            "Conditional IE missing",
	CauseInvalidLength:                   "Invalid length",
	CauseMandatoryIEIncorrect:            "Mandatory IE incorrect",
	CauseInvalidFTEIDAllocation:          "Invalid F-TEID allocation option",
	CauseNoAssociation:                   "No established PFCP Association",
	CauseRuleFailure:                     "Rule creation/modification Failure",
	pfcpType.CausePfcpEntityInCongestion: "PFCP entity in congestion",
	CauseNoResources:                     "No resources available",
	CauseServiceNotSupported:             "Service not supported",
	CauseSystemFailure:                   "System failure",
}
