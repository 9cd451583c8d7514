package sbi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The middleware and ProblemDetails helpers run over every SBI transport:
// an NF answers the same whichever carries it.
func TestMain(m *testing.M) { sbitest.Main(m) }

const authPath = "/nausf-auth/v1/ue-authentications"

// TS 29.500 5.2.7.2: a body that does not decode is 400 INVALID_MSG_FORMAT
// in a ProblemDetails, whether it is JSON of the wrong shape or not JSON at
// all; the served metric counts the 400.
func TestBadBodyIsProblem400(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		mux := http.NewServeMux()
		mux.HandleFunc("POST "+authPath, func(w http.ResponseWriter, r *http.Request) {
			var in models.AuthenticationInfo
			if !sbi.DecodeJSON(w, r, &in) {
				return
			}
			sbi.WriteJSON(w, http.StatusCreated, in)
		})
		reg := prometheus.NewRegistry()
		base := sbitest.Serve(t, tr, sbi.Handler(mux, sbi.NewMetrics(reg), logging.Discard()))
		c := sbitest.Client(tr)

		_, err := c.Do(context.Background(), "POST", base+authPath, []int{1, 2}, nil)
		var pe *sbi.ProblemError
		if !errors.As(err, &pe) || pe.Status != 400 || pe.Problem.Cause != "INVALID_MSG_FORMAT" || pe.Problem.Status != 400 {
			t.Fatalf("wrong JSON shape: got %v, want 400 INVALID_MSG_FORMAT", err)
		}
		resp, err := sbitest.HTTPClient(tr).Post(base+authPath, "application/json", strings.NewReader(`{"supiOrSuci":`))
		if err != nil {
			t.Fatal(err)
		}
		var problem models.ProblemDetails
		err = json.NewDecoder(resp.Body).Decode(&problem)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 400 || resp.Header.Get("Content-Type") != sbi.ContentTypeProblem ||
			problem.Cause != "INVALID_MSG_FORMAT" {
			t.Fatalf("truncated JSON: %d %s %+v (%v), want 400 %s INVALID_MSG_FORMAT",
				resp.StatusCode, resp.Header.Get("Content-Type"), problem, err, sbi.ContentTypeProblem)
		}
		var out models.AuthenticationInfo
		if _, err := c.Do(context.Background(), "POST", base+authPath,
			models.AuthenticationInfo{SupiOrSuci: "imsi-208930000000001"}, &out); err != nil || out.SupiOrSuci != "imsi-208930000000001" {
			t.Fatalf("good body: %v %+v", err, out)
		}
		if n := servedCount(t, reg, "nausf-auth", "400"); n != 2 {
			t.Fatalf("served metric counted %d answers 400, want 2", n)
		}
	})
}

// servedCount is how many requests of service answered status.
func servedCount(t *testing.T, reg *prometheus.Registry, service, status string) uint64 {
	t.Helper()
	return sample(t, reg, "l25gc_sbi_server_request_duration_seconds", map[string]string{"service": service, "status": status}).GetHistogram().GetSampleCount()
}

// sample is the sample of metric name whose labels include want (nil
// when there is none: its getters then read zero).
func sample(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	samples:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue samples
				}
			}
			return m
		}
	}
	return nil
}

// A panicking handler costs one 500 ProblemDetails, never the NF.
func TestHandlerContainsPanics(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("bug") })
		mux.HandleFunc("GET /ok", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
		base := sbitest.Serve(t, tr, sbi.Handler(mux, nil, logging.Discard()))
		c := sbitest.Client(tr)
		if _, err := c.Do(context.Background(), "GET", base+"/boom", nil, nil); sbi.StatusOf(err) != 500 || sbi.CauseOf(err) != "SYSTEM_FAILURE" {
			t.Fatalf("panic: got %v, want 500 SYSTEM_FAILURE", err)
		}
		if _, err := c.Do(context.Background(), "GET", base+"/ok", nil, nil); err != nil {
			t.Fatalf("server did not survive the panic: %v", err)
		}
	})
}

// TS 29.500 5.2.7.2: a peer's 4xx passes through, its 5xx and an
// unreachable peer become 504.
func TestRelayProblemPassesPeer4xxAndMapsTheRest(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		for _, tc := range []struct {
			err    error
			status int
			cause  string
		}{
			{&sbi.ProblemError{Status: 404, Problem: models.ProblemDetails{Cause: "USER_NOT_FOUND"}}, 404, "USER_NOT_FOUND"},
			{&sbi.ProblemError{Status: 500, Problem: models.ProblemDetails{Cause: "SYSTEM_FAILURE"}}, 504, "UPSTREAM_SERVER_ERROR"},
			{errors.New("dial tcp: connection refused"), 504, "TARGET_NF_NOT_REACHABLE"},
		} {
			base := sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { sbi.RelayProblem(w, "UDM", tc.err) }))
			_, err := sbitest.Client(tr).Do(context.Background(), "GET", base+"/x", nil, nil)
			if sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("relay of %v: got %v, want %d %s", tc.err, err, tc.status, tc.cause)
			}
		}
	})
}

func TestWriteErrorKeepsOwnRejects(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base := sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			sbi.WriteError(w, "UDR", fmt.Errorf("deconceal: %w", sbi.Rejectf(501, "UNSUPPORTED_PROTECTION_SCHEME", "scheme %d", 7)))
		}))
		_, err := sbitest.Client(tr).Do(context.Background(), "GET", base+"/x", nil, nil)
		if sbi.StatusOf(err) != 501 || sbi.CauseOf(err) != "UNSUPPORTED_PROTECTION_SCHEME" {
			t.Fatalf("got %v, want 501 UNSUPPORTED_PROTECTION_SCHEME", err)
		}
	})
}

func TestTCPTransportSpeaksH2C(t *testing.T) {
	tr := sbi.NewTCP()
	base := sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sbi.WriteJSON(w, 200, map[string]string{"proto": r.Proto})
	}))
	var out map[string]string
	if _, err := sbitest.Client(tr).Do(context.Background(), "GET", base+"/x", nil, &out); err != nil {
		t.Fatal(err)
	}
	if out["proto"] != "HTTP/2.0" {
		t.Fatalf("server saw %s, want HTTP/2.0 (h2c)", out["proto"])
	}
}

// A peer that never answers costs a request its timeout, not forever, on
// every transport; the handler's context ends with it.
func TestRequestToAHangingPeerTimesOut(t *testing.T) {
	defer sbi.SetRequestTimeout(200 * time.Millisecond)()
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		released := make(chan struct{}, 1)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /nudm-sdm/v2/{supi}/am-data", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			released <- struct{}{}
		})
		base := sbitest.Serve(t, tr, mux)
		c := sbi.NewClient(tr.RoundTripper(), nil)
		_, err := c.Do(context.Background(), "GET", base+"/nudm-sdm/v2/imsi-208930000000001/am-data", nil, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("request to a hanging peer: %v, want context.DeadlineExceeded", err)
		}
		select {
		case <-released:
		case <-time.After(5 * time.Second): // a bound on a hang, not a measurement
			t.Fatal("the hanging handler's context is still live 5 s after the client gave up")
		}
	})
}
