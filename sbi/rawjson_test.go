package sbi

import (
	"net/http/httptest"
	"testing"
)

func TestWriteRawJSON(t *testing.T) {
	w := httptest.NewRecorder()
	WriteRawJSON(w, 201, []byte(`{"a":1}`))
	if w.Code != 201 || w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"a":1}` {
		t.Fatalf("%d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
}
