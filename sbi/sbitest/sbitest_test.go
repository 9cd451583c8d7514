package sbitest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

// The helpers themselves: each transport serves a handler at its own
// address, the SBI middleware contains a panic as a 500 ProblemDetails, and
// resource URIs carry the authority the client used.
func TestServeOverEveryTransport(t *testing.T) {
	var names []string
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		names = append(names, tr.Name())
		mux := http.NewServeMux()
		mux.HandleFunc("POST /things", func(w http.ResponseWriter, r *http.Request) {
			var in map[string]string
			if !sbi.DecodeJSON(w, r, &in) {
				return
			}
			w.Header().Set("Location", sbi.ResourceURI(r, "/things/"+in["name"]))
			sbi.WriteJSON(w, http.StatusCreated, in)
		})
		mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("handler bug") })
		a, b := sbitest.Serve(t, tr, mux), sbitest.Serve(t, tr, mux)
		if a == b {
			t.Fatalf("two servers at %s", a)
		}
		c := sbitest.Client(tr)
		var out map[string]string
		h, err := c.Do(context.Background(), "POST", b+"/things", map[string]string{"name": "x"}, &out)
		if err != nil || out["name"] != "x" || h.Get("Location") != b+"/things/x" {
			t.Fatalf("POST: %v %v, Location %q", err, out, h.Get("Location"))
		}
		_, err = c.Do(context.Background(), "GET", a+"/panic", nil, nil)
		if sbi.StatusOf(err) != 500 || sbi.CauseOf(err) != "SYSTEM_FAILURE" {
			t.Fatalf("panicking handler: %v, want 500 SYSTEM_FAILURE", err)
		}
		resp, err := sbitest.HTTPClient(tr).Get(a + "/nowhere")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("unknown path: %d, want 404", resp.StatusCode)
		}
	})
	if got := strings.Join(names, ","); got != "tcp,xio-socket,xio" {
		t.Fatalf("transports %s", got)
	}
}
