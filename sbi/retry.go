package sbi

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
)

// Retries of a request whose producer died (TS 29.500 5.2.x; RFC 9110
// 9.2.2): a consumer sends a request again, at another instance or at the
// restarted one, when sending it twice cannot do twice what was asked:
//
//   - the producer provably did not process it (reasonRefused): the
//     connection was refused (nothing listens: the NF is dead or still
//     starting), or nothing of the request went out; any method;
//   - the connection broke after the request went out (reasonReset) or the
//     answer's body was cut (reasonCut): the producer may have acted, so
//     only an idempotent request (GET, HEAD, PUT, DELETE, OPTIONS, and a
//     PATCH whose JSON Patch only replaces or tests values, RFC 6902 4.3/4.6:
//     applying it twice leaves what applying it once does).
//
// A POST that creates (SDM subscriptions, AM policy associations, auth
// events) is sent again only when refused, unless its caller marked it
// SafeToRepeat (Nausf_UEAuthentication, Nudm_UEAU generate-auth-data). An
// answer from the producer (any status) is its answer and is never
// retried here.
//
// Another instance is tried at once (Failoverer); when there is none, the
// request waits (retryPolicy: 50 ms doubling to 1 s, jittered) for the
// restarted one, re-resolving the target through the NRF before each new
// attempt (a restarted NF registers again under its instance id, and the
// NRF's notification tells the consumer it is back). All of it stays
// within the request's context deadline (RequestTimeout without one), less
// the reserve its callers need to act on a failure.

// Reasons a request is sent again, the metric's reason label.
const (
	reasonRefused = "refused" // not processed: refused, or not sent
	reasonReset   = "reset"   // connection broke after sending: idempotent only
	reasonCut     = "cut"     // answer's body cut: idempotent only
)

// Reselecter re-resolves the instance serving rawURL through the NRF,
// the failed instance included (NRFClient.Reselect): with no other
// instance, the restarted one is where the request goes.
type Reselecter interface {
	Reselect(ctx context.Context, rawURL string) (string, bool)
}

// retryPolicy paces the attempts that wait for a restarted producer.
type retryPolicy struct {
	first, max time.Duration
	// reserve is kept of the caller's deadline: the waiting stops that
	// long before it, so a producer not back by then is given up on and
	// the callers up the chain hear so (504) while their own deadlines
	// still let them act (a reject with its cause, not a timeout). It is
	// at most a quarter of the time left at the first failure, so a short
	// deadline still leaves time to wait.
	reserve time.Duration
	jitter  func(d time.Duration) time.Duration // in [d/2, d]
}

// defaultRetry starts at 50 ms: an NF restarted by the node supervisor
// (500 ms backoff) listens again about a second after it died, and several
// seconds later on a loaded machine. The waiting lasts as long as the
// caller's deadline allows, less a second: the deadline comes down the
// chain (3gpp-Sbi-Max-Rsp-Time), so the NF nearest the dead producer waits
// for it as long as the AMF's procedure does (10 s), not a fixed share of
// it. A fixed 5 s window made a UDR back after 5 s cost every
// registration waiting for it, although the AMF would have waited 10.
var defaultRetry = retryPolicy{first: 50 * time.Millisecond, max: time.Second, reserve: time.Second, jitter: halfJitter}

// halfJitter spreads consumers that failed together over [d/2, d], so
// that they do not all reach the restarted producer at once.
func halfJitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// delay is the wait before waiting attempt n (0-based).
func (p retryPolicy) delay(n int) time.Duration {
	if p.first <= 0 || p.max < p.first { // a Client not made by NewClient
		p = defaultRetry
	}
	d := p.first
	for i := 0; i < n && d < p.max; i++ {
		d *= 2
	}
	d = min(d, p.max)
	if p.jitter != nil {
		d = p.jitter(d)
	}
	return d
}

