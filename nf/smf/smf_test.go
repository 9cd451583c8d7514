package smf

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"
	dto "github.com/prometheus/client_model/go"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/upf/rules"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

// UE-side 5GSM messages (TS 24.501 8.3), as octets: what the AMF relays.
func establishmentRequest(t *testing.T, psi, pti uint8) []byte {
	t.Helper()
	b, err := nasx.BuildPDUSessionEstablishmentRequest(psi, pti)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withIEs swaps the IPv4 PDU session type IE (the request's last octet,
// 9-) and adds optional IEs.
func withIEs(b []byte, sessionType uint8, extra ...byte) []byte {
	out := append([]byte(nil), b[:len(b)-1]...)
	return append(append(out, 0x90|sessionType), extra...)
}

// askDNS is an extended PCO asking for DNS server IPv4 addresses (TS
// 24.008 10.5.6.3 container 000DH).
var askDNS = []byte{0x7B, 0, 4, 0x80, 0x00, 0x0D, 0}

func gsmMsg(psi, pti, msgType uint8, ies ...byte) []byte {
	return append([]byte{0x2e, psi, pti, msgType}, ies...)
}

// established runs an establishment to the N1N2MessageTransfer and
// returns the context's URI and what the AMF received.
func (s *testSMF) established(t *testing.T, supi string, psi uint8, n1 []byte) (string, transfer) {
	t.Helper()
	a := s.post(t, smContextsPath, s.createData(supi, "internet", psi), n1Part(n1))
	if a.status != 201 {
		t.Fatalf("CreateSMContext: %d %s", a.status, a.json)
	}
	loc := a.header.Get("Location")
	if !strings.HasPrefix(loc, s.url+smContextsPath+"/") {
		t.Fatalf("Location %q", loc)
	}
	return strings.TrimPrefix(loc, s.url), s.core.waitTransfer(t)
}

// activate answers the setup with the gNB's tunnel.
func (s *testSMF) activate(t *testing.T, ref string) {
	t.Helper()
	rsp, err := ngapx.BuildPDUSessionResourceSetupResponseTransfer(ngapx.SetupResponse{
		DL: ngapx.Tunnel{IPv4: netip.MustParseAddr(gnbN3), TEID: 0x77}, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_SETUP_RSP}, n2Part(rsp))
	var up models.SmContextUpdatedData
	if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.UpCnxState != models.UpCnxState_ACTIVATED {
		t.Fatalf("UpdateSMContext (setup response): %d %s", a.status, a.json)
	}
}

func decodeGSM(t *testing.T, b []byte) *nas.Message {
	t.Helper()
	m := nas.NewMessage()
	buf := append([]byte(nil), b...)
	if err := m.PlainNasDecode(&buf); err != nil || m.GsmMessage == nil {
		t.Fatalf("5GSM % x: %v", b, err)
	}
	return m
}

// assertNothingHeld: no address, N4 session, SM policy or UECM
// registration outlives the session.
func (s *testSMF) assertNothingHeld(t *testing.T) {
	t.Helper()
	p, _ := s.nf.pools.of("internet")
	uecm, policies := s.core.live()
	if p.inUse() != 0 || s.n4.count() != 0 || uecm != 0 || policies != 0 || s.nf.ctxs.count() != 0 {
		t.Fatalf("left behind: %d addresses, %d N4 sessions, %d UECM registrations, %d SM policies, %d contexts",
			p.inUse(), s.n4.count(), uecm, policies, s.nf.ctxs.count())
	}
}

// The whole life of a session over every SBI transport: establishment
// (sm-data, UECM, SM policy, address, N4, N1N2 transfer with the Accept
// and the setup request transfer), activation with the gNB's tunnel, and
// the UE-requested release that frees everything.
func TestEstablishActivateAndUERelease(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		s := newTestSMF(t, tr, setup{})
		ref, tr1 := s.established(t, subscribed, 5, withIEs(establishmentRequest(t, 5, 9), nasx.PDUSessionTypeIPv4, askDNS...))

		// Step 11: the Accept for the UE (TS 24.501 8.3.2).
		if tr1.supi != subscribed || tr1.req.PduSessionId != 5 || tr1.req.N2InfoContainer.SmInfo.N2InfoContent.NgapIeType != models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ {
			t.Fatalf("transfer %+v", tr1.req)
		}
		acc := decodeGSM(t, tr1.n1).PDUSessionEstablishmentAccept
		if acc == nil || acc.GetPTI() != 9 || acc.GetPDUSessionID() != 5 || acc.DNN.GetDNN() != "internet" {
			t.Fatalf("not the Accept: % x", tr1.n1)
		}
		info := acc.PDUAddress.GetPDUAddressInformation()
		ueIP := netip.AddrFrom4([4]byte(info[:4]))
		if !netip.MustParsePrefix("10.60.0.0/16").Contains(ueIP) {
			t.Fatalf("UE address %v outside the DNN's pool", ueIP)
		}
		dl, ul := acc.SessionAMBR.GetSessionAMBRForDownlink(), acc.SessionAMBR.GetSessionAMBRForUplink()
		if nasx.BitRate(acc.SessionAMBR.GetUnitForSessionAMBRForDownlink(), uint16(dl[0])<<8|uint16(dl[1])) != 200_000_000 ||
			nasx.BitRate(acc.SessionAMBR.GetUnitForSessionAMBRForUplink(), uint16(ul[0])<<8|uint16(ul[1])) != 100_000_000 {
			t.Fatal("session AMBR is not the PCF's 200/100 Mbps")
		}
		if acc.ExtendedProtocolConfigurationOptions == nil {
			t.Fatal("the UE asked for DNS servers and got none")
		}
		rules1, err := nasx.ParseQoSRules(acc.AuthorizedQosRules.GetQosRule())
		if err != nil || len(rules1) != 1 || !rules1[0].Default || rules1[0].QFI != 1 {
			t.Fatalf("QoS rules %+v %v", rules1, err)
		}
		// ... and the setup request transfer for the gNB (TS 38.413 9.3.4.1).
		setupReq, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(tr1.n2)
		if err != nil || setupReq.UL.IPv4.String() != upfN3 || setupReq.UL.TEID != 0x101 || setupReq.AMBRDown != 200_000_000 ||
			len(setupReq.Flows) != 1 || setupReq.Flows[0].FiveQI != 9 || setupReq.Flows[0].ARPPriority != 7 {
			t.Fatalf("setup request transfer %+v %v", setupReq, err)
		}
		// Step 10: the UPF holds the session; downlink waits for the gNB.
		sess := s.n4.only(t)
		if len(sess.PDRs) != 2 || sess.PDRs[0].UEIPv4 != ueIP || sess.FARs[1].Action != rules.ActionDrop || sess.QERs[0].MBRDL != 200_000_000 {
			t.Fatalf("N4 session before activation %+v", sess)
		}
		if s.n4.addrs[0] != "udp:127.0.0.1:8805" {
			t.Errorf("N4 addressed to %q", s.n4.addrs[0])
		}

		// Steps 15-16: the gNB's tunnel goes into the downlink FAR.
		s.activate(t, ref)
		far := s.n4.only(t).FARs[1]
		if far.Action != rules.ActionForward || far.OuterHeader == nil || far.OuterHeader.TEID != 0x77 || far.OuterHeader.PeerIPv4.String() != gnbN3 {
			t.Fatalf("downlink FAR after activation %+v", far)
		}

		// TS 23.502 4.3.4.2: UE-requested release.
		a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
			n1Part(gsmMsg(5, 10, nas.MsgTypePDUSessionReleaseRequest)))
		var up models.SmContextUpdatedData
		if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.N2SmInfoType != models.N2SmInfoType_PDU_RES_REL_CMD {
			t.Fatalf("release request answered %d %s", a.status, a.json)
		}
		cmd := decodeGSM(t, a.parts[up.N1SmMsg.ContentId].Data).PDUSessionReleaseCommand
		if cmd == nil || cmd.GetPTI() != 10 || cmd.Cause5GSM.GetCauseValue() != nasx.GSMCauseRegularDeactivation {
			t.Fatalf("Release Command %+v", cmd)
		}
		if c, err := ngapx.ParsePDUSessionResourceReleaseCommandTransfer(a.parts[up.N2SmInfo.ContentId].Data); err != nil || c.Nas == nil {
			t.Fatalf("release command transfer %+v %v", c, err)
		}
		if s.n4.count() != 0 {
			t.Fatal("N4 session still there after the Release Command")
		}
		relRsp := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
			N2SmInfoType: models.N2SmInfoType_PDU_RES_REL_RSP}, n2Part([]byte{0}))
		done := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
			n1Part(gsmMsg(5, 10, nas.MsgTypePDUSessionReleaseComplete)))
		if relRsp.status != 200 || done.status != 200 {
			t.Fatalf("release response %d, release complete %d", relRsp.status, done.status)
		}
		if got := s.core.waitReleased(t); got != subscribed+"/5" {
			t.Fatalf("status notification for %s", got)
		}
		s.assertNothingHeld(t)
		if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 404 {
			t.Fatalf("update of a released context: %d", a.status)
		}
	})
}

