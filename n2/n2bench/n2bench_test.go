package n2bench

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/n2"
)

// The echo server sends each message back on its stream, over each data
// path and over bare UDP, and a ping-pong against it yields one round trip
// per request.
func TestPingPongAgainstTheEchoServer(t *testing.T) {
	for _, impl := range []string{n2.ImplOwn, OwnInline, n2.ImplPion, Plain} {
		t.Run(impl, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- Serve(ctx, n2.UDP, impl, "127.0.0.1:0", pw) }()
			line := make([]byte, 64)
			n, err := pr.Read(line)
			if err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, pr)
			addr := strings.TrimSpace(strings.TrimPrefix(string(line[:n]), "listening "))
			c, err := dial(ctx, n2.UDP, impl, addr)
			if err != nil {
				t.Fatal(err)
			}
			rtts, err := pingPong(c, Options{Requests: 20, Warmup: 2, Size: 120, Gap: time.Microsecond})
			c.Close()
			if err != nil || len(rtts) != 20 {
				t.Fatalf("%d round trips, %v; want 20", len(rtts), err)
			}
			r := summarize(n2.UDP, impl, rtts)
			if r.P50us <= 0 || r.P99us < r.P50us || !strings.Contains(Table([]Result{r}), impl) {
				t.Fatalf("summary %+v", r)
			}
		})
	}
}
