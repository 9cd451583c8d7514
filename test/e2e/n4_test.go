package e2e

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// UPF-C as `l25gc up` runs it serves N4 where the config says: an SMF's
// client sets up the association and establishes, modifies and deletes a
// session, and UPF-C's /metrics count the PFCP messages and sessions.
func TestUPFCServesN4(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) {
		c.NFs = []string{"upf-c"} // N4 needs no other NF
		c.SBI.NRFURI, c.SBI.OAuth2 = "http://127.0.0.1:1", "off"
	}))
	startCore(t, cfg, path)

	c := pfcpx.NewClient(pfcpx.ClientConfigFor(cfg, nil))
	defer c.Close()
	upf := pfcpx.Addr(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := n4Session("10.60.0.1")
	est, err := c.Establish(ctx, upf, s)
	if err != nil {
		t.Fatalf("establish at %s: %v", upf, err)
	}
	if f := est.FTEIDs[1]; f.IPv4.String()+"/24" != cfg.UPF.N3.IP || f.TEID == 0 {
		t.Fatalf("F-TEID %+v, want one on upf.n3.ip %s", f, cfg.UPF.N3.IP)
	}
	far := s.FARs[1]
	far.Action = rules.ActionBuffer | rules.ActionNotify
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{far}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, upf, est.UPSEID); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get("http://" + cfg.Addr(cfg.UPF.C.MetricsPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`l25gc_upfc_pfcp_messages_total{cause="1",direction="out",type="session_establishment_response"} 1`,
		`l25gc_upfc_pfcp_messages_total{cause="1",direction="out",type="session_deletion_response"} 1`,
		"l25gc_upfc_sessions 0",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("UPF-C's /metrics lack %q", want)
		}
	}
}

// n4Session is a PDU session's rules for UE address ue: one tunnel up,
// one down.
func n4Session(ue string) *rules.Session {
	addr := netip.MustParseAddr(ue)
	return &rules.Session{Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: 1}, UEIPv4: addr, OuterHeaderRemoval: true, FARID: 1},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: addr, FARID: 2},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 1, PeerIPv4: netip.MustParseAddr("10.100.0.2")}},
		},
	}}
}

// UPF-C killed (SIGKILL) is started again by the supervisor and serves
// N4 at once; the SMF's client, whose association went with the old
// process, sets it up again on cause 72 and its next establishment goes
// through; the session established before the kill was recovered from
// the shared tables (upf/c's TestRestartRecoversSessionsFromTheTable), so
// its UE address stays taken and its deletion succeeds.
func TestKilledUPFCIsRestartedAndServesN4(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) {
		c.NFs = []string{"upf-c"}
		c.SBI.NRFURI, c.SBI.OAuth2 = "http://127.0.0.1:1", "off"
	}))
	requirePortsFree(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	core, err := node.Start(ctx, cfg, node.Options{Binary: binary, ConfigPath: path, Restart: true, RestartBackoff: 10 * time.Millisecond})
	if err != nil {
		dumpLogs(t, cfg)
		t.Fatalf("core did not start: %v", err)
	}
	t.Cleanup(func() {
		core.Stop()
		if t.Failed() {
			dumpLogs(t, cfg)
		}
	})
	c := pfcpx.NewClient(pfcpx.ClientConfigFor(cfg, nil))
	defer c.Close()
	upf := pfcpx.Addr(cfg)
	before, err := c.Establish(ctx, upf, n4Session("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	old := core.Processes()[0]
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		p := core.Processes()[0]
		if p.PID != old.PID && p.Restarts == 1 {
			if _, err := c.Establish(ctx, upf, n4Session("10.60.0.2")); err == nil {
				break
			}
		}
		if ctx.Err() != nil { // a bound on a hang, not a measurement
			t.Fatalf("no establishment accepted after UPF-C was killed: %+v", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.Delete(ctx, upf, before.UPSEID); err != nil {
		t.Errorf("deleting the session established before the kill: %v", err)
	}
}
