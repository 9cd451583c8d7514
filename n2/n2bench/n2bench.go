// Package n2bench measures one N2 message's round trip between two
// processes, as the AMF and the simulated gNB exchange them: an echo
// server in a child process and a client that sends an NGAP-sized message
// and waits for it to come back, pausing between round trips as a lone
// procedure does between its steps, for each SCTP data path (own, pion)
// and user-space transport (udp, raw), alternated.
package n2bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/l25gc/l25gc/n2"
)

// Options say what to measure.
type Options struct {
	Transports []string      // udp, raw
	Impls      []string      // own, own-inline, pion, plain (bare UDP, transport ignored)
	Requests   int           // measured round trips per run
	Warmup     int           // unmeasured round trips first
	Gap        time.Duration // pause before each round trip, not measured
	Size       int           // bytes per message
	Rounds     int           // how many times each combination runs, alternated
	// Server starts the echo server in another process: it runs this
	// program with these arguments plus --serve-transport, --serve-impl
	// and --serve-addr.
	Server []string
}

// Result is one run's round trips.
type Result struct {
	Transport, Impl string
	Round           int
	Requests        int
	P50us, P99us    float64
	MeanUs          float64
}

// Run measures every combination Rounds times, alternating them so that
// load from elsewhere falls on all alike.
func Run(ctx context.Context, o Options) ([]Result, error) {
	var out []Result
	for round := 1; round <= max(o.Rounds, 1); round++ {
		for _, t := range o.Transports {
			for _, impl := range o.Impls {
				r, err := runOne(ctx, o, t, impl)
				if err != nil {
					return out, fmt.Errorf("%s/%s: %w", t, impl, err)
				}
				r.Round = round
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// runOne starts an echo server process and ping-pongs with it.
func runOne(ctx context.Context, o Options, transport, impl string) (Result, error) {
	addr := "127.0.0.1:0"
	if transport == n2.Raw {
		addr = fmt.Sprintf("127.0.0.1:%d", 40000+os.Getpid()%20000) // raw needs a fixed SCTP port
	}
	args := append(slices.Clone(o.Server[1:]), "--serve-transport", transport, "--serve-impl", impl, "--serve-addr", addr)
	cmd := exec.CommandContext(ctx, o.Server[0], args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return Result{}, fmt.Errorf("echo server did not start: %w", err)
	}
	served := strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dial(dctx, transport, impl, served)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	rtts, err := pingPong(c, o)
	if err != nil {
		return Result{}, err
	}
	return summarize(transport, impl, rtts), nil
}

// OwnInline is the own data path whose dialing side reads its socket in
// ReadMsg's goroutine (n2.Options.ReadInline), as the simulated gNB does.
const OwnInline = "own-inline"

// Plain is the floor the SCTP data paths are compared with: the same
// round trip as bare UDP datagrams, no SCTP at all.
const Plain = "plain"

func dial(ctx context.Context, transport, impl, addr string) (n2.Conn, error) {
	if impl == Plain {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "udp", addr)
		if err != nil {
			return nil, err
		}
		return n2.PlainUDPConn{UDPConn: nc.(*net.UDPConn)}, nil
	}
	o := n2.Options{SCTPImpl: impl}
	if impl == OwnInline {
		o = n2.Options{SCTPImpl: n2.ImplOwn, ReadInline: true}
	}
	c, _, err := o.Dial(ctx, transport, addr)
	return c, err
}

// servePlain echoes bare UDP datagrams.
func servePlain(ctx context.Context, addr string, out io.Writer) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer pc.Close()
	go func() { <-ctx.Done(); pc.Close() }()
	fmt.Fprintf(out, "listening %s\n", pc.LocalAddr())
	buf := make([]byte, 64<<10)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return nil
		}
		if _, err := pc.WriteTo(buf[:n], from); err != nil {
			return err
		}
	}
}

// pingPong times Requests round trips after Warmup, pausing Gap before each.
func pingPong(c n2.Conn, o Options) ([]time.Duration, error) {
	msg := make([]byte, max(o.Size, 1))
	rtts := make([]time.Duration, 0, o.Requests)
	for i := range o.Warmup + o.Requests {
		time.Sleep(o.Gap)
		start := time.Now()
		if err := c.WriteMsg(msg, 1); err != nil {
			return nil, err
		}
		if _, _, err := c.ReadMsg(); err != nil {
			return nil, err
		}
		if i >= o.Warmup {
			rtts = append(rtts, time.Since(start))
		}
	}
	return rtts, nil
}

func summarize(transport, impl string, rtts []time.Duration) Result {
	r := Result{Transport: transport, Impl: impl, Requests: len(rtts)}
	if len(rtts) == 0 {
		return r
	}
	slices.Sort(rtts)
	var sum time.Duration
	for _, d := range rtts {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	r.P50us, r.P99us = us(rtts[len(rtts)/2]), us(rtts[len(rtts)*99/100])
	r.MeanUs = us(sum / time.Duration(len(rtts)))
	return r
}

// Serve is the echo server: it listens on addr, says where on out
// ("listening ADDR"), and sends every message back on its stream until the
// association or ctx ends.
func Serve(ctx context.Context, transport, impl, addr string, out io.Writer) error {
	if impl == Plain {
		return servePlain(ctx, addr, out)
	}
	if impl == OwnInline { // an option of the dialing side only
		impl = n2.ImplOwn
	}
	ln, _, err := n2.Options{SCTPImpl: impl}.Listen(transport, addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() { <-ctx.Done(); ln.Close() }()
	fmt.Fprintf(out, "listening %s\n", ln.Addr())
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		pdu, stream, err := c.ReadMsg()
		if err != nil {
			return nil // the client closed: done
		}
		if err := c.WriteMsg(pdu, stream); err != nil {
			return err
		}
	}
}

// Table prints the results, one row per run.
func Table(rs []Result) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "TRANSPORT\tIMPL\tROUND\tN\tP50 µs\tP99 µs\tMEAN µs\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t\n", r.Transport, r.Impl, r.Round, r.Requests, r.P50us, r.P99us, r.MeanUs)
	}
	w.Flush()
	return b.String()
}
