package amf

import (
	"bytes"
	"testing"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// TS 23.501 5.4.4.1, TS 38.413 8.3.1.2: the UE Radio Capability a gNB
// reported is given back in the Initial Context Setup Request of the UE's
// next Service Request, so the gNB need not ask the UE (and report it)
// again; before any report there is none to give.
func TestServiceRequestGivesTheKeptRadioCapability(t *testing.T) {
	_, g, ue, smf := idleUE(t, "0000000221", 5)
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if ics, _ := ue.readServiceAccept(); ics.RadioCapability != nil {
		t.Fatalf("ICS radio capability %x before the gNB reported one", ics.RadioCapability)
	}
	capability := []byte{0x04, 0x01, 0x02, 0x03}
	g.send(must2(t)(ngapx.BuildUERadioCapabilityInfoIndication(ue.amfID, ue.ranID, capability)))
	ue.goIdle(1)
	smf.expect("modify")
	ue.requestService(3, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if ics, _ := ue.readServiceAccept(); !bytes.Equal(ics.RadioCapability, capability) {
		t.Fatalf("ICS radio capability %x, want the reported %x", ics.RadioCapability, capability)
	}
}
