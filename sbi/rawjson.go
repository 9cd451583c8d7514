package sbi

import "net/http"

// WriteRawJSON answers with body, JSON encoded already: an answer an NF
// relays as its peer sent it, or one it encoded once and keeps.
func WriteRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = hdrJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
