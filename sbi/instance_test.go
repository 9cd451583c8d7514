package sbi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/free5gc/openapi/models"
)

func TestInstanceIDIsAStableUUIDPerTypeAndAddress(t *testing.T) {
	a := InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.1:29503")
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Fatalf("InstanceID = %q, want a version-5 UUID", a)
	}
	if b := InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.1:29503"); b != a {
		t.Fatalf("a restarted NF got another id: %s then %s", a, b)
	}
	if c := InstanceID(models.NrfNfManagementNfType_AUSF, "127.0.0.1:29503"); c == a {
		t.Fatal("two NF types share an instance id")
	}
}

func TestRelayProblemPassesPeer4xxAndMapsTheRest(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		cause  string
	}{
		{&ProblemError{Status: 404, Problem: models.ProblemDetails{Cause: "USER_NOT_FOUND"}}, 404, "USER_NOT_FOUND"},
		{&ProblemError{Status: 500, Problem: models.ProblemDetails{Cause: "SYSTEM_FAILURE"}}, 504, "UPSTREAM_SERVER_ERROR"},
		{errors.New("dial tcp: connection refused"), 504, "TARGET_NF_NOT_REACHABLE"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { RelayProblem(w, "UDM", tc.err) }))
		_, err := NewClient(srv.Client().Transport, nil).Do(context.Background(), "GET", srv.URL, nil, nil)
		srv.Close()
		if StatusOf(err) != tc.status || CauseOf(err) != tc.cause {
			t.Errorf("relay of %v: got %v, want %d %s", tc.err, err, tc.status, tc.cause)
		}
	}
}

func TestWriteErrorKeepsOwnRejects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, "UDR", fmt.Errorf("deconceal: %w", Rejectf(501, "UNSUPPORTED_PROTECTION_SCHEME", "scheme %d", 7)))
	}))
	defer srv.Close()
	_, err := NewClient(srv.Client().Transport, nil).Do(context.Background(), "GET", srv.URL, nil, nil)
	if StatusOf(err) != 501 || CauseOf(err) != "UNSUPPORTED_PROTECTION_SCHEME" {
		t.Fatalf("got %v, want 501 UNSUPPORTED_PROTECTION_SCHEME", err)
	}
}
