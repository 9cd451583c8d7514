package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/registry"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xiohttp"
)

func newNFCmd() *cobra.Command {
	var sbiFlag string
	cmd := &cobra.Command{
		Use:   "nf NAME",
		Short: "run one network function in this process (used by `l25gc up`)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			entry, ok := registry.Lookup(args[0])
			if !ok {
				return fmt.Errorf("unknown NF %q; known: %s", args[0], strings.Join(registry.Names(), ", "))
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if entry.Run != nil {
				return runProcess(cfg, entry.Name, entry.Run)
			}
			if sbiFlag != "" {
				cfg.SBI.Transport = sbiFlag
			}
			return runNF(cfg, entry)
		},
	}
	cmd.Flags().StringVar(&sbiFlag, "sbi", "", "SBI transport: tcp, xio or xio-socket (default from config)")
	return cmd
}

// openNFLog opens the log file of NF name with the config's level,
// rotation and SUPI redaction.
func openNFLog(cfg *config.Config, name string) (*slog.Logger, io.Closer, error) {
	level, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil {
		return nil, nil, err
	}
	return logging.OpenFile(cfg.LogDir, name, level, logging.FileOptions{
		MaxBytes: int64(cfg.LogMaxSizeMB) << 20, Keep: cfg.LogMaxFiles, RedactSUPI: cfg.LogRedactSUPI,
	})
}

// runProcess runs an NF that serves no SBI (UPF-U) until SIGTERM.
func runProcess(cfg *config.Config, name string, run registry.Process) error {
	log, file, err := openNFLog(cfg, name)
	if err != nil {
		return err
	}
	defer file.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("run", "err", err)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// runNF builds the NF of entry and serves it until SIGTERM.
func runNF(cfg *config.Config, entry registry.Entry) error {
	name := entry.Name
	nf.SetProcs(cfg.ProcsFor(name))
	log, file, err := openNFLog(cfg, name)
	if err != nil {
		return err
	}
	defer file.Close()
	transport, err := newTransport(cfg, name)
	if err != nil {
		log.Error("SBI transport", "err", err)
		return err
	}
	env := nf.NewEnv(cfg, log, transport, entry.Type)
	if cfg.OAuth2On() {
		load := sbi.LoadSecret // the NRF's node made it (node.PrepareSecurity)
		if entry.Type == models.NrfNfManagementNfType_NRF {
			load = sbi.LoadOrCreateSecret // `l25gc nf nrf` run by hand
		}
		secret, err := load(cfg.SecretPath())
		if err != nil {
			log.Error("SBI security", "err", err)
			return err
		}
		env.Secure(sbi.NewSecurity(secret, transport.RoundTripper(), cfg.NRFURI(), entry.Type))
	}
	f, err := entry.New(env)
	if err != nil {
		log.Error("start", "err", err)
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ports := entry.PortsIn(cfg)
	if err := nf.Run(ctx, env, f, cfg.Addr(ports.SBIPort), nf.MetricsAddr(cfg, ports.MetricsPort)); err != nil {
		log.Error("run", "err", err)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// newTransport builds the configured SBI transport. Over X-IO an NF serves
// and calls its peers on this node through the onvm manager's shared memory
// (which `l25gc up` starts first and names in $L25GC_XIO_PREFIX), and keeps
// TCP at the same address for peers on other nodes and for tools; which
// peer is where comes from the NRF profiles (their locality, see
// sbi.NodeTransport), so a core can span nodes.
// xioConfig is NF name's X-IO attachment: its spin budget, reply poll and
// doorbell from sbi.xio_spin, where a 0 budget means never (xio's 0 is its
// default).
func xioConfig(cfg *config.Config, name string) xio.Config {
	never := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return xio.Config{Spin: never(cfg.XIOSpinFor(name)), ReplySpin: never(cfg.SBI.XIOSpin.Reply),
		Doorbell: cfg.SBI.XIOSpin.Doorbell}
}

func newTransport(cfg *config.Config, name string) (sbi.Transport, error) {
	tcp, err := node.SBITCP(cfg, name)
	if err != nil {
		return nil, err
	}
	switch cfg.SBI.Transport {
	case "tcp":
		return tcp, nil
	case "xio", "xio-socket":
		// Attach now: a missing manager is a clear start-up error, not a
		// failure of the first request.
		if err := xio.Init(xioConfig(cfg, name)); err != nil {
			return nil, err
		}
		if cfg.SBI.Transport == "xio" {
			return xiohttp.NewHybrid(xiohttp.NewMessageTransport(), tcp), nil
		}
		return xiohttp.NewHybrid(xiohttp.NewSocketTransport(), tcp), nil
	default:
		return nil, fmt.Errorf("unknown SBI transport %q (want tcp, xio or xio-socket)", cfg.SBI.Transport)
	}
}
