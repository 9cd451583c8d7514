package shm

import (
	"errors"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/upf/rules"
)

var (
	ue  = netip.MustParseAddr("10.60.0.7")
	n3  = netip.MustParseAddr("10.100.0.1")
	gnb = netip.MustParseAddr("10.100.0.2")
	smf = netip.MustParseAddr("127.0.0.1")
)

// openTemp opens tables in a file of the test's own directory (tmpfs or
// disk: the tables need no hugepages to be tested).
func openTemp(t *testing.T, max int) (*Table, Config) {
	cfg := Config{MaxSessions: max, Dir: t.TempDir(), Prefix: "test"}
	tab, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tab, cfg
}

func sessionWith(seid uint64, ue netip.Addr, teid uint32) *rules.Session {
	return &rules.Session{UPSEID: seid, CPSEID: seid << 8, CPAddr: smf, Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{TEID: teid, IPv4: n3},
				UEIPv4: ue, NetworkInstance: "internet", OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ue, NetworkInstance: "internet",
				FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 3, Precedence: 10, Source: rules.Core, UEIPv4: ue, NetworkInstance: "internet",
				SDFFilters: []string{"permit out 17 from 10.200.0.2 5201 to assigned", "permit out ip from 10.0.0.0/8 to assigned 1000-2000"},
				FARID:      2, QERIDs: []uint32{2}, URRIDs: []uint32{1, 2}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: "internet"},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 0x77, PeerIPv4: gnb}},
		},
		QERs: []rules.QER{{ID: 1, QFI: 9, GateULOpen: true, GateDLOpen: true, MBRUL: 1e8, MBRDL: 2e8},
			{ID: 2, QFI: 5, GateDLOpen: true, GBRDL: 1e6, MBRDL: 5e6, Weight: 3}},
		URRs: []rules.URR{{ID: 1}, {ID: 2, VolumeThreshold: 1 << 20}},
	}}
}

// canonical is s as Sessions gives it back: SDF filters in canonical form.
func canonical(s *rules.Session) rules.Session {
	c := *s
	c.PDRs = append([]rules.PDR(nil), s.PDRs...)
	for i := range c.PDRs {
		var out []string
		for _, f := range c.PDRs[i].SDFFilters {
			sdf, _ := ParseSDF(f, c.PDRs[i].UEIPv4)
			out = append(out, sdf.String())
		}
		c.PDRs[i].SDFFilters = out
	}
	return c
}

func TestInstalledSessionsReadBackWhole(t *testing.T) {
	tab, _ := openTemp(t, 16)
	a, b := sessionWith(1, ue, 0x10), sessionWith(2, netip.MustParseAddr("10.60.0.8"), 0x11)
	for _, s := range []*rules.Session{a, b} {
		if err := tab.Install(s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tab.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	want := []rules.Session{canonical(a), canonical(b)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sessions\n got %+v\nwant %+v", got, want)
	}
}

// A restarted UPF-C opens the same file and finds its sessions (issue 11:
// UPF-C recovers them from shared memory).
func TestReopenedTablesRecoverSessions(t *testing.T) {
	tab, cfg := openTemp(t, 16)
	s := sessionWith(42, ue, 0x10)
	if err := tab.Install(s); err != nil {
		t.Fatal(err)
	}
	again, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := again.Sessions()
	if len(got) != 1 || !reflect.DeepEqual(got[0], canonical(s)) {
		t.Fatalf("recovered %+v", got)
	}
	if err := again.Remove(42); err != nil {
		t.Fatal(err)
	}
	if err := again.Install(sessionWith(43, ue, 0x10)); err != nil {
		t.Fatalf("the freed slot and keys are usable again: %v", err)
	}
}

func TestOpenRefusesOtherSize(t *testing.T) {
	_, cfg := openTemp(t, 16)
	cfg.MaxSessions = 32
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "upf.max_sessions is 32") {
		t.Fatalf("err %v, want it to name the size mismatch", err)
	}
}

func cause(err error) uint8 {
	var c *rules.CauseError
	if errors.As(err, &c) {
		return c.Cause
	}
	return 0
}

func TestInstallRejectsBadRulesNamingTheField(t *testing.T) {
	tab, _ := openTemp(t, 4)
	for name, tc := range map[string]struct {
		edit func(*rules.Session)
		want string
	}{
		"unknown FAR":      {func(s *rules.Session) { s.PDRs[0].FARID = 9 }, "pdr 1: far 9 is not in the session"},
		"unknown QER":      {func(s *rules.Session) { s.PDRs[1].QERIDs = []uint32{7} }, "pdr 2: qer 7 is not in the session"},
		"bad SDF":          {func(s *rules.Session) { s.PDRs[2].SDFFilters = []string{"permit out 17 from 10.1.1 to assigned"} }, `pdr 3: sdf filter 1: flow description "permit out 17 from 10.1.1 to assigned": from address "10.1.1"`},
		"choose TEID":      {func(s *rules.Session) { s.PDRs[0].LocalFTEID = &rules.FTEID{Choose: true} }, "pdr 1: local F-TEID: TEID 0"},
		"two UE addresses": {func(s *rules.Session) { s.PDRs[1].UEIPv4 = netip.MustParseAddr("10.60.0.9") }, "pdr 2: UE address 10.60.0.9, another PDR has 10.60.0.7"},
		"QFI":              {func(s *rules.Session) { s.QERs[0].QFI = 64 }, "qer 1: QFI 64"},
		"weight":           {func(s *rules.Session) { s.QERs[1].Weight = rules.MaxWeight + 1 }, "qer 2: weight 101: want 1-100"},
		"too many URRs": {func(s *rules.Session) {
			s.URRs = []rules.URR{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}}
		}, "urr 5: at most 4 URRs"},
	} {
		t.Run(name, func(t *testing.T) {
			s := sessionWith(1, ue, 0x10)
			tc.edit(s)
			err := tab.Install(s)
			if cause(err) != causeRuleCreationFailed || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want cause 69 naming %q", err, tc.want)
			}
		})
	}
	if n := tab.Len(); n != 0 {
		t.Fatalf("%d sessions after only bad installs", n)
	}
}

