// Package nf holds what every network function process shares: its
// environment (config, log, SBI transport and clients, metrics) and Run, which
// serves the NF's SBI, registers it with the NRF, and takes it down cleanly.
// Each NF lives in nf/<name> with the same shape: context (state), handlers
// per interface, consumer (calls to other NFs), procedures.
package nf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
)

// Env is one NF process's environment, built once in main and passed in.
type Env struct {
	Config    *config.Config
	Log       *slog.Logger
	Transport sbi.Transport
	Registry  *prometheus.Registry
	Metrics   *sbi.Metrics
	Client    *sbi.Client
	NRF       *sbi.NRFClient
	// Security is the SBI's credentials and access tokens (sbi.oauth2:
	// on); nil serves and calls without (benchmarks, handler tests).
	Security *sbi.Security
	// Tracing exports the NF's spans (config tracing); nil is off.
	Tracing *tracing.Provider
}

// Secure has the NF show its credential to the NRF, fetch access tokens
// for its requests and require them on its own services (TS 33.501
// 13.3, 13.4.1). Call it before the NF is built.
func (e *Env) Secure(s *sbi.Security) {
	e.Security = s
	e.Client.AuthorizeWith(s)
}

// NewEnv builds the environment of an NF of nfType over transport t.
func NewEnv(cfg *config.Config, log *slog.Logger, t sbi.Transport, nfType models.NrfNfManagementNfType) *Env {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := sbi.NewMetrics(reg)
	tp := newTracing(cfg, log, nfType)
	c := sbi.NewClient(traced(tp, t.RoundTripper()), m)
	nrf := sbi.NewNRFClient(c, cfg.NRFURI(), nfType)
	// A request to a discovered peer that does not answer moves on to the
	// next instance of its service (sbi.NRFClient.Failover).
	c.FailOverWith(nrf)
	// Over X-IO in a core that may span nodes, discoveries say which peers
	// share this node (their profiles' locality): X-IO to those, TCP to
	// the rest.
	if nt, ok := t.(sbi.NodeTransport); ok {
		nt.Instrument(m)
		nrf.Locate(nt)
	}
	return &Env{Config: cfg, Log: log, Transport: t, Registry: reg, Metrics: m, Client: c, NRF: nrf, Tracing: tp}
}

// PLMN is the node's PLMN as an openapi model.
func (e *Env) PLMN() models.PlmnId {
	return e.Config.PLMN.ToModel()
}

// Function is one network function.
type Function interface {
	// Handler serves the NF's SBI services.
	Handler() http.Handler
	// Profile is what the NF registers with the NRF; a zero NfInstanceId
	// means "do not register" (the NRF itself).
	Profile() models.NrfNfManagementNfProfile
	// Start begins background work (e.g. the AMF's N2 listener) and returns.
	Start(ctx context.Context) error
	// Stop ends background work.
	Stop(ctx context.Context)
}

// Run serves f at sbiAddr and metrics at metricsAddr (if not ""), registers
// with the NRF, and blocks until ctx ends; then it deregisters and stops.
func Run(ctx context.Context, env *Env, f Function, sbiAddr, metricsAddr string) error {
	TuneGC()
	profile := f.Profile()
	if env.Config.TLSOn() {
		sbi.UseHTTPS(&profile) // TS 29.510 6.1.6.2.3 scheme: peers reach it over TLS
	}
	srv, err := serveSBI(env, f, profile, sbiAddr)
	if err != nil {
		return err
	}
	var metrics *http.Server
	if metricsAddr != "" {
		if metrics, err = serveMetrics(metricsAddr, env.Registry, f); err != nil {
			if srv != nil {
				_ = srv.Shutdown(context.Background())
			}
			return err
		}
	}
	defer shutdown(env, srv, metrics)

	if err := f.Start(ctx); err != nil {
		return err
	}
	defer f.Stop(context.Background())

	if nt, ok := env.Transport.(sbi.NodeTransport); ok && profile.Locality == "" {
		profile.Locality = nt.Locality() // TS 29.510 6.1.6.2.2: peers on this node find it so
	}
	if profile.NfInstanceId != "" {
		if err := register(ctx, env, profile); err != nil {
			return err
		}
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = env.NRF.Deregister(dctx, profile.NfInstanceId)
		}()
	}
	<-ctx.Done()
	env.Log.Info("stopping")
	return nil
}

// serveSBI serves f's SBI at sbiAddr; nil when f has none (its Handler
// is nil, like UPF-C's, which speaks N4 only).
func serveSBI(env *Env, f Function, profile models.NrfNfManagementNfProfile, sbiAddr string) (sbi.Server, error) {
	h := f.Handler()
	if h == nil {
		return nil, nil
	}
	h = sbi.Handler(Guard(env, profile, withNFStatusNotify(h, env.NRF)), env.Metrics, env.Log, handlerOptions(f)...)
	srv, err := env.Transport.Serve(sbiAddr, tracing.Handler(env.Tracing, h))
	if err != nil {
		return nil, err
	}
	env.Log.Info("SBI serving", "addr", srv.Addr(), "transport", env.Transport.Name())
	return srv, nil
}

