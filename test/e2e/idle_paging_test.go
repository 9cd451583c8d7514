package e2e

// Idle mode end to end (issue 12): a UE with a session goes CM-IDLE; a
// real downlink packet from the data network is buffered in UPF-U, the
// core pages the UE, its Service Request brings the user plane back and
// UPF-U sends what it buffered first, in order (TS 23.502 4.2.6, 4.2.3.3).
// Each test here runs UPF-U: run them under `flock /work/userplane.lock`
// where cores share the lab's veths.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
)

// awaitOutput waits until the simulator printed want.
func (h *heldUE) awaitOutput(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(h.out.String(), want); time.Sleep(100 * time.Millisecond) {
		select {
		case <-h.exited:
			t.Fatalf("ransim ended before printing %q: %v\n%s", want, h.err, h.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ransim did not print %q in 60 s:\n%s", want, h.out.String())
		}
	}
}

// idleUE is a UE with PDU session 1 and its TUN that used the session
// (UPF-U resolved the gNB's N3 address, as with any UE that had traffic)
// and was then released to CM-IDLE.
func idleUE(t *testing.T, path string, more ...string) *heldUE {
	t.Helper()
	ue := holdUE(t, path, append([]string{"--idle", "--idle-after", "3s"}, more...)...)
	b, _ := inNetns("l25gc-ue1", "ping", "-c", "3", "-i", "0.2", "-W", "1", dnAddr).CombinedOutput()
	if received(string(b)) == 0 {
		t.Fatalf("ping %s from the UE before it went idle: no answer\n%s", dnAddr, b)
	}
	ue.awaitOutput(t, "holding 1 sessions")
	return ue
}

// pingOrder is the icmp_seq of each answer in the order ping printed them.
func pingOrder(out string) []int {
	var seqs []int
	for _, m := range regexp.MustCompile(`icmp_seq=(\d+) `).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		seqs = append(seqs, n)
	}
	return seqs
}

// n2Port is the AMF's N2 port (SCTP over UDP here).
func n2Port(cfg *config.Config) int {
	_, p, _ := strings.Cut(cfg.AMF.NGAP.Addr, ":")
	n, _ := strconv.Atoi(p)
	return n
}

// A ping from the data network to a CM-IDLE UE is answered, every echo
// request of a burst: the first ones were buffered in UPF-U while the core
// paged the UE, and UPF-U sent them first and in order once the UE's
// Service Request set its tunnel up again. On N2 tshark dissects the
// Paging, the Service Request (also inside its NAS message container) and
// the Service Accept with no malformed packet.
func TestPingWakesAnIdleUEAndLosesNothing(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.AMF.NAS.Ciphering = []string{"NEA0"} // the dissector reads the NAS
	})
	startCore(t, cfg, path)
	capture := startCapture(t, n2Port(cfg))
	ue := idleUE(t, path)

	const sent = 20
	// Root's ping may send every 5 ms: several requests arrive while the
	// UE is paged and wait in UPF-U's buffer (64 per session by default).
	out, lost := pingEvery("l25gc-dn", ue.addr, sent, "0.005")
	if len(lost) != 0 {
		t.Errorf("ping of the idle UE %s: %d of %d answered (lost: %v)\n%s", ue.addr, sent-len(lost), sent, lost, out)
	}
	if order := pingOrder(out); !slices.IsSorted(order) {
		t.Errorf("answers out of order: %v", order)
	}
	if !strings.Contains(ue.out.String(), "paged, Service Accept") {
		t.Errorf("the UE was not paged:\n%s", ue.out.String())
	}
	// The first requests waited in UPF-U, and all of them left it.
	buffered, flushed := bufferEvents(t, cfg, "buffered"), bufferEvents(t, cfg, "flushed")
	if buffered < 1 || flushed != buffered || bufferEvents(t, cfg, "overflow") != 0 {
		t.Errorf("UPF-U buffered %v echo requests and flushed %v (overflow %v): want at least the first, all flushed",
			buffered, flushed, bufferEvents(t, cfg, "overflow"))
	}
	if t.Failed() {
		logUPFMetrics(t, cfg)
	}
	ue.release(t)
	awaitNoUPFSessions(t, cfg)
	capture.stop(t)

	var procs, gmm []string
	for _, p := range capture.dissect(t) {
		procs = append(procs, p.procedures...)
		gmm = append(gmm, p.nasTypes...)
	}
	hex := func(v uint8) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
	for what, want := range map[string]bool{
		"Paging":                     slices.Contains(procs, strconv.FormatInt(ngapType.ProcedureCodePaging, 10)),
		"UE Context Release Request": slices.Contains(procs, strconv.FormatInt(ngapType.ProcedureCodeUEContextReleaseRequest, 10)),
		"Service Request":            slices.Contains(gmm, hex(nas.MsgTypeServiceRequest)),
		"Service Accept":             slices.Contains(gmm, hex(nas.MsgTypeServiceAccept)),
	} {
		if !want {
			t.Errorf("no %s on N2", what)
		}
	}
	if t.Failed() {
		t.Logf("the capture:\n%s", capture.summary())
	}
}