func TestKeysBelongToOneSession(t *testing.T) {
	tab, _ := openTemp(t, 4)
	if err := tab.Install(sessionWith(1, ue, 0x10)); err != nil {
		t.Fatal(err)
	}
	if err := tab.Install(sessionWith(2, netip.MustParseAddr("10.60.0.99"), 0x10)); !strings.Contains(errString(err), "TEID 0x10 belongs to another session") {
		t.Errorf("same TEID: %v", err)
	}
	if err := tab.Install(sessionWith(3, ue, 0x20)); !strings.Contains(errString(err), "UE address 10.60.0.7 belongs to another session") {
		t.Errorf("same UE address: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestFullTablesAndUnknownSessionsGetPFCPCauses(t *testing.T) {
	tab, _ := openTemp(t, 1)
	if err := tab.Install(sessionWith(1, ue, 0x10)); err != nil {
		t.Fatal(err)
	}
	if err := tab.Install(sessionWith(2, netip.MustParseAddr("10.60.0.8"), 0x11)); cause(err) != 75 {
		t.Errorf("beyond max_sessions: %v, want cause 75 (No resources available, TS 29.244 8.2.1)", err)
	}
	if err := tab.Remove(99); cause(err) != causeSessionNotFound {
		t.Errorf("remove unknown: %v, want cause 65", err)
	}
	if _, err := tab.Usage(99); cause(err) != causeSessionNotFound {
		t.Errorf("usage unknown: %v, want cause 65", err)
	}
}

// A URR kept by a modification keeps its index and epoch (its counts carry
// on); one that is new gets a new epoch (its counts start at zero).
func TestModificationKeepsURRCounts(t *testing.T) {
	tab, _ := openTemp(t, 2)
	s := sessionWith(1, ue, 0x10)
	if err := tab.Install(s); err != nil {
		t.Fatal(err)
	}
	before := tab.slotRules(1)
	s.URRs = []rules.URR{{ID: 2}, {ID: 3}} // 1 removed, 2 kept, 3 new
	s.PDRs[0].URRIDs, s.PDRs[1].URRIDs, s.PDRs[2].URRIDs = []uint32{3}, []uint32{3}, []uint32{2}
	if err := tab.Install(s); err != nil {
		t.Fatal(err)
	}
	after := tab.slotRules(1)
	if after[2] != before[2] {
		t.Errorf("urr 2 moved from %v to %v", before[2], after[2])
	}
	if after[3].epoch == 0 || after[3] == before[1] {
		t.Errorf("urr 3 at %v reuses urr 1's counts (%v)", after[3], before[1])
	}
	usage, _ := tab.Usage(1)
	if len(usage) != 2 {
		t.Errorf("usage for %d URRs, want 2", len(usage))
	}
}

func TestDropReasonsNameEveryCounter(t *testing.T) {
	if len(DropReasons) != dropKinds {
		t.Fatalf("%d drop reason names for %d counters (enum upf_drop)", len(DropReasons), dropKinds)
	}
}

func TestOpenExistingOnly(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), Prefix: "test"}
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "no upf.max_sessions") {
		t.Fatalf("opening absent tables without a size: %v, want a refusal", err)
	}
	if _, err := os.Stat(cfg.Path()); !os.IsNotExist(err) {
		t.Fatalf("the refused open left %s behind", cfg.Path())
	}
	cfg.MaxSessions = 8
	if _, err := Open(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.MaxSessions = 0
	tab, err := Open(cfg)
	if err != nil || tab.max != 8 {
		t.Fatalf("existing tables: %v (max %d)", err, tab.max)
	}
}

// The exporter shows UPF-U's counters and the session count.
func TestCollectorExportsCounters(t *testing.T) {
	tab, _ := openTemp(t, 4)
	if err := tab.Install(sessionWith(1, ue, 0x10)); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(tab))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range families {
		series[f.GetName()] = len(f.GetMetric())
	}
	if series["l25gc_upf_drops_total"] != len(DropReasons)-1 || series["l25gc_upf_sessions"] != 1 || series["l25gc_upf_port_packets_total"] != 4 {
		t.Fatalf("series %v: want every drop reason, the session gauge and rx/tx per port", series)
	}
	for _, f := range families {
		if f.GetName() == "l25gc_upf_sessions" && f.GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("sessions %v, want 1", f.GetMetric()[0].GetGauge().GetValue())
		}
	}
}
