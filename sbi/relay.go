package sbi

import (
	"errors"
	"fmt"
	"net/http"
)

// RelayProblem answers a request whose handling needed a peer NF that failed
// (err from Client.Do or NRFClient): the peer's 4xx ProblemDetails pass
// through unchanged (e.g. the UDM's 404 USER_NOT_FOUND reaches the AMF, which
// maps it to a 5GMM cause); a peer's 5xx becomes 504 UPSTREAM_SERVER_ERROR
// and an unreachable or undiscoverable peer 504 TARGET_NF_NOT_REACHABLE
// (TS 29.500 5.2.7.2). peer names the NF in the detail.
func RelayProblem(w http.ResponseWriter, peer string, err error) {
	var pe *ProblemError
	switch {
	case errors.As(err, &pe) && pe.Status/100 == 4:
		cause, detail := pe.Problem.Cause, pe.Problem.Detail
		if detail == "" {
			detail = peer + " answered " + http.StatusText(pe.Status)
		}
		WriteProblem(w, pe.Status, cause, detail)
	case errors.As(err, &pe):
		WriteProblem(w, http.StatusGatewayTimeout, CauseUpstreamServerError, peer+": "+err.Error())
	default:
		WriteProblem(w, http.StatusGatewayTimeout, CauseTargetNFNotReachable, peer+": "+err.Error())
	}
}

// Reject is an answer an NF decided on itself, with its TS 29.5xx cause:
// procedures return it as an error and the handler writes it, so the reply
// policy stays in the handler (see WriteError).
type Reject struct {
	Status        int
	Cause, Detail string
}

// Rejectf builds a *Reject with a formatted detail.
func Rejectf(status int, cause, format string, args ...any) *Reject {
	return &Reject{Status: status, Cause: cause, Detail: fmt.Sprintf(format, args...)}
}

func (e *Reject) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Cause, e.Detail) }

// WriteError answers a failed procedure: a *Reject as it stands, any other
// error as a failure of the peer NF it came from (RelayProblem).
func WriteError(w http.ResponseWriter, peer string, err error) {
	var rej *Reject
	if errors.As(err, &rej) {
		WriteProblem(w, rej.Status, rej.Cause, rej.Detail)
		return
	}
	RelayProblem(w, peer, err)
}