// logUPFMetrics puts UPF-U's buffer, report and drop counters in the log of
// a failing test.
func logUPFMetrics(t *testing.T, cfg *config.Config) {
	resp, err := http.Get("http://" + cfg.Addr(cfg.UPF.U.MetricsPort) + "/metrics")
	if err != nil {
		t.Logf("UPF-U's /metrics: %v", err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "l25gc_upf_buffer") || strings.HasPrefix(l, "l25gc_upf_drops_total") || strings.HasPrefix(l, "l25gc_upf_downlink_data") {
			lines = append(lines, l)
		}
	}
	t.Logf("UPF-U's counters:\n%s", strings.Join(lines, "\n"))
}

// A UE-triggered Service Request after idle restores traffic both ways.
func TestServiceRequestAfterIdleRestoresTraffic(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withUserPlane)
	startCore(t, cfg, path)
	ue := holdUE(t, path, "--idle", "--wake")
	ue.awaitOutput(t, "holding 1 sessions")
	for _, want := range []string{bench.ProcedureANRelease, bench.ProcedureServiceRequest} {
		if !strings.Contains(ue.out.String(), want+": 1/1 done, 0 failed") {
			t.Errorf("ransim's %s failed:\n%s", want, ue.out.String())
		}
	}
	// Every echo: UPF-U holds a packet while it resolves the gNB by ARP.
	if b, lost := pingEvery("l25gc-ue1", dnAddr, 5, "0.2"); len(lost) != 0 {
		t.Errorf("ping %s from the woken UE: %d of 5 answered (lost: %v)\n%s", dnAddr, 5-len(lost), lost, b)
	}
	if strings.Contains(ue.out.String(), "paged") {
		t.Errorf("a woken UE was paged:\n%s", ue.out.String())
	}
	ue.release(t)
	awaitNoUPFSessions(t, cfg)
}

// 100 CM-IDLE UEs, each paged by one downlink datagram, all at once:
// `l25gc bench paging` against the running core reports no failure of
// either measurement.
func TestHundredIdleUEsArePagedAtOnce(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.Subscribers[0].Count = 100
	})
	startCore(t, cfg, path)
	results, printed := benchPaging(t, path, cfg.AMF.NGAP.Addr, "--ues", "100", "--concurrency", "100", "--warmup", "0")
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Procedure] = true
		if r.UEs != 100 || r.Succeeded != 100 || r.Failed != 0 {
			t.Errorf("%s: %d of %d succeeded, %d failed: %v", r.Procedure, r.Succeeded, r.UEs, r.Failed, r.Errors)
		}
	}
	if !seen[bench.ProcedurePaging] || !seen[bench.ProcedurePagingFirstPacket] {
		t.Errorf("results name %v, want %s and %s", seen, bench.ProcedurePaging, bench.ProcedurePagingFirstPacket)
	}
	if t.Failed() {
		t.Logf("bench paging printed:\n%s", printed)
	}
}

