package wiregolden

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/sbi"
)

// TestSBIAnswersCarryWhatAnEncoderWould: sbi.WriteJSON (every producer's
// answer) sends the bytes json.NewEncoder(w).Encode did before it reused
// encoders, also when one answer follows a larger one through the same
// pooled buffer.
func TestSBIAnswersCarryWhatAnEncoderWould(t *testing.T) {
	for round := 0; round < 2; round++ {
		for _, b := range registrationBodies() {
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(b.value); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			sbi.WriteJSON(rec, http.StatusCreated, b.value)
			if rec.Code != http.StatusCreated || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: status %d, content type %q", b.name, rec.Code, rec.Header().Get("Content-Type"))
			}
			if !bytes.Equal(rec.Body.Bytes(), want.Bytes()) {
				t.Errorf("%s: answered\n%s\nan encoder writes\n%s", b.name, rec.Body.Bytes(), want.Bytes())
			}
		}
	}
}

// TestEncodeJSONWritesNothingForAValueItCannotEncode: a half-written body
// would reach the peer as a syntax error; none at all is an empty answer.
func TestEncodeJSONWritesNothingForAValueItCannotEncode(t *testing.T) {
	var out bytes.Buffer
	err := sbi.EncodeJSON(&out, map[string]any{"a": strings.Repeat("x", 100), "b": make(chan int)})
	if err == nil || out.Len() != 0 {
		t.Errorf("got err %v and %d bytes, want an error and nothing written", err, out.Len())
	}
	if err := sbi.EncodeJSON(&out, map[string]int{"sst": 1}); err != nil || out.String() != "{\"sst\":1}\n" {
		t.Errorf("after a failed encode: got %q, %v", out.String(), err)
	}
}

// TestProblemAnswersAreProblemDetails: WriteProblem goes through the same
// encoder and still sends TS 29.500 5.2.7.2 ProblemDetails.
func TestProblemAnswersAreProblemDetails(t *testing.T) {
	rec := httptest.NewRecorder()
	sbi.WriteProblem(rec, http.StatusNotFound, "USER_NOT_FOUND", "imsi-1 & <2>")
	want := "{\"title\":\"Not Found\",\"status\":404,\"detail\":\"imsi-1 \\u0026 \\u003c2\\u003e\",\"cause\":\"USER_NOT_FOUND\"}\n"
	if rec.Body.String() != want || rec.Header().Get("Content-Type") != sbi.ContentTypeProblem {
		t.Errorf("got %q (%s), want %q", rec.Body.String(), rec.Header().Get("Content-Type"), want)
	}
}
