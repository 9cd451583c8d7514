package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// moveFlags are ransim's multi-gNB and handover flags.
type moveFlags struct {
	gnbs int
	kind string // "", "n2" or "xn"
	// targets are the gNBs after the first, connected by the command.
	targets []*ransim.GNB
}

func (m *moveFlags) register(f *pflag.FlagSet) {
	f.IntVar(&m.gnbs, "gnbs", 1, "gNBs to connect: IDs 1, 2, …, N3 addresses --n3 and the next ones (the lab's N3 link gets them)")
	f.StringVar(&m.kind, "move", "", "with --pdu and --gnbs 2 or more: after the sessions (and TUNs) are up, move every UE from gNB 1 to gNB 2 by n2 or xn handover")
}

// check refuses combinations that cannot work, before any connection.
func (m *moveFlags) check(pduEnabled bool) error {
	if m.gnbs < 1 {
		return fmt.Errorf("--gnbs %d: want 1 or more", m.gnbs)
	}
	switch m.kind {
	case "":
		return nil
	case "n2", "xn":
	default:
		return fmt.Errorf("--move %q: want n2 or xn", m.kind)
	}
	if !pduEnabled {
		return errors.New("--move needs --pdu: a handover moves PDU sessions")
	}
	if m.gnbs < 2 {
		return errors.New("--move needs --gnbs 2 or more")
	}
	return nil
}

// connect connects the gNBs: the first is returned, the others kept as
// targets; each N3 address after the first joins the lab's N3 link when
// there is one.
func (m *moveFlags) connect(ctx context.Context, cfg ransim.GNBConfig, withN3 bool, warn io.Writer) (*ransim.GNB, error) {
	if m.gnbs == 1 {
		return ransim.Connect(ctx, cfg)
	}
	if withN3 {
		for i := 1; i < m.gnbs; i++ {
			// No lab link (a remote core): the N3 socket's own error says more.
			if err := ransim.AddN3Address(node.LabN3Peer, ransim.NthN3(cfg.N3, i), 24); err != nil {
				fmt.Fprintf(warn, "warning: %v\n", err)
			}
		}
	}
	gnbs, err := ransim.ConnectGNBs(ctx, cfg, m.gnbs)
	if err != nil {
		return nil, err
	}
	m.targets = gnbs[1:]
	return gnbs[0], nil
}

// listen opens the targets' N3 sockets when UEs are to move. UPF-U
// resolves a target's link address itself when a session moves there,
// holding the packets meanwhile (upf/u/neighbour.c).
func (m *moveFlags) listen(port int) error {
	if m.kind == "" {
		return nil
	}
	for _, g := range m.targets {
		if err := g.UserPlane().Listen(port); err != nil {
			return err
		}
	}
	return nil
}

// close ends the targets' associations.
func (m *moveFlags) close() {
	for _, g := range m.targets {
		g.Close()
	}
}

// run moves every UE with a session to gNB 2 (the phase "handover_n2" or
// "handover_xn"); nothing without --move.
func (m *moveFlags) run(ctx context.Context, out io.Writer, ues []*ransim.UE, fleet ransim.Fleet, sbi string) []bench.Result {
	if m.kind == "" || len(m.targets) == 0 {
		return nil
	}
	target := m.targets[0]
	name := bench.ProcedureHandoverN2
	if m.kind == "xn" {
		name = bench.ProcedureHandoverXn
	}
	f := fleet
	f.Progress = bench.ProgressLine(out, name)
	o := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		if m.kind == "xn" {
			return ue.HandoverXn(ctx, target)
		}
		return ue.HandoverN2(ctx, target, ransim.N2Options{})
	})
	return []bench.Result{bench.FromOutcome(name, sbi, len(ues), fleet.Concurrency, o)}
}
