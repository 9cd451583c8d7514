package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/node"
)

func newUpCmd() *cobra.Command {
	var sbiFlag string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "start the whole core on this node and supervise it until Ctrl-C",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if sbiFlag != "" {
				cfg.SBI.Transport = sbiFlag
			}
			if st, err := node.ReadState(cfg); err == nil && node.Alive(st.SupervisorPID) {
				return fmt.Errorf("a core is already running (supervisor pid %d); `l25gc down` first", st.SupervisorPID)
			}
			path, _ := cmd.Flags().GetString("config")
			if path != "" {
				if path, err = filepath.Abs(path); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			n2 := "no AMF on this node"
			if cfg.Runs("amf") {
				n2 = fmt.Sprintf("N2 %s (%s)", cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport)
			}
			nrf := ""
			if !cfg.Runs("nrf") {
				nrf = ", NRF " + cfg.NRFURI()
			}
			fmt.Fprintf(out, "L25GC+ starting: %s, SBI %s%s, logs in %s\n", strings.Join(cfg.NFs, " "), cfg.SBI.Transport, nrf+", "+n2, cfg.LogDir)
			if cfg.Runs("udr") {
				// The provisioning API's credential, made before the UDR
				// starts so that `l25gc subscriber` finds it at once.
				if _, err := prov.EnsureToken(cfg.AdminTokenPath()); err != nil {
					return err
				}
				fmt.Fprintf(out, "provisioning API admin token in %s (mode 0600)\n", cfg.AdminTokenPath())
			}
			core, err := node.Start(ctx, cfg, node.Options{ConfigPath: path, SBI: sbiFlag, Out: out, Restart: true, Publish: true})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "L25GC+ is up (SBI %s). Ctrl-C or `l25gc down` stops it.\n", core.SBI())
			<-ctx.Done()
			fmt.Fprintf(out, "L25GC+ stopping\n")
			core.Stop()
			return nil
		},
	}
	cmd.Flags().StringVar(&sbiFlag, "sbi", "", "SBI transport: tcp, xio or xio-socket (default from config)")
	return cmd
}

func newDownCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "stop the core started by `l25gc up`",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := runningState(cmd)
			if err != nil {
				return err
			}
			if !node.Alive(st.SupervisorPID) {
				return cleanStaleCore(cmd, st)
			}
			if err := syscall.Kill(st.SupervisorPID, syscall.SIGTERM); err != nil {
				return err
			}
			for i := 0; i < 200 && node.Alive(st.SupervisorPID); i++ {
				time.Sleep(100 * time.Millisecond)
			}
			if node.Alive(st.SupervisorPID) {
				return fmt.Errorf("supervisor pid %d still running after 20 s", st.SupervisorPID)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "L25GC+ stopped")
			return nil
		},
	}
}

func newStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "show each NF of the running core: PID, address, health",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := runningState(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			n2 := st.N2
			if n2 == "" {
				n2 = "- (no AMF here)"
			}
			fmt.Fprintf(out, "supervisor pid %d, SBI %s, N2 %s, up since %s, logs in %s\n",
				st.SupervisorPID, st.SBI, n2, st.Started.Format(time.RFC3339), st.LogDir)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NF\tPID\tSBI\tMETRICS\tRESTARTS\tHEALTH")
			client := &http.Client{Timeout: time.Second}
			for _, m := range []*node.Process{st.ShmHolder, st.Manager} { // X-IO
				if m == nil {
					continue
				}
				health := "down"
				if node.Alive(m.PID) {
					health = "ok"
				}
				fmt.Fprintf(tw, "%s\t%d\t-\t-\t%d\t%s\n", m.Name, m.PID, m.Restarts, health)
			}
			for _, p := range st.NFs {
				health := "down"
				if p.GaveUp {
					health = "gave-up" // the supervisor's console and the NF's logs say why
				}
				if node.Alive(p.PID) {
					health = "unhealthy"
					if node.Healthy(client, p.MetricsAddr) {
						health = "ok"
					}
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\n", p.Name, p.PID, p.SBIAddr, p.MetricsAddr, p.Restarts, health)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printTuning(out, st, hosttune.Host())
			cfg, err := coreConfig(cmd, st)
			if err != nil {
				_, err = fmt.Fprintf(out, "UPF-U: %v\n", err)
				return err
			}
			return printUPFStatus(out, client, st, cfg)
		},
	}
}

// runningState finds the core that `status` and `down` act on: the one of
// --config's data directory; without --config, the one of the default data
// directory under the current directory, else the core `l25gc up` started
// last on this host (so they work from any directory).
func runningState(cmd *cobra.Command) (*node.State, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	st, err := node.ReadState(cfg)
	if path, _ := cmd.Flags().GetString("config"); path != "" || !errors.Is(err, node.ErrNoCore) {
		return st, err
	}
	if cur, cerr := node.ReadCurrentState(); cerr == nil {
		return cur, nil
	}
	return nil, fmt.Errorf("no core is running: no %s here and no %s (start one with `l25gc up`, or pass the --config it runs with)",
		node.StatePath(cfg), node.CurrentStateLink)
}
