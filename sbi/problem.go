package sbi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/free5gc/openapi/models"
)

// Problem content type, TS 29.500 5.2.7.2.
const ContentTypeProblem = "application/problem+json"

// maxBody bounds what a handler reads: SBI bodies are small JSON documents.
const maxBody = 4 << 20

// WriteJSON replies with status and v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// WriteProblem replies with a ProblemDetails (TS 29.500 5.2.7.2).
func WriteProblem(w http.ResponseWriter, status int, cause, detail string) {
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(models.ProblemDetails{
		Title: http.StatusText(status), Status: int32(status), Cause: cause, Detail: detail,
	})
}

// DecodeJSON reads the request body into v. On failure it has already sent a
// 400 ProblemDetails with cause INVALID_MSG_FORMAT and returns false.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		WriteProblem(w, http.StatusBadRequest, "INVALID_MSG_FORMAT", "request body: "+err.Error())
		return false
	}
	return true
}

// ProblemError is a non-2xx answer from a peer NF.
type ProblemError struct {
	Status  int
	Problem models.ProblemDetails
}

func (e *ProblemError) Error() string {
	if e.Problem.Cause != "" || e.Problem.Detail != "" {
		return fmt.Sprintf("sbi: HTTP %d %s: %s", e.Status, e.Problem.Cause, e.Problem.Detail)
	}
	return fmt.Sprintf("sbi: HTTP %d", e.Status)
}

// StatusOf returns the HTTP status of a ProblemError in err's chain, or 0.
func StatusOf(err error) int {
	var pe *ProblemError
	if errors.As(err, &pe) {
		return pe.Status
	}
	return 0
}

// CauseOf returns the ProblemDetails cause in err's chain, or "".
func CauseOf(err error) string {
	var pe *ProblemError
	if errors.As(err, &pe) {
		return pe.Problem.Cause
	}
	return ""
}
