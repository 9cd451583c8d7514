package main

import (
	"context"
	"errors"
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
		otlp                         string
		ues, concurrency             int
		deregister                   bool
		timeout                      time.Duration
		pdu                          pduFlags
		move                         = &pdu.move
	)
	cmd := &cobra.Command{
		Use:   "ransim",
		Short: "simulated gNB and UEs: NG Setup, then register UEs against the AMF",
		Long: "ransim connects one gNB to the AMF over N2 (NG Setup) and registers UEs with\n" +
			"consecutive IMSIs and the keys of the config's first subscriber range (5G AKA,\n" +
			"NAS security, Registration Complete), then prints the latencies.\n\n" +
			"With --pdu each UE then establishes one PDU session (IPv4, SSC mode 1) and the\n" +
			"gNB carries its traffic over GTP-U on its N3 address (--n3); --tun gives each UE\n" +
			"a TUN device in its own network namespace l25gc-ue1, l25gc-ue2, … (root), so\n" +
			"`ip netns exec l25gc-ue1 ping 10.200.0.2` runs over the session; --hold keeps\n" +
			"the UEs, sessions and TUNs up that long (or until Ctrl-C), then releases them.",
		Example: "  l25gc ransim --ues 10 --pdu\n  sudo l25gc ransim --ues 2 --pdu --tun --hold 5m",
		RunE: func(cmd *cobra.Command, _ []string) error {
			nf.TuneGC() // it shares the cores with the core it drives
			if err := pdu.check(); err != nil {
				return err
			}
			if err := move.check(pdu.enabled); err != nil {
				return err
			}
			if pdu.enabled && deregister {
				return errors.New("--deregister and --pdu do not go together: a --pdu run releases its sessions and the UEs at the end")
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			nf.SetProcs(cfg.Tuning.Procs.All) // as the NFs it drives (config tuning.procs)
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
			gcfg := bench.GNBConfig(cfg, amf, transport)
			gcfg.N3 = pdu.n3
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			g, err := move.connect(cctx, gcfg, pdu.enabled, cmd.ErrOrStderr())
			cancel()
			if err != nil {
				return err
			}
			defer move.close()
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
			stopTracing, err := traceRAN(g, otlp)
			if err != nil {
				return err
			}
			defer stopTracing()
			fmt.Fprintf(out, "gNB connected to %s over %s, NG Setup done\n", amf, g.Transport)
			fleet, err := bench.FleetFor(cfg, imsi, scheme)
			if err != nil {
				return err
			}
			fleet.UEs, fleet.Concurrency, fleet.Deregister, fleet.Timeout = ues, concurrency, deregister, timeout
			fleet.Progress = func(done, failed, total int) {
				fmt.Fprintf(out, "  %d/%d registered or failed, %d failed\r", done, total, failed)
			}
			if pdu.enabled {
				return runPDU(ctx, cmd, g, fleet, pdu, coreSBI(cmd, amf))
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
	f.StringVar(&otlp, "otlp", "", "comma-separated host:port of OTLP/HTTP collectors the simulator sends its spans to (its side of N2, each UE's procedures); give the core the same in tracing.otlp")
	f.StringVar(&transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default amf.ngap.transport of the config)")
	f.StringVar(&imsi, "imsi", "", "first IMSI (default: the config's first subscriber)")
	f.StringVar(&scheme, "suci", "null", "SUCI protection scheme: null, profile_a or profile_b")
	f.IntVar(&ues, "ues", 1, "number of UEs")
	f.IntVar(&concurrency, "concurrency", 1, "registrations in flight at once")
	f.BoolVar(&deregister, "deregister", false, "deregister (switch-off) each UE after it registered")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "time limit of one UE's procedure")
	pdu.register(f)
	move.register(f)
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
