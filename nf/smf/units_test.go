package smf

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
)

// Leases outlive the SMF: after a restart an address in use is not handed
// to another UE, its owner gets it back, and a freed one is free again.
func TestLeasesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	d := config.SMFDNN{DNN: "internet", Pool: "10.60.0.0/30"} // two host addresses
	p, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.allocate("imsi-1/1")
	if err != nil || a.String() != "10.60.0.1" {
		t.Fatalf("first address %v %v", a, err)
	}
	b, _ := p.allocate("imsi-2/1")
	if _, err := p.allocate("imsi-3/1"); !errors.Is(err, errPoolExhausted) {
		t.Fatalf("third address in a /30: %v", err)
	}
	p.release(b, "imsi-2/1")

	restarted, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	if restarted.inUse() != 1 {
		t.Fatalf("%d leases after the restart, want 1", restarted.inUse())
	}
	if got, _ := restarted.allocate("imsi-3/1"); got == a {
		t.Fatalf("%v, in use by imsi-1/1, handed to imsi-3/1 after a restart", a)
	}
	if got, _ := restarted.allocate("imsi-1/1"); got != a {
		t.Fatalf("imsi-1/1 got %v back, want its %v", got, a)
	}
	restarted.release(a, "imsi-9/9") // not its owner: kept
	again, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.byAddr[u32(a)] != "imsi-1/1" {
		t.Fatalf("lease of %v after a stranger's release and a restart: %q, want imsi-1/1", a, again.byAddr[u32(a)])
	}
}

