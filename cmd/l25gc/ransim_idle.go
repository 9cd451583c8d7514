package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// idleFlags are ransim's CM-IDLE flags (TS 23.502 4.2.6, 4.2.3.2, 4.2.3.3).
type idleFlags struct {
	idle, wake, ignorePaging bool
	after                    time.Duration
}

func (i *idleFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&i.idle, "idle", false, "with --pdu: release each UE to CM-IDLE once its session (and TUN) is up; during --hold it answers paging with a Service Request")
	f.BoolVar(&i.wake, "wake", false, "with --idle: then wake each UE with a UE-triggered Service Request (its sessions' user plane comes back)")
	f.BoolVar(&i.ignorePaging, "ignore-paging", false, "with --idle: the UEs never answer paging (out of coverage), so the network's paging runs out")
	f.DurationVar(&i.after, "idle-after", 0, "with --idle: the UEs' inactivity before the release (their TUNs carry traffic meanwhile)")
}

// check refuses flag combinations that cannot work.
func (i idleFlags) check(p pduFlags) error {
	if i.idle && !p.enabled {
		return errors.New("--idle needs --pdu")
	}
	if (i.wake || i.ignorePaging || i.after != 0) && !i.idle {
		return errors.New("--wake, --ignore-paging and --idle-after need --idle")
	}
	if i.after < 0 {
		return errors.New("--idle-after: want a duration of 0 or more")
	}
	return nil
}

// idlePhases releases the UEs with a session to CM-IDLE (procedure
// an_release: UE Context Release Request to the release) and, with
// --wake, brings them back (service_request: Service Request to Service
// Accept).
func idlePhases(ctx context.Context, out io.Writer, fleet ransim.Fleet, ues []*ransim.UE, i idleFlags, sbi string) []bench.Result {
	if !i.idle {
		return nil
	}
	if i.after > 0 {
		fmt.Fprintf(out, "  UEs go idle in %v\n", i.after)
		select {
		case <-time.After(i.after):
		case <-ctx.Done():
			return nil
		}
	}
	run := func(name string, ues []*ransim.UE, proc ransim.Procedure) bench.Result {
		f := fleet
		f.Progress = bench.ProgressLine(out, name)
		return bench.FromOutcome(name, sbi, len(ues), fleet.Concurrency, ransim.RunFleet(ctx, ues, f, proc))
	}
	results := []bench.Result{run(bench.ProcedureANRelease, ues, ransim.ReleaseToIdle)}
	// Whatever wakes the UEs next (--wake, paging, the release at the end)
	// meets a core that finished the release.
	time.Sleep(bench.IdleDwell)
	if i.wake {
		results = append(results, run(bench.ProcedureServiceRequest, ues, ransim.Wake))
	}
	return results
}

// stayFor is what a UE does during --hold: answer the network; CM-IDLE,
// answer paging (printing each), or, with --ignore-paging, nothing.
func stayFor(out io.Writer, i idleFlags) func(ctx context.Context, ue *ransim.UE) {
	if !i.idle {
		return func(ctx context.Context, ue *ransim.UE) { _ = ue.Serve(ctx) }
	}
	if i.ignorePaging {
		return func(ctx context.Context, ue *ransim.UE) {
			for {
				if _, err := ue.AwaitPaging(ctx); err != nil {
					return
				}
				fmt.Fprintf(out, "  %s: paged, not answering\n", ue.SUPI())
			}
		}
	}
	return func(ctx context.Context, ue *ransim.UE) {
		err := ue.Stay(ctx, func(pagedAt time.Time, lat time.Duration, err error) {
			if err != nil {
				fmt.Fprintf(out, "  %s: paged, Service Request failed: %v\n", ue.SUPI(), err)
				return
			}
			fmt.Fprintf(out, "  %s: paged, Service Accept %.2f ms after the Paging\n", ue.SUPI(), float64(lat.Microseconds())/1000)
		})
		if err != nil {
			fmt.Fprintf(out, "  %s: %v\n", ue.SUPI(), err)
		}
	}
}

// releaseFromAnyState releases PDU session id, first waking a CM-IDLE UE
// with a Service Request (the release needs its N1/N2 connection).
func releaseFromAnyState(id uint8) ransim.Procedure {
	release := ransim.Release(id)
	return func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		if ue.Idle() {
			if _, err := ue.RequestService(ctx); err != nil {
				return 0, fmt.Errorf("waking the UE to release its session: %w", err)
			}
		}
		return release(ctx, ue)
	}
}
