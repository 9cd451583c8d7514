package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/tracing"
)

// A run's spans reach the benchmark's collector, and each result gets the
// breakdown of its own procedure, printed under the table.
func TestTracingAttachesEachProcedureBreakdownToItsResult(t *testing.T) {
	tr, err := StartTracing(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if eps := tr.Endpoints(); len(eps) != 1 {
		t.Fatalf("endpoints %v, want the collector's", eps)
	}
	ran := tracing.NewRAN(tr.ran)
	start := time.Now()
	ran.Procedure("registration", 1, start, start.Add(3*time.Millisecond))
	ran.Procedure("pdu_session", 1, start.Add(4*time.Millisecond), start.Add(5*time.Millisecond))
	rs := []Result{{Procedure: "registration", SBI: "xio", UEs: 1, Concurrency: 1}, {Procedure: "paging", SBI: "xio"}}
	tr.attach(context.Background(), rs)
	if b := rs[0].Breakdown; b == nil || b.Count != 1 || b.EndToEnd.P50 != 3 {
		t.Fatalf("registration breakdown %+v, want one procedure of 3 ms", b)
	}
	if rs[1].Breakdown != nil {
		t.Errorf("paging got %+v; no paging procedure was recorded", rs[1].Breakdown)
	}
	var out bytes.Buffer
	PrintBreakdowns(&out, rs)
	if !strings.Contains(out.String(), "registration over xio, 1 UEs, concurrency 1: 1 procedures") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// Against a running core (--amf) the collector listens where the core's
// tracing.otlp sends, and that address is not also a second endpoint.
func TestTracingAtTheCoresAddressListensThereOnce(t *testing.T) {
	// A free port, closed and listened on again: another test process
	// may take it in between (CI saw "address already in use"), so a
	// port taken meanwhile is not this test's failure: try another.
	var tr *Tracing
	var addr string
	for attempt := 0; ; attempt++ {
		probe, err := StartTracingAt("127.0.0.1:0", true, nil)
		if err != nil {
			t.Fatal(err)
		}
		addr = probe.Endpoints()[0]
		probe.Close()
		tr, err = StartTracingAt(addr, true, []string{addr, "127.0.0.1:4318"})
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 4 {
			t.Fatal(err)
		}
	}
	defer tr.Close()
	if eps := tr.Endpoints(); len(eps) != 2 || eps[0] != addr || eps[1] != "127.0.0.1:4318" {
		t.Errorf("endpoints %v, want the collector at %s once, then the user's", eps, addr)
	}
}
