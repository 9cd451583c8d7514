package sbi

import (
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

// Header values every request or answer carries, shared rather than
// allocated per message: net/http copies or only reads a header's values,
// and len == cap makes an append copy.
var (
	hdrJSON    = []string{"application/json"}
	hdrProblem = []string{ContentTypeProblem}
	hdrAccept  = []string{"application/json, application/problem+json"}
)

// WriteJSON replies with status and v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = hdrJSON
	w.WriteHeader(status)
	if v != nil {
		_ = EncodeJSON(w, v)
	}
}

// WriteProblem replies with a ProblemDetails (TS 29.500 5.2.7.2).
func WriteProblem(w http.ResponseWriter, status int, cause, detail string) {
	w.Header()["Content-Type"] = hdrProblem
	w.WriteHeader(status)
	_ = EncodeJSON(w, models.ProblemDetails{
		Title: http.StatusText(status), Status: int32(status), Cause: cause, Detail: detail,
	})
}

// DecodeJSON reads the request body into v. On failure it has already sent a
// 400 ProblemDetails with cause INVALID_MSG_FORMAT and returns false.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := readBody(r.Body, r.ContentLength)
	if err == nil {
		err = UnmarshalJSON(body, v)
	}
	if err != nil {
		WriteProblem(w, http.StatusBadRequest, CauseInvalidMsgFormat, "request body: "+err.Error())
		return false
	}
	return true
}

// ProblemError is a non-2xx answer from a peer NF.
type ProblemError struct {
	Status  int
	Problem models.ProblemDetails
	// Body is the answer as sent, for the extension members an API adds to
	// its ProblemDetails (RFC 7807 3.2).
	Body []byte
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

// readBody reads at most maxBody bytes of a body of size bytes (-1 when
// unknown) into a buffer allocated once at that size, where io.ReadAll
// starts at 512 bytes and grows and copies its way up.
func readBody(body io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxBody {
		return io.ReadAll(io.LimitReader(body, maxBody))
	}
	r := io.LimitedReader{R: body, N: maxBody} // on the stack: no allocation
	b := make([]byte, 0, size+1)               // +1: the read that sees EOF needs room
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
