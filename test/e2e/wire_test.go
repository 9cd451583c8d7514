package e2e

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
)

// The N2 traffic of a RAN configuration update, a registration, a PDU
// PDU session establishment and a deregistration, captured on the
// wire and dissected by tshark: no malformed packet, and the NGAP
// procedures and 5GMM messages of TS 23.502 4.2.2.2.2 / 4.2.2.3.2 in order.
// NEA0 keeps the NAS readable to the dissector (integrity stays NIA2).
func TestRegistrationOnTheWireIsWhatTSharkExpects(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) { c.AMF.NAS.Ciphering = []string{"NEA0"} })
	startCore(t, cfg, path)
	_, portStr, _ := strings.Cut(cfg.AMF.NGAP.Addr, ":")
	port, _ := strconv.Atoi(portStr)
	capture := startCapture(t, port)

	g := connectGNB(t, cfg)
	ctx := procCtx(t)
	if err := g.UpdateConfiguration(ctx); err != nil {
		t.Fatal(err)
	}
	ue := newUE(t, cfg, g, 0, "null")
	if _, err := ue.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ue.AwaitConfigurationUpdate(ctx); err != nil {
		t.Fatal(err)
	}
	// TS 23.502 4.3.2.2.1: the SMF accepts, the gNB sets the resources up.
	s, err := ue.RequestPDUSession(ctx, 1, "internet")
	if err != nil {
		t.Fatalf("PDU Session Establishment: %v", err)
	}
	if !s.Address.IsValid() {
		t.Fatalf("PDU session %+v has no UE address", s)
	}
	if _, err := ue.Deregister(ctx, false); err != nil {
		t.Fatal(err)
	}
	capture.stop(t)

	var procs, gmm []string
	for _, p := range capture.dissect(t) {
		procs = append(procs, p.procedures...)
		gmm = append(gmm, p.nasTypes...)
	}
	code := func(c int64) string { return strconv.FormatInt(c, 10) }
	wantProcs := []string{
		code(ngapType.ProcedureCodeNGSetup), code(ngapType.ProcedureCodeNGSetup),
		code(ngapType.ProcedureCodeRANConfigurationUpdate), code(ngapType.ProcedureCodeRANConfigurationUpdate),
		code(ngapType.ProcedureCodeInitialUEMessage),     // Registration Request
		code(ngapType.ProcedureCodeDownlinkNASTransport), // Authentication Request
		code(ngapType.ProcedureCodeUplinkNASTransport),   // Authentication Response
		code(ngapType.ProcedureCodeDownlinkNASTransport), // Security Mode Command
		code(ngapType.ProcedureCodeUplinkNASTransport),   // Security Mode Complete
		code(ngapType.ProcedureCodeInitialContextSetup),  // Registration Accept
		code(ngapType.ProcedureCodeInitialContextSetup),  // response
		code(ngapType.ProcedureCodeUERadioCapabilityInfoIndication),
		code(ngapType.ProcedureCodeUplinkNASTransport),      // Registration Complete
		code(ngapType.ProcedureCodeDownlinkNASTransport),    // Configuration Update Command
		code(ngapType.ProcedureCodeUplinkNASTransport),      // UL NAS Transport: PDU Session Establishment Request
		code(ngapType.ProcedureCodePDUSessionResourceSetup), // request, with DL NAS Transport: Establishment Accept
		code(ngapType.ProcedureCodePDUSessionResourceSetup), // response
		code(ngapType.ProcedureCodeUplinkNASTransport),      // Deregistration Request
		code(ngapType.ProcedureCodeDownlinkNASTransport),    // Deregistration Accept
		code(ngapType.ProcedureCodeUEContextRelease),        // command
		code(ngapType.ProcedureCodeUEContextRelease),        // complete
	}
	if !slices.Equal(procs, wantProcs) {
		t.Errorf("NGAP procedure codes on the wire:\n got %v\nwant %v", procs, wantProcs)
	}
	hex := func(t uint8) string { return "0x" + strconv.FormatUint(uint64(t), 16) }
	wantGMM := []string{
		hex(nas.MsgTypeRegistrationRequest), hex(nas.MsgTypeAuthenticationRequest), hex(nas.MsgTypeAuthenticationResponse),
		hex(nas.MsgTypeSecurityModeCommand), hex(nas.MsgTypeSecurityModeComplete),
		hex(nas.MsgTypeRegistrationRequest), // the full request inside Security Mode Complete (TS 24.501 4.4.6)
		hex(nas.MsgTypeRegistrationAccept), hex(nas.MsgTypeRegistrationComplete), hex(nas.MsgTypeConfigurationUpdateCommand),
		hex(nas.MsgTypeULNASTransport), hex(nas.MsgTypeDLNASTransport),
		hex(nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration), hex(nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration),
	}
	if !slices.Equal(gmm, wantGMM) {
		t.Errorf("5GMM message types on the wire:\n got %v\nwant %v", gmm, wantGMM)
	}
	if t.Failed() {
		t.Logf("the capture:\n%s", capture.summary())
	}
}
