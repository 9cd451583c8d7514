package udm

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/security"
)

func TestReservationPathIsTheUDRs(t *testing.T) {
	if sqnReservationPath != udr.SQNReservationPath {
		t.Fatalf("UDM asks %q, the UDR serves %q", sqnReservationPath, udr.SQNReservationPath)
	}
}

// restartableUDR is a real UDR (embedded store in a temp dir) behind one
// address, which a test can stop and start again on the same data; it
// counts the requests it gets by method and path suffix.
type restartableUDR struct {
	t      *testing.T
	tr     sbi.Transport
	cfg    *config.Config
	nf     atomic.Pointer[udr.NF]
	h      atomic.Pointer[http.Handler]
	mu     sync.Mutex
	counts map[string]int
}

func newRestartableUDR(t *testing.T, tr sbi.Transport) (*restartableUDR, models.NrfNfManagementNfProfile) {
	u := &restartableUDR{t: t, tr: tr, cfg: config.Default(), counts: map[string]int{}}
	u.cfg.DataDir = t.TempDir()
	u.start()
	t.Cleanup(func() { u.nf.Load().Stop(context.Background()) })
	return u, nrftest.Peer(t, models.NrfNfManagementNfType_UDR, nrftest.Serve(t, tr, u), models.ServiceName_NUDR_DR)
}

// udmOnRestartableUDR is a UDM whose only UDR is a restartable one: the
// UDR (to count, restart and look into), the UDM and its environment.
func udmOnRestartableUDR(t *testing.T, tr sbi.Transport) (*restartableUDR, *NF, *nf.Env) {
	t.Helper()
	u, peer := newRestartableUDR(t, tr)
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM, peer)
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return u, n, env
}

func (u *restartableUDR) start() {
	n, err := udr.New(nrftest.Env(u.t, u.tr, u.cfg, models.NrfNfManagementNfType_UDR))
	if err != nil {
		u.t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		u.t.Fatal(err)
	}
	h := n.Handler()
	u.nf.Store(n)
	u.h.Store(&h)
}

// restart stops the UDR (its store closes) and opens the same data again.
func (u *restartableUDR) restart() {
	u.nf.Load().Stop(context.Background())
	u.start()
}

func (u *restartableUDR) store() store.Store { return u.nf.Load().Store() }

func (u *restartableUDR) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.counts[r.Method+" "+r.URL.Path[strings.LastIndex(r.URL.Path, "/"):]]++
	u.mu.Unlock()
	(*u.h.Load()).ServeHTTP(w, r)
}

func (u *restartableUDR) count(methodAndLast string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.counts[methodAndLast]
}

func (u *restartableUDR) total() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.counts {
		n += c
	}
	return n
}

// Each vector costs one UDR round trip, and no SQN is handed out twice
// across UDR restarts: every SQN the UE sees is fresher than the last.
func TestReservedSQNNeverReusedAcrossUDRRestarts(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		u, n, env := udmOnRestartableUDR(t, tr)
		base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
		const supi = "imsi-" + config.DefaultFirstIMSI

		sqnMS := uint64(0x20) // the configured ranges' starting SQN
		for round := range 3 {
			before := u.total()
			for range 5 {
				res, err := generate(c, base, supi, nil)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				sqnMS = ueAccepts(t, res, testOPc, sqnMS) // fails unless fresher than the last
			}
			if got := u.total() - before; got != 5 {
				t.Fatalf("round %d: %d UDR requests for 5 vectors, want 5", round, got)
			}
			u.restart()
		}
		a, err := u.store().AuthSubscription(context.Background(), supi)
		if err != nil || a.SequenceNumber.Sqn != "00000000002f" {
			t.Fatalf("stored SQN after 15 vectors from 0x20: %v %+v", err, a.SequenceNumber)
		}
		if u.count("PATCH /authentication-subscription") != 0 {
			t.Fatal("the UDM patched the SQN although the UDR reserves it")
		}
	})
}