// Guard puts the SBI security in front of the NF's handler: the NRF
// checks credentials, every other NF access tokens (sbi.Security).
func Guard(env *Env, profile models.NrfNfManagementNfProfile, h http.Handler) http.Handler {
	if env.Security == nil {
		return h
	}
	if profile.NfType == models.NrfNfManagementNfType_NRF {
		return env.Security.GuardNRF(h)
	}
	env.Security.Identify(profile.NfInstanceId)
	return env.Security.Guard(h)
}

// register registers the NF with the NRF, subscribing to the peers it will
// discover at its own notification endpoint, and keeps the registration
// alive with heartbeats until ctx ends (TS 29.510 5.2.2.2, 5.2.2.3.2, 5.2.2.5).
func register(ctx context.Context, env *Env, profile models.NrfNfManagementNfProfile) error {
	if base := apiRoot(profile); base != "" {
		env.NRF.NotifyAt(base + sbi.NFStatusNotifyPath)
	}
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := env.NRF.Register(regCtx, profile)
	cancel()
	if err != nil && ctx.Err() != nil {
		return nil // told to stop while registering: a stop, not a failure
	}
	if sbi.StatusOf(err) == http.StatusUnauthorized {
		return fmt.Errorf("%w (the NRF does not know this NF's credential: give every node of the core the same sbi.secret_file)", err)
	}
	if err != nil {
		return err
	}
	env.Log.Info("registered with NRF", "nfInstanceId", profile.NfInstanceId, "nrf", env.Config.NRFURI(),
		"locality", profile.Locality, "heartbeat", env.NRF.HeartbeatPeriod())
	go env.NRF.KeepAlive(ctx, func(err error) { env.Log.Warn("NRF heartbeat", "err", err) })
	return nil
}

// apiRoot is where the NF serves its SBI, from its profile's services.
func apiRoot(p models.NrfNfManagementNfProfile) string {
	for _, s := range p.NfServices {
		if s.ApiPrefix != "" {
			return s.ApiPrefix
		}
	}
	return ""
}

// HandlerOptioner is a Function whose SBI takes more than the defaults of
// sbi.Handler, e.g. a form body on one route (sbi.AcceptMediaTypes).
type HandlerOptioner interface {
	HandlerOptions() []sbi.HandlerOption
}

func handlerOptions(f Function) []sbi.HandlerOption {
	if o, ok := f.(HandlerOptioner); ok {
		return o.HandlerOptions()
	}
	return nil
}

// withNFStatusNotify serves the NRF's status notifications (TS 29.510
// 5.2.2.6) next to the NF's own services: one endpoint every NF has. A
// path test rather than a second ServeMux: every request passes here.
func withNFStatusNotify(h http.Handler, nrf *sbi.NRFClient) http.Handler {
	notify := nrf.NotifyHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sbi.NFStatusNotifyPath && r.Method == http.MethodPost {
			r.Pattern = notifyPattern // the metrics' route label (sbi.Handler)
			notify.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

var notifyPattern = http.MethodPost + " " + sbi.NFStatusNotifyPath

func shutdown(env *Env, srv sbi.Server, metrics *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if srv != nil {
		if err := srv.Shutdown(ctx); err != nil {
			env.Log.Warn("SBI shutdown", "err", err)
		}
	}
	if metrics != nil {
		_ = metrics.Shutdown(ctx)
	}
	_ = env.Tracing.Shutdown(ctx) // exports the spans still batched
}

// MetricsRouter is a Function with routes of its own on the metrics port,
// beside /metrics (the AMF's limiter mode switch, nf/amf/limiter_mode.go).
type MetricsRouter interface {
	RouteMetrics(mux *http.ServeMux)
}

func serveMetrics(addr string, reg *prometheus.Registry, f Function) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	if r, ok := f.(MetricsRouter); ok {
		r.RouteMetrics(mux)
	}
	// L25GC_PPROF=1 (in the environment of `l25gc up`) adds Go's profiler,
	// so a benchmark run can be profiled per NF: go tool pprof
	// http://127.0.0.1:9518/debug/pprof/profile?seconds=10
	if os.Getenv("L25GC_PPROF") != "" {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err
		}
	}()
	return srv, nil
}

// MetricsAddr is where an NF with metrics port p serves /metrics and /healthz.
func MetricsAddr(cfg *config.Config, port int) string {
	if port == 0 {
		return ""
	}
	return net.JoinHostPort(cfg.SBI.BindIP, strconv.Itoa(port))
}