func TestMemoryOnlyPoolSkipsNetworkAndBroadcast(t *testing.T) {
	p, err := newIPPool(config.SMFDNN{DNN: "x", Pool: "10.1.0.0/29"}, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[netip.Addr]bool{}
	for i := 0; i < 6; i++ {
		a, err := p.allocate(string(rune('a' + i)))
		if err != nil || a.String() == "10.1.0.0" || a.String() == "10.1.0.7" || seen[a] {
			t.Fatalf("allocation %d: %v %v", i, a, err)
		}
		seen[a] = true
	}
}

func TestBitRates(t *testing.T) {
	for s, want := range map[string]uint64{"1 Gbps": 1e9, "100 Mbps": 1e8, "2.5 Kbps": 2500, "": 0, "7 bps": 7} {
		if got, err := parseBitRate(s); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"1Gbps", "fast", "-1 Mbps", "1 gbps", "1e30 Tbps"} {
		if _, err := parseBitRate(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// An SDF filter becomes a NAS packet filter and back into the same flow
// description the UPF gets.
func TestFlowDescriptions(t *testing.T) {
	for _, d := range []string{iperfFlow, "permit out ip from 10.200.0.0/24 to assigned", "permit out 6 from any 80 to assigned 4000"} {
		pf, err := packetFilter(d)
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		if got := flowDescription(pf); got != d {
			t.Errorf("%q came back as %q", d, got)
		}
	}
	for _, d := range []string{"deny out ip from any to assigned", "permit out 17 from 10.200.0.2 5201-5300 to assigned",
		"permit out 17 from fd00::1 to assigned", "permit out 17 from 10.200.0.2", "permit out tcp from any to assigned"} {
		if _, err := packetFilter(d); err == nil {
			t.Errorf("%q accepted", d)
		}
	}
}

// A PCC rule's QoS decides its flow; match-all and default-flow rules
// ride on the default flow.
func TestPolicyDecisionToFlows(t *testing.T) {
	c := &smContext{flows: []qosFlow{{QFI: 1, FiveQI: 9, RuleID: 1, Precedence: 255}}}
	d := &models.SmPolicyDecision{
		SessRules: map[string]*models.SessionRule{"s": {AuthSessAmbr: &models.Ambr{Uplink: "10 Mbps", Downlink: "20 Mbps"}, AuthDefQos: &models.AuthorizedDefaultQos{Var5qi: 8}}},
		PccRules: map[string]*models.PccRule{
			"default": {PccRuleId: "default", FlowInfos: []models.FlowInformation{{FlowDescription: "permit out ip from any to assigned"}}},
			"video":   {PccRuleId: "video", Precedence: 30, RefQosData: []string{"v"}, FlowInfos: []models.FlowInformation{{FlowDescription: "permit out 6 from 10.200.0.2 443 to assigned"}}},
			"voice":   {PccRuleId: "voice", Precedence: 20, RefQosData: []string{"g"}, FlowInfos: []models.FlowInformation{{FlowDescription: "permit out 17 from 10.200.0.3 to assigned"}}},
		},
		QosDecs: map[string]*models.QosData{"v": {QosId: "v", Var5qi: 6}, "g": {QosId: "g", Var5qi: 1, GbrDl: "1 Mbps", MaxbrDl: "2 Mbps"}}}
	if err := c.applyDecision(d); err != nil {
		t.Fatal(err)
	}
	if c.ambrUp != 10e6 || c.ambrDown != 20e6 || c.flows[0].FiveQI != 8 || len(c.flows) != 3 {
		t.Fatalf("after the decision: AMBR %d/%d, flows %+v", c.ambrUp, c.ambrDown, c.flows)
	}
	video, voice := c.flows[1], c.flows[2]
	if video.QFI != 2 || video.FiveQI != 6 || video.GBR || voice.QFI != 3 || !voice.GBR || voice.GBRDown != 1e6 || voice.Precedence != 20 {
		t.Fatalf("video %+v voice %+v", video, voice)
	}
	bad := &models.SmPolicyDecision{PccRules: map[string]*models.PccRule{"x": {PccRuleId: "x", FlowInfos: []models.FlowInformation{{FlowDescription: "permit out 17 from 10.200.0.2 1-9 to assigned"}}}}}
	if _, err := c.newPCCFlows(bad); err == nil {
		t.Fatal("a port range was accepted")
	}
	r, err := voice.nasRule()
	if err != nil || r.Default || len(r.Filters) != 1 || r.Filters[0].Direction != nasx.FilterBidirectional {
		t.Fatalf("QoS rule %+v %v", r, err)
	}
}

// An SMF restarted on the same data directory hands a new UE none of the
// addresses its sessions held, and a UE establishing the same session
// again gets its own address back.
func TestRestartedSMFKeepsAddressesInUse(t *testing.T) {
	dir := t.TempDir()
	same := setup{cfg: func(c *config.Config) { c.DataDir = dir; c.SMF.DNNs[0].Pool = "10.60.0.0/29" }}
	first := newTestSMF(t, sbi.NewTCP(), same)
	_, tr := first.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	held := acceptedAddress(t, tr)
	first.nf.Stop(context.Background())

	restarted := newTestSMF(t, sbi.NewTCP(), same)
	_, tr = restarted.established(t, subscribed, 2, establishmentRequest(t, 2, 1))
	if got := acceptedAddress(t, tr); got == held {
		t.Fatalf("restarted SMF handed %v, still leased, to another session", got)
	}
	_, tr = restarted.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	if got := acceptedAddress(t, tr); got != held {
		t.Fatalf("the same session got %v after the restart, want its %v", got, held)
	}
}

func acceptedAddress(t *testing.T, tr transfer) netip.Addr {
	t.Helper()
	a := decodeGSM(t, tr.n1).PDUSessionEstablishmentAccept
	if a == nil {
		t.Fatalf("not an Accept: % x", tr.n1)
	}
	info := a.PDUAddress.GetPDUAddressInformation()
	return netip.AddrFrom4([4]byte(info[:4]))
}

// The AMF selects the SMF through the NRF by S-NSSAI and DNN (TS 23.502
// 4.3.2.2.3): the profile says which it serves.
func TestDiscoveredBySliceAndDNN(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	if err := s.nf.env.NRF.Register(context.Background(), s.nf.Profile()); err != nil {
		t.Fatal(err)
	}
	find := func(dnn string, sn models.Snssai) int {
		got, err := s.nf.env.NRF.Search(context.Background(), sbi.Query{Target: models.NrfNfManagementNfType_SMF,
			Services: []models.ServiceName{models.ServiceName_NSMF_PDUSESSION}, SNSSAIs: []models.Snssai{sn}, DNN: dnn})
		if err != nil {
			return 0 // none registered that serves it
		}
		return len(got)
	}
	if find("internet", slice1) != 1 || find("ims", slice1) != 0 || find("internet", models.Snssai{Sst: 2}) != 0 {
		t.Fatalf("discovery: internet/slice1 %d, ims %d, slice 2 %d; want 1, 0, 0",
			find("internet", slice1), find("ims", slice1), find("internet", models.Snssai{Sst: 2}))
	}
}
