package domain

import (
	"strings"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/openapi/models"
)

func TestParseGUAMI(t *testing.T) {
	cases := []parseCase[GUAMI]{
		// AMF ID cafe00: region ca, set 0xfe<<2 | 0 = 1016, pointer 0.
		{"20893-cafe00", GUAMI{PLMN{"208", "93"}, AMFID{0xca, 1016, 0}}, ""},
		{"20893-cafe3f", GUAMI{PLMN{"208", "93"}, AMFID{0xca, 1016, 63}}, ""},
		{"208930-000040", GUAMI{PLMN{"208", "930"}, AMFID{0, 1, 0}}, ""},
		{"20893cafe00", GUAMI{}, "want <MCC><MNC>-<AMF ID>"},
		{"20893-cafe0", GUAMI{}, "6 hex digits"},
	}
	checkParse(t, "ParseGUAMI", ParseGUAMI, cases)
	// TS 38.413 9.3.3.12/9.3.3.19: the set's 10 and the pointer's 6 bits are
	// left-aligned in their octets.
	ng, err := GUAMI{PLMN{"208", "93"}, AMFID{0xCA, 0x3F8, 1}}.ToNGAP()
	if err != nil || ng.AMFSetID.Value.Bytes[0] != 0xFE || ng.AMFSetID.Value.Bytes[1] != 0x00 || ng.AMFPointer.Value.Bytes[0] != 0x04 {
		t.Errorf("NGAP bits %x %x, %v", ng.AMFSetID.Value.Bytes, ng.AMFPointer.Value.Bytes, err)
	}
	if _, err := NewAMFID(1, 1024, 0); err == nil {
		t.Error("set ID 1024 accepted")
	}
	if _, err := NewAMFID(1, 1, 64); err == nil {
		t.Error("pointer 64 accepted")
	}
}

func TestGUAMIConversions(t *testing.T) {
	g := GUAMI{PLMN{"208", "93"}, AMFID{RegionID: 0xca, SetID: 0x3fe, Pointer: 0x15}}
	ng, err := g.ToNGAP()
	if err != nil {
		t.Fatal(err)
	}
	if ng.AMFSetID.Value.BitLength != 10 || ng.AMFPointer.Value.BitLength != 6 {
		t.Errorf("NGAP bit lengths %d %d", ng.AMFSetID.Value.BitLength, ng.AMFPointer.Value.BitLength)
	}
	if back, err := GUAMIFromNGAP(ng); err != nil || back != g {
		t.Errorf("NGAP round trip = %+v, %v", back, err)
	}
	nas, err := g.ToNAS()
	if err != nil || len(nas) != 6 || nas[3] != 0xca || nas[4] != 0xff || nas[5] != 0x95 {
		t.Errorf("ToNAS = %x, %v; want the AMF ID octets ca ff 95", nas, err)
	}
	if back, err := GUAMIFromNAS(nas); err != nil || back != g {
		t.Errorf("NAS round trip = %+v, %v", back, err)
	}
	if m := g.ToModel(); m.AmfId != "caff95" {
		t.Errorf("AmfId %q, want caff95 (the NAS octets in hex)", m.AmfId)
	}
	m := g.ToModel()
	if back, err := GUAMIFromModel(&m); err != nil || back != g {
		t.Errorf("model round trip = %+v, %v", back, err)
	}
	if g.AMFID.RegionIDString() != "ca" || g.AMFID.SetIDString() != "3fe" {
		t.Errorf("AmfRegionId %s AmfSetId %s, want ca 3fe", g.AMFID.RegionIDString(), g.AMFID.SetIDString())
	}
	upper := models.Guami{PlmnId: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AmfId: strings.ToUpper(m.AmfId)}
	if !SameModelGUAMI(&m, &upper) || SameModelGUAMI(&m, nil) {
		t.Error("SameModelGUAMI: case or nil handled wrong")
	}
	ng.AMFSetID.Value = aper.BitString{Bytes: []byte{1}, BitLength: 8}
	if _, err := GUAMIFromNGAP(ng); err == nil {
		t.Error("an 8-bit AMF Set ID accepted")
	}
	if _, err := (GUAMI{PLMN{"208", "93"}, AMFID{SetID: 1024}}).ToNGAP(); err == nil {
		t.Error("ToNGAP of set ID 1024 accepted")
	}
}
