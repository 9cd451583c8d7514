package pfcpx

import (
	"bytes"
	"testing"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// The weight travels as TS 29.244 8.1.1 lays out a vendor-specific IE:
// type 32769, length 4 (the Enterprise ID counts), Enterprise ID 32473,
// the weight in 2 octets; inside the Create QER it belongs to.
func TestQERWeightOnTheWire(t *testing.T) {
	ie, err := QERIEOf(rules.QER{ID: 2, QFI: 5, GateULOpen: true, GateDLOpen: true, Weight: 3})
	if err != nil {
		t.Fatal(err)
	}
	body := &SessionModificationRequest{CreateQER: []*QERIE{ie}}
	b, err := Encode(&Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SEID: 1}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x80, 0x01, 0, 4, 0x7e, 0xd9, 0, 3}
	i := bytes.Index(b, want)
	if i < 0 {
		t.Fatalf("no weight IE % x in % x", want, b)
	}
	// the Create QER (type 7) starts at octet 16 and holds it
	if b[16] != 0 || b[17] != 7 || i+len(want) > 20+int(b[18])<<8+int(b[19]) {
		t.Fatalf("the weight IE at %d is not inside the Create QER: % x", i, b)
	}
}

// No weight given, no IE: a Create QER without one is weight 1 (Weight
// 0), the standard IEs alone, as before weights existed.
func TestQERWithoutWeightSendsNoVendorIE(t *testing.T) {
	ie, err := QERIEOf(rules.QER{ID: 1, QFI: 9, GateULOpen: true, GateDLOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if ie.Weight != nil {
		t.Fatalf("weight IEs %+v for a QER without weight", ie.Weight)
	}
	q, err := QEROf(ie)
	if err != nil || q.Weight != 0 {
		t.Fatalf("read back %+v (%v), want weight 0 (= 1)", q, err)
	}
	if _, err := QERIEOf(rules.QER{ID: 1, Weight: rules.MaxWeight + 1}); err == nil {
		t.Fatal("a weight above rules.MaxWeight encoded")
	}
}

// An Update QER without the IE leaves the weight as it was (TS 29.244
// 7.5.4.5: absent IEs are unchanged); with it, the weight changes.
func TestUpdateQERWeight(t *testing.T) {
	q := rules.QER{ID: 2, QFI: 5, Weight: 3}
	if err := PatchQER(&q, &QERIE{QERID: &pfcpType.QERID{QERID: 2}}); err != nil || q.Weight != 3 {
		t.Fatalf("update without weight: %+v (%v), want weight 3 kept", q, err)
	}
	up, err := QERIEOf(rules.QER{ID: 2, QFI: 5, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := PatchQER(&q, up); err != nil || q.Weight != 1 {
		t.Fatalf("update to weight 1: %+v (%v)", q, err)
	}
}

// Another enterprise's IE of the same type is not ours: passed over,
// beside ours or alone.
func TestOtherEnterprisesWeightIgnored(t *testing.T) {
	ie, err := QERIEOf(rules.QER{ID: 2, QFI: 5, Weight: 4})
	if err != nil {
		t.Fatal(err)
	}
	other := &VendorIE{EnterpriseID: 10415, Data: []byte{0, 0, 0, 9, 9}}
	ie.Weight = []*VendorIE{other, ie.Weight[0]}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SEID: 1},
		Body: &SessionModificationRequest{CreateQER: []*QERIE{ie}}})
	got := m.Body.(*SessionModificationRequest).CreateQER[0]
	if len(got.Weight) != 2 {
		t.Fatalf("read %d weight IEs, want both", len(got.Weight))
	}
	q, err := QEROf(got)
	if err != nil || q.Weight != 4 {
		t.Fatalf("read %+v (%v), want weight 4", q, err)
	}
	got.Weight = got.Weight[:1]
	if q, err = QEROf(got); err != nil || q.Weight != 0 {
		t.Fatalf("with only another enterprise's IE: %+v (%v), want no weight", q, err)
	}
}
