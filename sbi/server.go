package sbi

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"slices"
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
	served  *observers
	made    *observers
	path    *prometheus.CounterVec
	retries *prometheus.CounterVec // retry.go
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

// maxObservers bounds the label sets of one histogram: past it, a new
// label set is counted under service OverflowService, so that whatever a
// peer makes us call (a callback URI it chose) or calls, the metrics stay
// bounded.
const maxObservers = 1024

// OverflowService is the service label of label sets beyond maxObservers.
const OverflowService = "other"

func newObservers(vec *prometheus.HistogramVec) *observers {
	return &observers{vec: vec, m: map[observerKey]prometheus.Observer{}}
}

func (o *observers) observe(service, method string, status int, d time.Duration) {
	method = labelMethod(method)
	k := observerKey{service, method, status}
	o.mu.RLock()
	obs, ok := o.m[k]
	full := len(o.m) >= maxObservers
	o.mu.RUnlock()
	if !ok && full {
		service = OverflowService
		obs = o.vec.WithLabelValues(service, method, strconv.Itoa(status))
	} else if !ok {
		obs = o.vec.WithLabelValues(service, method, strconv.Itoa(status))
		o.mu.Lock()
		// Strings of the caller's request are cloned: the key must not
		// pin the memory they point into.
		o.m[observerKey{strings.Clone(service), method, status}] = obs
		o.mu.Unlock()
	}
	obs.Observe(d.Seconds())
}

// labelMethod keeps the methods HTTP defines (RFC 9110 9.3, RFC 5789
// PATCH) and names any other "other": a request's method is its sender's
// to invent.
func labelMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
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
		retries: newRetryCounter(),
	}
	reg.MustRegister(served, made, m.path, m.retries)
	return m
}

// PathCounter counts the requests sent over path ("xio" or "tcp"); a
// transport that chooses the path per request (sbi.NodeTransport) takes
// one per path, which also exports it at 0 until used.
func (m *Metrics) PathCounter(path string) prometheus.Counter {
	if path != "xio" && path != "tcp" {
		path = "other" // the label's values are closed: two paths exist
	}
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

// HandlerOption adjusts what Handler accepts for one NF.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	extraMedia map[string][]string // request path → media types accepted besides JSON
}

// AcceptMediaTypes lets requests to path carry bodies of the given media
// types besides the JSON ones every SBI API takes; the NRF's access token
// endpoint takes a form (TS 29.510 6.3.5.2.2, RFC 6749 4.4.2:
// application/x-www-form-urlencoded).
func AcceptMediaTypes(path string, mediaTypes ...string) HandlerOption {
	return func(c *handlerConfig) {
		if c.extraMedia == nil {
			c.extraMedia = map[string][]string{}
		}
		c.extraMedia[path] = append(c.extraMedia[path], mediaTypes...)
	}
}

// jsonMediaTypes are the request bodies of the SBI (TS 29.500 5.4): JSON,
// problem details (RFC 7807), JSON Patch (RFC 6902), JSON Merge Patch
// (RFC 7396), and multipart/related for JSON with N1/N2 binary parts
// (TS 29.500 6.1.2.2, see DecodeRelated).
var jsonMediaTypes = []string{"application/json", ContentTypeProblem, "application/json-patch+json", "application/merge-patch+json", "multipart/related"}

// UnmatchedRoute is the service label of requests no route matched: one
// label value however many paths a scanner tries, so /metrics stays the
// size of the NF's API.
const UnmatchedRoute = "unmatched"

// Handler wraps an NF's router: it refuses bodies of a media type the SBI
// does not use (415), answers the router's own 404 and 405 as
// ProblemDetails, counts and times each request by its route, and turns a
// handler panic into a 500 ProblemDetails, so one bad request costs one
// answer, never the NF.
//
// A handler that Handler made already is returned as it is (tests serve a
// wrapped handler the way nf.Run serves an NF's): its options and metrics
// stand, and a second, default wrapper would refuse what they allow.
func Handler(h http.Handler, m *Metrics, log *slog.Logger, opts ...HandlerOption) http.Handler {
	if w, ok := h.(wrapped); ok {
		return w
	}
	var cfg handlerConfig
	// The OAuth2 token endpoint takes a form wherever it is served (TS
	// 29.510 6.3.5.2.2, RFC 6749 4.4.2): the NRF's, and a test's stand-in.
	AcceptMediaTypes(AccessTokenPath, "application/x-www-form-urlencoded")(&cfg)
	for _, o := range opts {
		o(&cfg)
	}
	return wrapped(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK, req: r}
		defer func() {
			if p := recover(); p != nil {
				log.Error("SBI handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !sw.wrote {
					WriteProblem(sw, http.StatusInternalServerError, CauseSystemFailure, "internal error")
				}
			}
			if m != nil {
				m.served.observe(routeService(r.Pattern), r.Method, sw.status, time.Since(start))
			}
		}()
		if !cfg.mediaAllowed(r) {
			WriteProblem(sw, http.StatusUnsupportedMediaType, CauseUnsupportedMediaType,
				fmt.Sprintf("Content-Type %q: want one of %s", r.Header.Get("Content-Type"), strings.Join(cfg.accepted(r.URL.Path), ", ")))
			return
		}
		r, cancel := withMaxRspTime(r)
		defer cancel()
		h.ServeHTTP(sw, r)
	})
}

// wrapped is a handler Handler made.
type wrapped http.HandlerFunc

func (h wrapped) ServeHTTP(w http.ResponseWriter, r *http.Request) { h(w, r) }

// mediaAllowed says whether r has no body or one of a media type the route
// takes (TS 29.500 5.2.7.2: 415 UNSUPPORTED_MEDIA_TYPE otherwise).
func (c *handlerConfig) mediaAllowed(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" { // nearly every request: no parsing
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return slices.Contains(jsonMediaTypes, mt) || slices.Contains(c.extraMedia[r.URL.Path], mt)
}

func (c *handlerConfig) accepted(path string) []string {
	return append(slices.Clip(jsonMediaTypes), c.extraMedia[path]...)
}

// routeService is the service label of a request served by the route
// pattern ("POST /nausf-auth/v1/ue-authentications" → "nausf-auth"), as
// net/http's ServeMux records it in Request.Pattern: never the raw path,
// whose values are the client's to choose. No pattern, or the catch-all
// "/", is UnmatchedRoute.
func routeService(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		pattern = pattern[i:] // drop "METHOD " and a host
	} else {
		return UnmatchedRoute
	}
	if pattern == "/" {
		return UnmatchedRoute
	}
	return ServiceOf(pattern)
}

type statusWriter struct {
	http.ResponseWriter
	req     *http.Request
	status  int
	wrote   bool
	swallow bool // the router's plain-text body, replaced by a ProblemDetails
}

// WriteHeader passes the status on, except that the router's own plain-text
// 404 and 405 (http.Error, from ServeMux) become ProblemDetails like every
// other error of an SBI API (TS 29.500 5.2.7.2).
func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.writeRouterProblem(code)
		return
	}
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) writeRouterProblem(code int) {
	w.Header().Del("Content-Length")
	w.Header().Del("X-Content-Type-Options")
	w.status, w.wrote, w.swallow = code, true, true
	cause, detail := CauseResourceURIStructureNotFound, "no resource at "+w.req.URL.Path
	if code == http.StatusMethodNotAllowed {
		cause, detail = "", w.req.Method+" is not allowed on "+w.req.URL.Path+"; allowed: "+w.Header().Get("Allow")
	}
	WriteProblem(w.ResponseWriter, code, cause, detail)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
