package shm

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/upf/rules"
)

// eightFlowSession is the SMF's session (nf/smf/upf_rules.go) with
// rules.MaxQoSFlows flows: per flow an uplink and a downlink PDR and a
// flow QER, the session-level QER 64 on every PDR, and the indirect
// forwarding PDR and FAR of an N2 handover (TS 23.502 4.9.1.3.2).
func eightFlowSession(seid uint64) *rules.Session {
	s := &rules.Session{UPSEID: seid, CPSEID: seid, CPAddr: smf, Rules: rules.Rules{
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: "internet"},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 7, PeerIPv4: gnb}},
			{ID: 3, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 8, PeerIPv4: gnb}},
		},
		QERs: []rules.QER{{ID: 64, GateULOpen: true, GateDLOpen: true, MBRUL: 80e6, MBRDL: 80e6}},
		URRs: []rules.URR{{ID: 1}},
	}}
	for q := uint8(1); q <= rules.MaxQoSFlows; q++ {
		var sdf []string
		if q > 1 {
			sdf = []string{fmt.Sprintf("permit out 17 from 10.200.0.2 %d to assigned", 5200+int(q))}
		}
		ids := []uint32{uint32(q), 64}
		s.PDRs = append(s.PDRs,
			rules.PDR{ID: 2*uint16(q) - 1, Precedence: 255 - uint32(q), Source: rules.Access,
				LocalFTEID: &rules.FTEID{TEID: 0x10, IPv4: n3}, UEIPv4: ue, SDFFilters: sdf,
				OuterHeaderRemoval: true, FARID: 1, QERIDs: ids, URRIDs: []uint32{1}},
			rules.PDR{ID: 2 * uint16(q), Precedence: 255 - uint32(q), Source: rules.Core, UEIPv4: ue,
				SDFFilters: sdf, FARID: 2, QERIDs: ids, URRIDs: []uint32{1}})
		s.QERs = append(s.QERs, rules.QER{ID: uint32(q), QFI: q, GateULOpen: true, GateDLOpen: true,
			GBRUL: uint64(q) * 1e6, GBRDL: uint64(q) * 1e6, MBRUL: uint64(q) * 4e6, MBRDL: uint64(q) * 4e6})
	}
	s.PDRs = append(s.PDRs, rules.PDR{ID: 200, Source: rules.Access, LocalFTEID: &rules.FTEID{TEID: 0x11, IPv4: n3},
		OuterHeaderRemoval: true, FARID: 3})
	return s
}

// The tables hold what rules.Max* promise (the SMF's 8-flow session
// during an N2 handover), and one rule more of each kind is refused.
func TestTablesHoldTheLimitsGoAnnounces(t *testing.T) {
	tab, _ := openTemp(t, 4)
	s := eightFlowSession(1)
	if len(s.PDRs) != rules.MaxPDRs || len(s.QERs) != rules.MaxQERs {
		t.Fatalf("the session has %d PDRs and %d QERs, want the limits %d and %d", len(s.PDRs), len(s.QERs), rules.MaxPDRs, rules.MaxQERs)
	}
	if err := tab.Install(s); err != nil {
		t.Fatalf("8 flows: %v", err)
	}
	for name, edit := range map[string]func(*rules.Session){
		"PDR": func(s *rules.Session) {
			s.PDRs = append(s.PDRs, rules.PDR{ID: 300, Source: rules.Core, UEIPv4: ue, FARID: 2})
		},
		"QER": func(s *rules.Session) { s.QERs = append(s.QERs, rules.QER{ID: 9, QFI: 9}) },
		"FAR": func(s *rules.Session) {
			for id := uint32(4); id <= rules.MaxFARs+1; id++ {
				s.FARs = append(s.FARs, rules.FAR{ID: id, Action: rules.ActionDrop})
			}
		},
		"URR": func(s *rules.Session) {
			for id := uint32(2); id <= rules.MaxURRs+1; id++ {
				s.URRs = append(s.URRs, rules.URR{ID: id})
			}
		},
	} {
		one := eightFlowSession(2)
		one.PDRs[0].LocalFTEID.TEID, one.PDRs[len(one.PDRs)-1].LocalFTEID.TEID = 0x20, 0x21
		for i := range one.PDRs[:len(one.PDRs)-1] {
			one.PDRs[i].UEIPv4 = gnb // another UE address
		}
		edit(one)
		if err := tab.Install(one); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("one %s more: %v, want a refusal naming the limit", name, err)
		}
	}
}

// TableBytes is what Open makes the file, and the README quotes it at the
// default upf.max_sessions.
func TestTableBytesIsTheFileSize(t *testing.T) {
	_, cfg := openTemp(t, 64)
	st, err := os.Stat(cfg.Dir + "/" + cfg.Prefix + "-upf-tables")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < int64(TableBytes(64)) {
		t.Errorf("file %d bytes, TableBytes(64) %d", st.Size(), TableBytes(64))
	}
	t.Logf("tables at 65536 sessions: %.1f MiB", float64(TableBytes(65536))/(1<<20))
}
