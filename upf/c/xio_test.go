package upfc

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/xio"
)

// On a node whose SBI runs over X-IO, UPF-C serves N4 over an X-IO
// datagram socket named like its UDP address, and an SMF there reaches
// it at pfcpx.Addr: the whole session lifecycle runs over shared memory,
// and the UDP side keeps serving SMFs of other nodes.
func TestN4OverXIO(t *testing.T) {
	table := rules.NewMemTable()
	cfg := testConfig(t)
	cfg.SBI.Transport = "xio"
	cfg.UPF.C.PFCPAddr = freeUDPAddr(t)
	before, _, _ := xio.PoolInUse()
	u := startUPFC(t, cfg, table)
	upf := pfcpx.Addr(cfg)
	if upf != "xio:"+cfg.UPF.C.PFCPAddr || !slices.Contains(u.N4Addrs(), upf) || !slices.Contains(u.N4Addrs(), "udp:"+cfg.UPF.C.PFCPAddr) {
		t.Fatalf("UPF-C serves N4 at %v; the SMF would dial %s", u.N4Addrs(), upf)
	}
	c := newClient(t)
	ctx := context.Background()
	est, err := c.Establish(ctx, upf, pduSession("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Create: qosFlow()}); err != nil {
		t.Fatal(err)
	}
	if s, _ := table.Session(est.UPSEID); len(s.PDRs) != 4 {
		t.Fatalf("after the modification over X-IO: %d PDRs", len(s.PDRs))
	}
	if _, err := c.Heartbeat(ctx, upf); err != nil {
		t.Fatalf("heartbeat over X-IO: %v", err)
	}
	// An SMF elsewhere, over UDP, meets the same sessions.
	if _, err := c.Delete(ctx, "udp:"+cfg.UPF.C.PFCPAddr, est.UPSEID); err != nil {
		t.Fatalf("delete over UDP a session established over X-IO: %v", err)
	}
	if _, err := c.Delete(ctx, upf, est.UPSEID); causeOf(err) != pfcpx.CauseSessionNotFound {
		t.Fatalf("second delete over X-IO: %v, want cause 65", err)
	}
	c.Close()
	u.Stop(ctx)
	// A datagram still in a ring when its socket closed comes back to the
	// pool as the receiver drains: wait for it, within a bound on a leak.
	after, _, _ := xio.PoolInUse()
	for deadline := time.Now().Add(2 * time.Second); after != before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		after, _, _ = xio.PoolInUse()
	}
	if after != before {
		t.Fatalf("%d shared-memory buffers in use 2 s after N4 closed, %d before", after, before)
	}
}

// freeUDPAddr is a loopback UDP address nobody holds now.
func freeUDPAddr(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

// An SMF whose UPF-C is not there over X-IO learns it at once, not after
// T1 x N1: nobody holds the socket name.
func TestN4OverXIOToNobody(t *testing.T) {
	c := newClient(t)
	_, err := c.Establish(context.Background(), "xio:no-upf-here", pduSession("10.60.0.1"))
	if err == nil || causeOf(err) != 0 {
		t.Fatalf("establishment at no X-IO socket: %v, want a transport error", err)
	}
}