// Each request the SMF cannot serve is answered with the Reject for the
// UE carrying its 5GSM cause (TS 24.501 6.4.1.4.2), and nothing stays
// allocated.
func TestEstablishmentRejects(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	good := establishmentRequest(t, 5, 1)
	other := models.Snssai{Sst: 2, Sd: "000001"}
	cases := []struct {
		name   string
		supi   string
		dnn    string
		snssai *models.Snssai
		n1     []byte
		psi    uint8
		status int
		cause  string
		gsm    uint8
	}{
		{"unknown DNN", subscribed, "corporate", nil, good, 5, 403, "DNN_DENIED", nasx.GSMCauseMissingOrUnknownDNN},
		{"no DNN", subscribed, "", nil, good, 5, 403, "DNN_DENIED", nasx.GSMCauseMissingOrUnknownDNN},
		{"not subscribed", unsubscribed, "internet", nil, good, 5, 403, "SUBSCRIPTION_DENIED", nasx.GSMCauseServiceOptionNotSubscribed},
		{"slice not served", subscribed, "internet", &other, good, 5, 403, "SNSSAI_DENIED", nasx.GSMCauseServiceOptionNotSupported},
		{"IPv6 only", subscribed, "internet", nil, withIEs(good, nasx.PDUSessionTypeIPv6), 5, 403, "PDUTYPE_DENIED", nasx.GSMCausePDUSessionTypeIPv4OnlyAllowed},
		{"ethernet", subscribed, "internet", nil, withIEs(good, 5), 5, 403, "PDUTYPE_DENIED", nasx.GSMCauseUnknownPDUSessionType},
		{"SSC mode 2", subscribed, "internet", nil, append(append([]byte(nil), good...), 0xA2), 5, 403, "SSC_DENIED", nasx.GSMCauseNotSupportedSSCMode},
		{"PDU session ID 0", subscribed, "internet", nil, establishmentRequest(t, 0, 1), 0, 400, "N1_SM_ERROR", nasx.GSMCauseInvalidPDUSessionIdentity},
		{"PDU session ID differs from the AMF's", subscribed, "internet", nil, establishmentRequest(t, 6, 1), 5, 400, "N1_SM_ERROR", nasx.GSMCauseInvalidPDUSessionIdentity},
		{"not an establishment request", subscribed, "internet", nil, gsmMsg(5, 1, nas.MsgTypePDUSessionReleaseRequest), 5, 403, "N1_SM_ERROR", nasx.GSMCauseMessageNotCompatibleWithState},
		{"truncated request", subscribed, "internet", nil, good[:5], 5, 400, "N1_SM_ERROR", nasx.GSMCauseInvalidMandatoryInformation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := s.createData(c.supi, c.dnn, c.psi)
			if c.snssai != nil {
				d.SNssai = c.snssai
			}
			a := s.post(t, smContextsPath, d, n1Part(c.n1))
			var e models.SmContextCreateError
			if err := json.Unmarshal(a.json, &e); err != nil || a.status != c.status || e.Error == nil || e.Error.Cause != c.cause || e.N1SmMsg == nil {
				t.Fatalf("answer %d %s, want %d %s with an N1 message", a.status, a.json, c.status, c.cause)
			}
			rej := decodeGSM(t, a.parts[e.N1SmMsg.ContentId].Data).PDUSessionEstablishmentReject
			if rej == nil || rej.Cause5GSM.GetCauseValue() != c.gsm {
				t.Fatalf("Reject %+v, want cause #%d", rej, c.gsm)
			}
			s.assertNothingHeld(t)
		})
	}
	if a := s.post(t, smContextsPath, s.createData(subscribed, "internet", 5)); a.status != 400 {
		t.Errorf("CreateSMContext without N1: %d, want 400", a.status)
	}
}