// A failing reservation answers what the standard GET and PATCH would:
// same status and cause, whichever way the UDM asked.
func TestReservationFailsLikeTheStandardPath(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		u, peer := newRestartableUDR(t, tr)
		env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM, peer)
		const noSQN = "imsi-208930000000003"
		a, err := u.store().AuthSubscription(context.Background(), noSQN)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := u.store().Subscriber(context.Background(), noSQN)
		if err != nil {
			t.Fatal(err)
		}
		a.SequenceNumber = nil // a subscriber provisioned without an SQN
		sub.Auth = *a
		if err := u.store().PutSubscriber(context.Background(), sub); err != nil {
			t.Fatal(err)
		}
		answers := map[bool][2]error{}
		for _, reserve := range []bool{true, false} {
			n, err := New(env)
			if err != nil {
				t.Fatal(err)
			}
			if !reserve {
				n.udr.res.unsupported.Store(peerBase(t, n), struct{}{})
			}
			base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
			_, unknown := generate(c, base, "imsi-208939999999999", nil)
			_, broken := generate(c, base, noSQN, nil)
			answers[reserve] = [2]error{unknown, broken}
		}
		for i, want := range []struct {
			status int
			cause  string
		}{{404, sbi.CauseUserNotFound}, {403, sbi.CauseAuthenticationRejected}} {
			for reserve, errs := range answers {
				if sbi.StatusOf(errs[i]) != want.status || sbi.CauseOf(errs[i]) != want.cause {
					t.Errorf("case %d, reservation %v: %v, want %d %s", i, reserve, errs[i], want.status, want.cause)
				}
			}
		}
	})
}

// peerBase is the UDR's API root as the UDM resolves it.
func peerBase(t *testing.T, n *NF) string {
	t.Helper()
	b, err := n.udr.nrf.ServiceURI(context.Background(), models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A UDR without the reservation (another core's) is asked once, then
// the standard way only.
func TestUDRWithoutReservationIsAskedTheStandardWay(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		f := newFakeUDR()
		f.add(t, "imsi-208930000000001", subscriber("000000000020"))
		counted, reservations := countRequests(f.handler(), sqnReservationPath)
		_, base, c := newUDMOn(t, tr, counted)
		sqnMS := uint64(0x20)
		for range 4 {
			res, err := generate(c, base, "imsi-208930000000001", nil)
			if err != nil {
				t.Fatal(err)
			}
			sqnMS = ueAccepts(t, res, testOPc, sqnMS)
		}
		if got := reservations.Load(); got != 1 {
			t.Fatalf("%d reservations asked of a UDR without them, want 1", got)
		}
		if got := len(f.written("imsi-208930000000001")); got != 4 {
			t.Fatalf("%d SQN patches, want 4", got)
		}
	})
}

// A re-synchronisation (TS 33.102 6.3.5) moves SQN_HE to SQN_MS+1 the
// standard way; the reservations after it go on from there.
func TestReservationAfterResynchronisation(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		u, n, env := udmOnRestartableUDR(t, tr)
		base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
		const supi = "imsi-" + config.DefaultFirstIMSI
		const sqnMS = 0x5000 // the USIM saw this SQN elsewhere
		res, err := generate(c, base, supi, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = security.VerifyChallenge(testK, testOPc, mustHex(res.AuthenticationVector.Rand), mustHex(res.AuthenticationVector.Autn), sqnBytes(sqnMS))
		var sf *security.SynchFailure
		if !asSynch(err, &sf) {
			t.Fatalf("UE with SQN_MS %x: %v, want a synchronisation failure", sqnMS, err)
		}
		resync := &models.ResynchronizationInfo{Rand: res.AuthenticationVector.Rand, Auts: hex.EncodeToString(sf.AUTS)}
		if res, err = generate(c, base, supi, resync); err != nil {
			t.Fatal(err)
		}
		got := ueAccepts(t, res, testOPc, sqnMS)
		if res, err = generate(c, base, supi, nil); err != nil {
			t.Fatal(err)
		}
		next := ueAccepts(t, res, testOPc, got)
		if got != sqnMS+1 || next != sqnMS+2 {
			t.Fatalf("SQNs after resync %x then %x, want %x then %x", got, next, sqnMS+1, sqnMS+2)
		}
		if u.count("PATCH /authentication-subscription") != 1 || u.count("POST /l25gc-sqn-reservation") != 2 {
			t.Fatalf("UDR requests %v: want the resync's PATCH and two reservations", u.counts)
		}
	})
}