// Paging a UE that never answers ends after T3513's retransmissions
// (TS 24.501 5.6.2.2.1): the gNB sees exactly 1 + paging_retransmissions
// Pagings per packet, a later packet pages the UE again (the SMF re-armed
// buffering), and UPF-U drops what it buffered and counts it, holding
// nothing at the end.
func TestUnansweredPagingEndsAndTheBufferIsDropped(t *testing.T) {
	const retransmissions = 2
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.AMF.NAS.T3513 = 300 * time.Millisecond
		c.AMF.NAS.PagingRetransmissions = retransmissions
	})
	startCore(t, cfg, path)
	ue := idleUE(t, path, "--ignore-paging")
	pagings := func() int { return strings.Count(ue.out.String(), "paged, not answering") }
	failed := func() float64 { return amfMetric(t, cfg, `l25gc_amf_paging_total{result="failure"}`) }
	discardedBefore := bufferEvents(t, cfg, "discarded")

	per := 1 + retransmissions
	for round := 1; round <= 2; round++ {
		// One echo request, never answered: the UE does not hear the paging.
		_ = inNetns("l25gc-dn", "ping", "-c", "1", "-W", "1", ue.addr).Run()
		// The AMF gives up after the last T3513 and tells the SMF; every
		// Paging it sent reached the gNB before that.
		awaitCondition(t, fmt.Sprintf("paging failure %d at the AMF", round), func() bool { return failed() >= float64(round) })
		// The simulator prints a Paging when it reads it: a ransim process
		// stalled past the last T3513 (300 ms) on a loaded CI machine
		// prints it after the AMF gave up. Too few still fails at the
		// bound, too many below.
		eventually(func() bool { return pagings() >= round*per })
		if n := pagings(); n != round*per {
			t.Errorf("after %d unanswered packets the gNB saw %d Pagings, want %d (1 + %d retransmissions each)", round, n, round*per, retransmissions)
		}
	}
	if !eventually(func() bool {
		return bufferEvents(t, cfg, "discarded") >= discardedBefore+2 && upfMetric(t, cfg, "l25gc_upf_buffered_packets") == 0
	}) {
		logUPFMetrics(t, cfg)
		t.Error("UPF-U did not drop both buffered packets of the UE whose paging failed")
	}
	ue.release(t)
	awaitNoUPFSessions(t, cfg)
}

// awaitCondition polls ok for up to 30 s.
func awaitCondition(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !eventually(ok) {
		t.Fatalf("no %s within 30 s", what)
	}
}

// eventually polls ok for up to 30 s and says whether it held.
func eventually(ok func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// upfMetric reads one sample of UPF-U's /metrics, by its name with labels
// (e.g. l25gc_upf_buffer_packets_total{event="flushed"}).
func upfMetric(t *testing.T, cfg *config.Config, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + cfg.Addr(cfg.UPF.U.MetricsPort) + "/metrics")
	if err != nil {
		t.Fatalf("UPF-U's /metrics: %v", err)
	}
	defer resp.Body.Close()
	return metricIn(t, resp.Body, sample)
}

// bufferEvents is UPF-U's count of downlink buffer events of a kind:
// buffered, flushed, overflow, discarded.
func bufferEvents(t *testing.T, cfg *config.Config, event string) float64 {
	t.Helper()
	return upfMetric(t, cfg, `l25gc_upf_buffer_packets_total{event="`+event+`"}`)
}

// benchPaging runs `l25gc bench paging` against the running core at amf
// (config path) with args and returns its JSON results and what it printed.
func benchPaging(t *testing.T, path, amf string, args ...string) ([]bench.Result, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "paging.json")
	args = append([]string{"bench", "paging", "--config", path, "--amf", amf, "--json", out}, args...)
	b, err := exec.Command(binary, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("l25gc %s: %v\n%s", strings.Join(args[:2], " "), err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var results []bench.Result
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	return results, b
}
