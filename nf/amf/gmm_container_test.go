package amf

import (
	"bytes"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/security"
)

// containerRequest is a GUTI registration the way TS 24.501 4.4.6 has a UE
// with a security context send it: cleartext IEs, the whole request
// ciphered in the NAS message container, integrity protected by sec.
func (u *testUE) containerRequest(sec *security.NASContext, full []byte) []byte {
	u.t.Helper()
	gb, _ := nasx.EncodeGUTI(*u.guti)
	c, err := sec.CipherContainer(full)
	if err != nil {
		u.t.Fatal(err)
	}
	clear := must2(u.t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating,
		NgKSI: u.lastKSI, Identity: gb, SecurityCaps: u.caps, Cleartext: true, Container: c}))
	pdu, err := sec.Protect(clear, nas.SecurityHeaderTypeIntegrityProtected)
	if err != nil {
		u.t.Fatal(err)
	}
	return pdu
}

// TS 24.501 4.4.6: the AMF deciphers the container of a request that passed
// the integrity check and reads the whole request from it; the UE is
// accepted without authentication.
func TestGUTIRegistrationWithCipheredContainer(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000070", 1)
	ue.register()
	ue.goIdle(1)
	ue.ranID = 2
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	full := ue.registrationRequest(nasMessage.RegistrationType5GSMobilityRegistrationUpdating, gb)
	g.send(initialUEMessage(t, ue.ranID, ue.containerRequest(ue.sec, full)))
	ue.readAccept()

	// A container that does not hold a Registration Request is rejected.
	ue.goIdle(1)
	ue.ranID = 3
	g.send(initialUEMessage(t, ue.ranID, ue.containerRequest(ue.sec, []byte{0x7e, 0x00, 0x7f})))
	if m := ue.dl("DownlinkNASTransport"); m.RegistrationReject == nil {
		t.Fatalf("message type %d, want Registration Reject", m.GmmHeader.GetMessageType())
	}
}

// A container the AMF cannot decipher (the request fails the integrity
// check) is asked for again in Security Mode Command (RINMR, TS 24.501
// 4.4.6), and the UE's answer carries it.
func TestUnverifiedContainerIsAskedForAgain(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000071", 1)
	ue.register()
	ue.goIdle(1)
	ue.ranID = 2
	stale := security.NewNASContext(bytes.Repeat([]byte{7}, 32), security.NEA2, security.NIA2, security.Uplink)
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	full := must2(t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating,
		NgKSI: ue.lastKSI, Identity: gb, SecurityCaps: ue.caps, Requested: []models.Snssai{{Sst: 1, Sd: "010203"}}}))
	g.send(initialUEMessage(t, ue.ranID, ue.containerRequest(stale, full)))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	s := g.expect("DownlinkNASTransport")
	smc, err := nasx.Decode(s.NASPDU[7:])
	if err != nil {
		t.Fatal(err)
	}
	info := smc.SecurityModeCommand.Additional5GSecurityInformation
	if info == nil || info.GetRINMR() != 1 {
		t.Fatal("Security Mode Command does not ask for the initial message again (RINMR)")
	}
	ue.up(ue.acceptSMC(s.NASPDU, full))
	ue.readAccept()
}
