package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// upfMetricsPage is what UPF-U's /metrics says after some traffic (the
// families and labels of upf/shm.Collector).
const upfMetricsPage = `# TYPE l25gc_upf_port_packets_total counter
l25gc_upf_port_packets_total{dir="rx",port="n3"} 120
l25gc_upf_port_packets_total{dir="tx",port="n3"} 118
l25gc_upf_port_packets_total{dir="rx",port="n6"} 118
l25gc_upf_port_packets_total{dir="tx",port="n6"} 117
# TYPE l25gc_upf_port_bytes_total counter
l25gc_upf_port_bytes_total{dir="rx",port="n3"} 15360
l25gc_upf_port_bytes_total{dir="tx",port="n3"} 14396
l25gc_upf_port_bytes_total{dir="rx",port="n6"} 11564
l25gc_upf_port_bytes_total{dir="tx",port="n6"} 11466
# TYPE l25gc_upf_replies_total counter
l25gc_upf_replies_total{kind="arp",port="n3"} 1
l25gc_upf_replies_total{kind="gtpu_echo",port="n3"} 0
l25gc_upf_replies_total{kind="error_indication",port="n3"} 2
l25gc_upf_replies_total{kind="arp",port="n6"} 3
# TYPE l25gc_upf_drops_total counter
l25gc_upf_drops_total{reason="unknown_teid"} 2
l25gc_upf_drops_total{reason="no_pdr"} 0
l25gc_upf_drops_total{reason="not_gtpu"} 5
# TYPE l25gc_upf_sessions gauge
l25gc_upf_sessions 10
# TYPE l25gc_upf_buffered_packets gauge
l25gc_upf_buffered_packets 3
# TYPE l25gc_upf_buffer_packets_total counter
l25gc_upf_buffer_packets_total{event="buffered"} 7
l25gc_upf_buffer_packets_total{event="flushed"} 4
l25gc_upf_buffer_packets_total{event="overflow"} 0
l25gc_upf_buffer_packets_total{event="discarded"} 0
# TYPE l25gc_upf_downlink_data_reports_total counter
l25gc_upf_downlink_data_reports_total 2
# TYPE l25gc_upf_end_markers_total counter
l25gc_upf_end_markers_total 1
# TYPE l25gc_upf_naps_total counter
l25gc_upf_naps_total{ended_by="packet"} 6
l25gc_upf_naps_total{ended_by="other"} 4000
`

func TestParseUPFMetrics(t *testing.T) {
	c, err := parseUPFMetrics(strings.NewReader(upfMetricsPage))
	if err != nil {
		t.Fatal(err)
	}
	n3, n6 := c.Ports["n3"], c.Ports["n6"]
	if n3 == nil || n6 == nil {
		t.Fatalf("ports %v, want n3 and n6", c.Ports)
	}
	if n3.RxPackets != 120 || n3.TxPackets != 118 || n3.RxBytes != 15360 || n3.TxBytes != 14396 || n3.Replies["error_indication"] != 2 {
		t.Errorf("n3 %+v", *n3)
	}
	if n6.RxPackets != 118 || n6.TxBytes != 11466 || n6.Replies["arp"] != 3 {
		t.Errorf("n6 %+v", *n6)
	}
	if c.Drops["unknown_teid"] != 2 || c.Drops["not_gtpu"] != 5 || c.Sessions != 10 {
		t.Errorf("drops %v sessions %d", c.Drops, c.Sessions)
	}
}

func TestParseUPFMetricsRefusesAnotherPage(t *testing.T) {
	for name, page := range map[string]string{
		"another NF": "# TYPE l25gc_smf_sm_contexts gauge\nl25gc_smf_sm_contexts 3\n",
		"not text":   "<html>404</html>\n",
	} {
		if _, err := parseUPFMetrics(strings.NewReader(page)); err == nil {
			t.Errorf("%s: parsed as UPF-U's counters", name)
		}
	}
}