// A UPF that cannot be reached or refuses the session: the UE gets #26
// through the AMF and the SMF gives back everything it took (TS 23.502
// 4.3.2.2.1 step 11, failure).
func TestUPFFailureRejectsWith26AndRollsBack(t *testing.T) {
	for name, s := range map[string]setup{"UPF refuses": {}, "no N4 client": {noN4: true}} {
		t.Run(name, func(t *testing.T) {
			smf := newTestSMF(t, sbi.NewTCP(), s)
			smf.n4.failCreate = &rules.CauseError{Cause: 73, Detail: "no resources available"}
			_, tr := smf.established(t, subscribed, 3, establishmentRequest(t, 3, 2))
			rej := decodeGSM(t, tr.n1).PDUSessionEstablishmentReject
			if rej == nil || rej.Cause5GSM.GetCauseValue() != nasx.GSMCauseInsufficientResources || tr.n2 != nil {
				t.Fatalf("transfer n1 % x n2 % x, want a Reject #26 alone", tr.n1, tr.n2)
			}
			smf.core.waitReleased(t)
			smf.assertNothingHeld(t)
		})
	}
}

// A PCF that fails: #38, nothing kept. No PCF at all: local policy (the
// subscription's AMBR and 5QI).
func TestPCFFailureAndLocalPolicy(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.core.pcfFails = true
	_, tr := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	if rej := decodeGSM(t, tr.n1).PDUSessionEstablishmentReject; rej == nil || rej.Cause5GSM.GetCauseValue() != nasx.GSMCauseNetworkFailure {
		t.Fatalf("PCF failure answered % x", tr.n1)
	}
	s.core.waitReleased(t)
	s.assertNothingHeld(t)

	s = newTestSMF(t, sbi.NewTCP(), setup{noPCF: true})
	_, tr = s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	req, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(tr.n2)
	if err != nil || req.AMBRDown != 1_000_000_000 || req.AMBRUp != 500_000_000 {
		t.Fatalf("local policy: %+v %v, want the subscribed 1 Gbps/500 Mbps", req, err)
	}
}

