package sbi

import "net/http"

// ResourceURI is the absolute URI of a resource a handler created, for the
// Location header of 201 answers and for links (TS 29.501 4.4.1: apiRoot is
// scheme://authority as the request reached the NF).
func ResourceURI(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}
