package rules

import (
	"net/netip"
	"testing"
)

// MemTable keeps its own copies, counts per URR, and lists sessions by
// UP SEID: what a test of UPF-C or the SMF relies on.
func TestMemTable(t *testing.T) {
	tb := NewMemTable()
	s := &Session{UPSEID: 7, Rules: Rules{
		PDRs: []PDR{{ID: 1, LocalFTEID: &FTEID{TEID: 1, IPv4: netip.MustParseAddr("10.100.0.1")}, SDFFilters: []string{"permit out ip from any to assigned"}}},
		FARs: []FAR{{ID: 1, OuterHeader: &OuterHeader{TEID: 5}}},
		URRs: []URR{{ID: 1}, {ID: 2}},
	}}
	if err := tb.Install(s); err != nil {
		t.Fatal(err)
	}
	if err := tb.Install(&Session{UPSEID: 3}); err != nil {
		t.Fatal(err)
	}
	s.PDRs[0].LocalFTEID.TEID, s.PDRs[0].SDFFilters[0], s.FARs[0].OuterHeader.TEID = 99, "changed", 99
	got, _ := tb.Session(7)
	if got.PDRs[0].LocalFTEID.TEID != 1 || got.PDRs[0].SDFFilters[0] == "changed" || got.FARs[0].OuterHeader.TEID != 5 {
		t.Fatalf("the caller's later changes reached the table: %+v", got)
	}
	tb.Count(7, Usage{URRID: 2, UplinkBytes: 10, UplinkPackets: 1})
	tb.Count(7, Usage{URRID: 2, DownlinkBytes: 5, DownlinkPackets: 1})
	u, err := tb.Usage(7)
	if err != nil || len(u) != 2 || u[0] != (Usage{URRID: 1}) || u[1] != (Usage{URRID: 2, UplinkBytes: 10, DownlinkBytes: 5, UplinkPackets: 1, DownlinkPackets: 1}) {
		t.Fatalf("usage %+v %v", u, err)
	}
	list, _ := tb.Sessions()
	if len(list) != 2 || list[0].UPSEID != 3 || list[1].UPSEID != 7 || tb.Installs() != 2 {
		t.Fatalf("sessions %+v, installs %d", list, tb.Installs())
	}
	if err := tb.Remove(7); err != nil {
		t.Fatal(err)
	}
	if err := tb.Remove(7); err == nil {
		t.Fatal("removed a session twice")
	}
	if _, err := tb.Usage(7); err == nil {
		t.Fatal("usage of a removed session")
	}
	if err := tb.Install(&Session{}); err == nil {
		t.Fatal("installed a session without UP SEID")
	}
}
