package u

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
)

// RunNF is `l25gc nf upf-u`: UPF-U with the node's config, its counters on
// /metrics (and /healthz for the supervisor) at upf.u.metrics_port, until
// ctx ends.
func RunNF(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	c, err := FromConfig(cfg)
	if err != nil {
		return err
	}
	p, err := Start(c)
	if err != nil {
		return err
	}
	log.Info("UPF-U forwarding", "n3", c.N3.Dev, "n3_ip", c.N3.IP, "n6", c.N6.Dev, "n6_ip", c.N6.IP,
		"tables", c.Tables.Path(), "max_sessions", c.MaxSessions)
	if port := cfg.UPF.U.MetricsPort; port != 0 {
		table, err := p.Table()
		if err != nil {
			return err
		}
		srv, err := serveMetrics(net.JoinHostPort(cfg.SBI.BindIP, strconv.Itoa(port)), table)
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	return p.Run(ctx)
}

func serveMetrics(addr string, t *shm.Table) (*http.Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(shm.NewCollector(t), newQoSCollector())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("upf-u metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us: nothing left to serve
		}
	}()
	return srv, nil
}
