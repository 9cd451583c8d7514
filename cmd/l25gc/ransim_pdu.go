package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// pduFlags are ransim's PDU session flags.
type pduFlags struct {
	enabled bool
	tun     bool
	hold    time.Duration
	dnn     string
	n3      netip.Addr
	n3Flag  string
	idle    idleFlags
	move    moveFlags // --gnbs, --move (ransim_move.go)
}

func (p *pduFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&p.enabled, "pdu", false, "establish one PDU session per UE after it registered, and release it at the end")
	f.BoolVar(&p.tun, "tun", false, "with --pdu: a TUN device per UE in its own network namespace l25gc-ueN (root)")
	f.DurationVar(&p.hold, "hold", 0, "with --pdu: keep UEs, sessions and TUNs up this long (Ctrl-C ends it early), then release")
	f.StringVar(&p.dnn, "dnn", "internet", "with --pdu: the DNN of the sessions")
	f.StringVar(&p.n3Flag, "n3", ransim.DefaultN3.String(), "with --pdu: the gNB's N3 (GTP-U) address")
	p.idle.register(f)
}

// check refuses flag combinations that cannot work, before any connection.
func (p *pduFlags) check() error {
	a, err := netip.ParseAddr(p.n3Flag)
	if err != nil || !a.Is4() {
		return fmt.Errorf("--n3 %q: want an IPv4 address", p.n3Flag)
	}
	p.n3 = a
	if !p.enabled && (p.tun || p.hold > 0) {
		return errors.New("--tun and --hold need --pdu")
	}
	if p.hold < 0 {
		return errors.New("--hold: want a duration of 0 or more")
	}
	if err := p.idle.check(*p); err != nil {
		return err
	}
	if p.tun {
		return tunPrerequisites()
	}
	return nil
}

// runPDU registers the fleet, establishes a session per UE, optionally
// gives each a TUN, holds, and releases: each phase's latencies in one table.
func runPDU(ctx context.Context, cmd *cobra.Command, g *ransim.GNB, fleet ransim.Fleet, p pduFlags, sbi string) error {
	out := cmd.OutOrStdout()
	if err := g.UserPlane().Listen(gtpu.Port); err != nil {
		if p.tun {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v: sessions are set up without a user plane\n", err)
	}
	ues, err := g.FleetUEs(fleet)
	if err != nil {
		return err
	}
	var results []bench.Result
	phase := func(name string, ues []*ransim.UE, proc ransim.Procedure) {
		f := fleet
		f.Progress = bench.ProgressLine(out, name)
		o := ransim.RunFleet(ctx, ues, f, proc)
		results = append(results, bench.FromOutcome(name, sbi, len(ues), fleet.Concurrency, o))
	}
	phase("registration", ues, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) { return ue.Register(ctx) })
	phase("pdu_session", registered(ues), ransim.Establish(ransim.SessionRequest{ID: 1, DNN: p.dnn}))
	withSession := ransim.WithSession(ues, 1)
	printSessions(out, withSession)
	tuns, err := openTUNs(p, ues)
	if err == nil {
		if err = p.move.listen(gtpu.Port); err == nil {
			results = append(results, p.move.run(ctx, out, withSession, fleet, sbi)...)
		}
	}
	if err == nil {
		results = append(results, idlePhases(ctx, out, fleet, withSession, p.idle, sbi)...)
		hold(ctx, out, p.hold, withSession, tuns, stayFor(out, p.idle))
	}
	closeTUNs(cmd.ErrOrStderr(), tuns)
	// The release runs after Ctrl-C too: a run leaves no session behind.
	rctx, cancel := context.WithTimeout(context.Background(), fleet.Timeout+30*time.Second)
	defer cancel()
	f := fleet
	f.Progress = bench.ProgressLine(out, "pdu_session_release")
	o := ransim.RunFleet(rctx, withSession, f, releaseFromAnyState(1))
	results = append(results, bench.FromOutcome("pdu_session_release", sbi, len(withSession), fleet.Concurrency, o))
	bench.PrintTable(out, results)
	if err != nil {
		return err
	}
	return failures(results)
}

func registered(ues []*ransim.UE) []*ransim.UE {
	var out []*ransim.UE
	for _, ue := range ues {
		if ue.GUTI() != nil {
			out = append(out, ue)
		}
	}
	return out
}

func printSessions(out io.Writer, ues []*ransim.UE) {
	const shown = 10
	for i, ue := range ues {
		if i == shown {
			fmt.Fprintf(out, "  … and %d more sessions\n", len(ues)-shown)
			break
		}
		s := ue.Session(1)
		line := fmt.Sprintf("  %s: PDU session 1 on %s, %v, QFI %d", ue.SUPI(), s.DNN, s.Address, s.DefaultQFI())
		if s.Tunnel != nil {
			ul := s.Tunnel.UL()
			line += fmt.Sprintf(", N3 UL %v TEID %#x, DL TEID %#x", ul.IPv4, ul.TEID, s.Tunnel.DLTEID)
		}
		fmt.Fprintln(out, line)
	}
}

// openTUNs gives every UE with a session its namespace l25gc-ue<N>, N its
// place in the run (1-based), so the names match the UEs' order.
func openTUNs(p pduFlags, ues []*ransim.UE) ([]*ransim.UETUN, error) {
	if !p.tun {
		return nil, nil
	}
	var tuns []*ransim.UETUN
	for i, ue := range ues {
		s := ue.Session(1)
		if s == nil || s.Tunnel == nil {
			continue
		}
		t, err := ransim.OpenUETUN(fmt.Sprintf("l25gc-ue%d", i+1), s.Address, s.Tunnel)
		if err != nil {
			return tuns, err
		}
		tuns = append(tuns, t)
	}
	return tuns, nil
}

func closeTUNs(errOut io.Writer, tuns []*ransim.UETUN) {
	for _, t := range tuns {
		if err := t.Close(); err != nil {
			fmt.Fprintln(errOut, err)
		}
	}
}

// hold keeps the sessions up for d or until Ctrl-C, each UE doing stay:
// answering what the network sends meanwhile (e.g. a Modification
// Command), or paging.
func hold(ctx context.Context, out io.Writer, d time.Duration, ues []*ransim.UE, tuns []*ransim.UETUN, stay func(context.Context, *ransim.UE)) {
	if d <= 0 {
		return
	}
	for _, t := range tuns {
		fmt.Fprintf(out, "  ip netns exec %s …\n", t.Name)
	}
	fmt.Fprintf(out, "holding %d sessions for %v (Ctrl-C releases them now)\n", len(ues), d)
	hctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, ue := range ues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stay(hctx, ue)
		}()
	}
	wg.Wait()
}

func failures(results []bench.Result) error {
	for _, r := range results {
		if r.Failed > 0 {
			return fmt.Errorf("%d of %d %s procedures failed", r.Failed, r.UEs, r.Procedure)
		}
	}
	return nil
}
