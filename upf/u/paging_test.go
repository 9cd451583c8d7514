package u_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/sbi"
	upfc "github.com/l25gc/l25gc/upf/c"
	"github.com/l25gc/l25gc/upf/rules"
)

// The UPF's whole part of network-triggered service request (TS 23.502
// 4.2.3.3) with the real processes' code: UPF-U buffers the downlink
// packets of an idle session, UPF-C sends the SMF (a pfcpx.Client) one
// Session Report (DLDR), and when the SMF points the FAR at the gNB again
// the packets reach it in their original order.
func TestPagingThroughUPFCAndUPFU(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	cfg := config.Default()
	cfg.DataDir, cfg.LogDir = t.TempDir(), t.TempDir()
	cfg.SBI.Transport = "tcp"
	cfg.UPF.C.PFCPAddr = "127.0.0.1:0"
	env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_UPF)
	u, err := upfc.NewWithOptions(env, upfc.Options{Table: l.table})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer u.Stop(context.Background())
	upf := u.N4Addrs()[0]

	smf := pfcpx.NewClient(pfcpx.ClientConfig{NodeID: netip.MustParseAddr("127.0.0.1"), UDPAddr: "127.0.0.1:0"})
	defer smf.Close()
	reports := make(chan *rules.Report, 4)
	smf.OnReport(func(_ context.Context, _ string, r *rules.Report) uint8 { reports <- r; return pfcpx.CauseAccepted })
	s := idle(0, ue1)
	s.PDRs[0].LocalFTEID = &rules.FTEID{Choose: true, ChooseID: 1}
	est, err := smf.Establish(context.Background(), upf, s)
	if err != nil {
		t.Fatal(err)
	}

	sent := time.Now()
	for i := range 3 {
		l.dn.send(t, toUE(n6, ue1, fmt.Sprintf("p%d", i+1)))
	}
	var r *rules.Report
	select {
	case r = <-reports:
	case <-time.After(wait):
		t.Fatalf("no Session Report (stats %+v)", l.table.Stats().Buffer)
	}
	t.Logf("first packet to Session Report at the SMF: %v", time.Since(sent))
	if r.CPSEID != s.CPSEID || r.DownlinkData == nil || r.DownlinkData.PDRIDs[0] != 2 || r.DownlinkData.QFIs[0] != qfi {
		t.Fatalf("report %+v, want the DLDR of PDR 2 QFI %d", r, qfi)
	}
	fwd := forwarding(s, gnbTEID).FARs[1]
	if _, err := smf.Modify(context.Background(), upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{fwd}}}); err != nil {
		t.Fatal(err)
	}
	if got := l.received(t, 3); strings.Join(got, " ") != "p1 p2 p3" {
		t.Fatalf("gNB received %v, want p1 p2 p3", got)
	}
	t.Logf("first packet sent to all three at the gNB: %v", time.Since(sent))
	select {
	case r := <-reports:
		t.Fatalf("a second report %+v for one paging", r)
	default:
	}
}