// A pool with room for two UEs: the third is rejected with #26 without an
// N4 session; a released address is handed out again.
func TestPoolExhaustion(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{cfg: func(c *config.Config) { c.SMF.DNNs[0].Pool = "10.60.0.0/30" }})
	s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	ref2, _ := s.established(t, subscribed, 2, establishmentRequest(t, 2, 1))
	_, tr := s.established(t, subscribed, 3, establishmentRequest(t, 3, 1))
	if rej := decodeGSM(t, tr.n1).PDUSessionEstablishmentReject; rej == nil || rej.Cause5GSM.GetCauseValue() != nasx.GSMCauseInsufficientResources {
		t.Fatalf("third UE answered % x, want Reject #26", tr.n1)
	}
	s.core.waitReleased(t)
	var m dto.Metric
	if err := s.nf.m.establishments.WithLabelValues("cause_26").Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		got := m.GetCounter().GetValue()
		t.Errorf("l25gc_smf_pdu_session_establishments_total{result=cause_26} = %v, want 1", got)
	}
	if s.n4.count() != 2 {
		t.Fatalf("%d N4 sessions, want the two established", s.n4.count())
	}
	if a := s.post(t, ref2+"/release", models.SmfPduSessionSmContextReleaseData{}); a.status != 204 {
		t.Fatalf("release: %d", a.status)
	}
	_, tr = s.established(t, subscribed, 3, establishmentRequest(t, 3, 1))
	if decodeGSM(t, tr.n1).PDUSessionEstablishmentAccept == nil {
		t.Fatal("the freed address was not handed out again")
	}
}

// A UDM that fails the SMF's UECM registration: #38 at once, nothing kept.
func TestUECMFailureRejectsWith38(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.core.uecmFails = true
	a := s.post(t, smContextsPath, s.createData(subscribed, "internet", 1), n1Part(establishmentRequest(t, 1, 1)))
	var e models.SmContextCreateError
	if err := json.Unmarshal(a.json, &e); err != nil || a.status != 504 || e.Error.Cause != "NETWORK_FAILURE" {
		t.Fatalf("answer %d %s, want 504 NETWORK_FAILURE", a.status, a.json)
	}
	if rej := decodeGSM(t, a.parts[e.N1SmMsg.ContentId].Data).PDUSessionEstablishmentReject; rej == nil || rej.Cause5GSM.GetCauseValue() != nasx.GSMCauseNetworkFailure {
		t.Fatalf("Reject %+v, want #38", rej)
	}
	s.assertNothingHeld(t)
}

// A UE asking IPv4v6 gets an IPv4 session and #50 in the Accept (TS
// 24.501 6.4.1.3: "PDU session type IPv4 only allowed").
func TestIPv4v6IsAnsweredWithIPv4And50(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	_, tr := s.established(t, subscribed, 1, withIEs(establishmentRequest(t, 1, 1), nasx.PDUSessionTypeIPv4v6))
	acc := decodeGSM(t, tr.n1).PDUSessionEstablishmentAccept
	if acc == nil || acc.Cause5GSM == nil || acc.Cause5GSM.GetCauseValue() != nasx.GSMCausePDUSessionTypeIPv4OnlyAllowed ||
		acc.SelectedSSCModeAndSelectedPDUSessionType.GetPDUSessionType() != nasx.PDUSessionTypeIPv4 {
		t.Fatalf("Accept % x, want IPv4 with #50", tr.n1)
	}
}
