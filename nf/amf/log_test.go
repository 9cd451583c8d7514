package amf

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
)

// lockedBuffer is a log sink the AMF's goroutines may write concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The AMF's lines, logged on the logger its process makes, name the NF
// once (issue 9: "nf=amf nf=amf" on every line).
func TestLogLinesNameTheNFOnce(t *testing.T) {
	var out lockedBuffer
	env := &nf.Env{Config: config.Default(), Log: logging.New(&out, slog.LevelInfo, "amf"), Registry: prometheus.NewRegistry()}
	a, err := NewWithOptions(env, Options{Consumer: newFakePeers(), Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	g := (&harness{t: t, amf: a}).connect()
	g.setup() // logs "NG Setup"
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) == 0 || !strings.Contains(out.String(), "NG Setup") {
		t.Fatalf("no NG Setup line in the log:\n%s", out.String())
	}
	for _, l := range lines {
		if n := strings.Count(l, "nf=amf"); n != 1 {
			t.Fatalf("nf=amf %d times in %q", n, l)
		}
	}
}