// wait sleeps before waiting attempt n, the first failure having been at
// since; false when ctx would end before the attempt could be made (the
// caller's deadline is never exceeded) or the attempt would eat into the
// reserve.
func (p retryPolicy) wait(ctx context.Context, n int, since time.Time) bool {
	d := p.delay(n)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-d <= p.reserveOf(dl.Sub(since)) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// reserveOf is the part of budget (the caller's time left at the first
// failure) that waiting leaves to the callers.
func (p retryPolicy) reserveOf(budget time.Duration) time.Duration {
	return min(p.reserve, budget/4)
}

// bodyCutError is an answer whose headers came but whose body the
// connection's end cut (the producer died while sending it).
type bodyCutError struct{ err error }

func (e *bodyCutError) Error() string { return e.err.Error() }
func (e *bodyCutError) Unwrap() error { return e.err }

// retryReason says why a failed attempt may be sent again, or "" when it
// may not. answered: the producer sent a response (its headers at least).
func retryReason(err error, answered, idempotent bool) string {
	if err == nil {
		return ""
	}
	var cut *bodyCutError
	if errors.As(err, &cut) {
		if idempotent {
			return reasonCut
		}
		return ""
	}
	if answered {
		return ""
	}
	if notProcessed(err) {
		return reasonRefused
	}
	if idempotent && connectionBroke(err) {
		return reasonReset
	}
	return ""
}

// notProcessed: the request provably never reached a producer that could
// act on it. A refused connection (TCP, or X-IO's dial to an address whose
// NF died or does not listen yet) and a failed dial carry no request; the
// X-IO message client already resent one whose conn failed before any
// byte went out, and reports the fresh dial's refusal.
func notProcessed(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && !op.Timeout() && !errors.Is(op.Err, context.Canceled)
}

// connectionBroke: no answer came and the caller has not given up (the
// connection was reset or closed under the request, by the producer's
// death: a reset, an EOF where the answer should be, HTTP/2's lost or
// force-closed connection). A request timed out by its context is not:
// the caller's deadline is over.
func connectionBroke(err error) bool {
	return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, os.ErrDeadlineExceeded)
}

// idempotentRequest: sending it twice has the effect of sending it once
// (RFC 9110 9.2.2; RFC 5789 2 for PATCH), or the caller said so
// (SafeToRepeat).
func idempotentRequest(ctx context.Context, method string, in any) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	case http.MethodPatch:
		return replacesOnly(in)
	}
	return ctx.Value(safeToRepeatKey{}) != nil
}

type safeToRepeatKey struct{}

// SafeToRepeat marks the requests sent with ctx as safe to send again
// after their connection broke, although their method is not idempotent:
// RFC 9110 9.2.2 lets a client repeat a request it knows, by design, to be
// harmless twice. Only for operations whose repetition leaves nothing the
// first one's caller relies on: a new 5G-AKA vector or authentication
// context supersedes one that was never delivered (its SQN is skipped,
// which TS 33.102 C.1 tolerates), and the AUSF that held the lost one
// died with it.
func SafeToRepeat(ctx context.Context) context.Context {
	return context.WithValue(ctx, safeToRepeatKey{}, true)
}

// replacesOnly: a JSON Patch of replace and test operations only, which
// set values regardless of what was there (RFC 6902 4.3, 4.6); add to an
// array, remove, move and copy depend on the document they meet.
func replacesOnly(in any) bool {
	items, ok := in.([]models.PatchItem)
	if !ok || len(items) == 0 {
		return false
	}
	for _, it := range items {
		if it.Op != models.PatchOperation_REPLACE && it.Op != models.PatchOperation_TEST {
			return false
		}
	}
	return true
}

// Reselect re-resolves rawURL's instance through the NRF, the failed
// instance included: with no other instance, it is where the restarted
// NF (registered again under the same instance id) is found. False when
// rawURL was not picked by Select or the NRF names no instance.
func (n *NRFClient) Reselect(ctx context.Context, rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	n.mu.Lock()
	ch, ok := n.chosen[u.Host]
	n.mu.Unlock()
	if !ok {
		return "", false
	}
	next, err := n.selectExcept(ctx, ch.q, "")
	if err != nil {
		return "", false
	}
	return moveURL(rawURL, u, ch.base, next), true
}

// retryCounter counts the requests sent again, by target NF type and reason.
func newRetryCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "l25gc_sbi_client_retries_total",
		Help: "SBI requests sent again after their producer failed, by target NF type and reason (refused: not processed; reset, cut: idempotent requests whose connection broke).",
	}, []string{"target", "reason"})
}

func (c *Client) countRetry(rawURL, reason string) {
	if c.metrics == nil || c.metrics.retries == nil {
		return
	}
	c.metrics.retries.WithLabelValues(targetOf(rawURL), reason).Inc()
}

// targetOf names the NF type whose service a URL calls ("/nudm-ueau/…" →
// "UDM", TS 29.501 4.4.1 service names), from a closed set: the label's
// values do not come from a peer.
func targetOf(rawURL string) string {
	path := rawURL
	if _, rest, ok := strings.Cut(rawURL, "://"); ok {
		_, path, _ = strings.Cut(rest, "/")
	}
	svc := ServiceOf("/" + strings.TrimPrefix(path, "/"))
	nf, _, _ := strings.Cut(strings.TrimPrefix(svc, "n"), "-")
	nf = strings.ToUpper(nf)
	switch nf {
	case "NRF", "AMF", "SMF", "AUSF", "UDM", "UDR", "PCF", "NSSF", "UDSF", "NEF", "CHF":
		return nf
	}
	return "other"
}
