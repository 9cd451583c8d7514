package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

func newRansimCmd() *cobra.Command {
	var (
		amf, transport, imsi, scheme string
		ues, concurrency             int
		deregister                   bool
		timeout                      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "ransim",
		Short: "simulated gNB and UEs: NG Setup, then register UEs against the AMF",
		Long: "ransim connects one gNB to the AMF over N2 (NG Setup) and registers UEs with\n" +
			"consecutive IMSIs and the keys of the config's first subscriber range (5G AKA,\n" +
			"NAS security, Registration Complete), then prints the latencies.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			nf.TuneGC() // it shares the cores with the core it drives
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if len(cfg.Subscribers) == 0 {
				return fmt.Errorf("the config has no subscriber range to take keys from")
			}
			if amf == "" {
				amf = cfg.AMF.NGAP.Addr
			}
			if transport == "" {
				transport = cfg.AMF.NGAP.Transport
			}
			if imsi == "" {
				imsi = cfg.Subscribers[0].IMSI
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			g, err := ransim.Connect(cctx, bench.GNBConfig(cfg, amf, transport))
			cancel()
			if err != nil {
				return err
			}
			// The run ends after the AMF's last messages to its UEs (e.g. the
			// Configuration Update Command after Registration Complete,
			// TS 24.501 5.4.4): the gNB releases its UEs before it closes.
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := g.Shutdown(sctx); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), err)
				}
			}()
			fmt.Fprintf(out, "gNB connected to %s over %s, NG Setup done\n", amf, g.Transport)
			fleet, err := bench.FleetFor(cfg, imsi, scheme)
			if err != nil {
				return err
			}
			fleet.UEs, fleet.Concurrency, fleet.Deregister, fleet.Timeout = ues, concurrency, deregister, timeout
			fleet.Progress = func(done, failed, total int) {
				fmt.Fprintf(out, "  %d/%d registered or failed, %d failed\r", done, total, failed)
			}
			o, err := ransim.RegisterFleet(ctx, g, fleet)
			fmt.Fprintln(out)
			if err != nil {
				return err
			}
			r := bench.FromOutcome("registration", coreSBI(cmd, amf), ues, concurrency, o)
			bench.PrintTable(out, []bench.Result{r})
			if r.Failed > 0 {
				return fmt.Errorf("%d of %d registrations failed", r.Failed, ues)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&amf, "amf", "", "AMF N2 address (default amf.ngap.addr of the config)")
	f.StringVar(&transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default amf.ngap.transport of the config)")
	f.StringVar(&imsi, "imsi", "", "first IMSI (default: the config's first subscriber)")
	f.StringVar(&scheme, "suci", "null", "SUCI protection scheme: null, profile_a or profile_b")
	f.IntVar(&ues, "ues", 1, "number of UEs")
	f.IntVar(&concurrency, "concurrency", 1, "registrations in flight at once")
	f.BoolVar(&deregister, "deregister", false, "deregister (switch-off) each UE after it registered")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "time limit of one UE's procedure")
	return cmd
}

// coreSBI is the SBI transport of the core whose AMF is at amf, when it
// runs on this host under `l25gc up`; "-" when unknown (a remote core).
func coreSBI(cmd *cobra.Command, amf string) string {
	if st, err := runningState(cmd); err == nil && st.N2 == amf {
		return st.SBI
	}
	return "-"
}
