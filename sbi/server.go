package sbi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the SBI counters of one NF: requests served and made, per
// service (the first path segment, e.g. nausf-auth), and their latency;
// requests made per path where the transport chooses one per request.
type Metrics struct {
	served *observers
	made   *observers
	path   *prometheus.CounterVec
}

// observers caches a histogram's observers per label set: WithLabelValues
// validates, hashes and looks up its labels on every call, for each SBI
// request served and made.
type observers struct {
	vec *prometheus.HistogramVec
	mu  sync.RWMutex
	m   map[observerKey]prometheus.Observer
}

type observerKey struct {
	service, method string
	status          int
}

// maxObservers bounds the cache: label sets past it (a client sending
// many services' paths) are looked up each time, as before.
const maxObservers = 1024

func newObservers(vec *prometheus.HistogramVec) *observers {
	return &observers{vec: vec, m: map[observerKey]prometheus.Observer{}}
}

func (o *observers) observe(service, method string, status int, d time.Duration) {
	k := observerKey{service, method, status}
	o.mu.RLock()
	obs, ok := o.m[k]
	o.mu.RUnlock()
	if !ok {
		obs = o.vec.WithLabelValues(service, method, strconv.Itoa(status))
		o.mu.Lock()
		if len(o.m) < maxObservers {
			// Strings of the caller's request are cloned: the key must not
			// pin the memory they point into.
			o.m[observerKey{strings.Clone(service), strings.Clone(method), status}] = obs
		}
		o.mu.Unlock()
	}
	obs.Observe(d.Seconds())
}

// NewMetrics registers the SBI metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	buckets := prometheus.ExponentialBuckets(50e-6, 2, 16) // 50 µs .. 1.6 s
	served := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "l25gc_sbi_server_request_duration_seconds", Help: "SBI requests served, by service, method and status.", Buckets: buckets,
	}, []string{"service", "method", "status"})
	made := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "l25gc_sbi_client_request_duration_seconds", Help: "SBI requests sent to other NFs, by service, method and status.", Buckets: buckets,
	}, []string{"service", "method", "status"})
	m := &Metrics{
		served: newObservers(served),
		made:   newObservers(made),
		path: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "l25gc_sbi_client_requests_total",
			Help: "SBI requests sent to other NFs, by the path that carried them: xio (this node's shared memory) or tcp (the kernel: peers on other nodes).",
		}, []string{"path"}),
	}
	reg.MustRegister(served, made, m.path)
	return m
}

// PathCounter counts the requests sent over path ("xio" or "tcp"); a
// transport that chooses the path per request (sbi.NodeTransport) takes
// one per path, which also exports it at 0 until used.
func (m *Metrics) PathCounter(path string) prometheus.Counter {
	return m.path.WithLabelValues(path)
}

// ServiceOf names the SBI service of a path: "/nausf-auth/v1/..." → "nausf-auth".
func ServiceOf(path string) string {
	path = strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		return "root"
	}
	return path
}

// Handler wraps an NF's router: it counts and times each request and turns a
// handler panic into a 500 ProblemDetails, so one bad request costs one answer,
// never the NF.
func Handler(h http.Handler, m *Metrics, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				log.Error("SBI handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !sw.wrote {
					WriteProblem(sw, http.StatusInternalServerError, CauseSystemFailure, "internal error")
				}
			}
			if m != nil {
				m.served.observe(ServiceOf(r.URL.Path), r.Method, sw.status, time.Since(start))
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