func TestFormatUPFStatus(t *testing.T) {
	c, err := parseUPFMetrics(strings.NewReader(upfMetricsPage))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := formatUPFStatus(&out, 4242, upfPortsOf(config.Default()), c); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"UPF-U pid 4242: 10 sessions in the rule tables",
		"drops: not_gtpu 5, unknown_teid 2\n", // zero reasons left out, sorted
		"downlink buffer: 3 held now; buffered 7, flushed 4; 2 downlink data reports, 1 end markers\n",
		"idle naps ended by: other 4000, packet 6\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	n3 := rowOf(got, "n3")
	for _, want := range []string{"iface=l25gc-n3", "10.100.0.1/24", "120", "15360", "118", "14396", "arp 1, error_indication 2"} {
		if !strings.Contains(n3, want) {
			t.Errorf("n3 row %q has no %q", n3, want)
		}
	}
	if n6 := rowOf(got, "n6"); !strings.Contains(n6, "10.200.0.1/24") || !strings.Contains(n6, "11466") {
		t.Errorf("n6 row %q", n6)
	}
}

func TestUPFPortsOfNamedDevices(t *testing.T) {
	cfg := config.Default()
	cfg.UPF.N3 = config.UPFPort{Port: "0000:03:00.0", IP: "192.0.2.10/24", Gateway: "192.0.2.1"}
	ports := upfPortsOf(cfg)
	if ports[0].Device != "0000:03:00.0" || ports[0].Address != "192.0.2.10/24" {
		t.Errorf("n3 %+v", ports[0])
	}
	if !strings.Contains(ports[1].Device, "iface=l25gc-n6") {
		t.Errorf("n6 without upf.n6.port: %+v, want the lab veth", ports[1])
	}
}

func rowOf(table, first string) string {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return line
		}
	}
	return ""
}

// TestUPFStatusFromMetricsServer reads a metrics endpoint serving the real
// collector over real tables (in a temporary file: no hugepages, no
// UPF-U) with one session installed.
func TestUPFStatusFromMetricsServer(t *testing.T) {
	tab, err := shm.Open(shm.Config{MaxSessions: 4, Dir: t.TempDir(), Prefix: "status"})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if err := tab.Install(oneSession()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(shm.NewCollector(tab))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	st := &node.State{NFs: []*node.Process{{Name: "upf-u", PID: os.Getpid(), MetricsAddr: strings.TrimPrefix(srv.URL, "http://")}}}
	var out bytes.Buffer
	if err := printUPFStatus(&out, srv.Client(), st, config.Default()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "1 sessions in the rule tables") || rowOf(got, "n3") == "" ||
		!strings.Contains(got, "drops: none") {
		t.Errorf("status from the collector:\n%s", got)
	}
}

func oneSession() *rules.Session {
	ue := netip.MustParseAddr("10.60.0.1")
	return &rules.Session{UPSEID: 1, CPSEID: 1, CPAddr: netip.MustParseAddr("127.0.0.1"), Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, UEIPv4: ue, OuterHeaderRemoval: true, FARID: 1,
				LocalFTEID: &rules.FTEID{TEID: 1, IPv4: netip.MustParseAddr("10.100.0.1")}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ue, FARID: 2},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
				OuterHeader: &rules.OuterHeader{TEID: 7, PeerIPv4: netip.MustParseAddr("10.100.0.2")}},
		},
	}}
}

// TestUPFStatusSaysWhyNoCounters: each case gets one line saying why.
func TestUPFStatusSaysWhyNoCounters(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no `true` to get a pid that is gone:", err)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	client := &http.Client{Timeout: time.Second}
	for _, tc := range []struct {
		name string
		nfs  []*node.Process
		want string
	}{
		{"no upf-u on the node", []*node.Process{{Name: "amf", PID: os.Getpid()}}, "UPF-U: not run by this node"},
		{"process gone", []*node.Process{{Name: "upf-u", PID: gone.Process.Pid}}, "UPF-U: not running"},
		{"metrics silent", []*node.Process{{Name: "upf-u", PID: os.Getpid(), MetricsAddr: deadAddr}}, "shows no counters: UPF-U does not answer"},
	} {
		var out bytes.Buffer
		if err := printUPFStatus(&out, client, &node.State{NFs: tc.nfs}, config.Default()); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); !strings.Contains(got, tc.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%s: %q, want one line with %q", tc.name, got, tc.want)
		}
	}
}
