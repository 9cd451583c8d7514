package e2e

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
)

// AN release and a UE-triggered Service Request on the wire (TS 23.502
// 4.2.6, 4.2.3.2), without a user plane: tshark dissects every packet
// clean, and the NGAP procedures and 5GMM messages come in the flow's
// order: UE Context Release Request, Command, Complete; Initial UE
// Message with the Service Request (and the whole request again inside
// its NAS message container); Initial Context Setup with the Service
// Accept and the session, and its response.
func TestServiceRequestOnTheWireIsWhatTSharkExpects(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) { c.AMF.NAS.Ciphering = []string{"NEA0"} })
	startCore(t, cfg, path)
	capture := startCapture(t, n2Port(cfg))
	g := connectGNB(t, cfg)
	ctx := procCtx(t)
	ue := newUE(t, cfg, g, 0, "null")
	if _, err := ue.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ue.AwaitConfigurationUpdate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ue.RequestPDUSession(ctx, 1, "internet"); err != nil {
		t.Fatal(err)
	}
	if _, err := ue.GoIdle(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(bench.IdleDwell) // as after inactivity
	if _, err := ue.RequestService(ctx); err != nil {
		t.Fatal(err)
	}
	if ue.Idle() || ue.Session(1).Tunnel == nil {
		t.Fatalf("after the Service Request: idle %v, session 1 %+v", ue.Idle(), ue.Session(1))
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
	hex := func(v uint8) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
	from := slices.Index(procs, code(ngapType.ProcedureCodeUEContextReleaseRequest))
	if from < 0 {
		t.Fatalf("no UE Context Release Request on N2: %v", procs)
	}
	wantProcs := []string{
		code(ngapType.ProcedureCodeUEContextReleaseRequest),
		code(ngapType.ProcedureCodeUEContextRelease), // command
		code(ngapType.ProcedureCodeUEContextRelease), // complete
		code(ngapType.ProcedureCodeInitialUEMessage), // Service Request
		code(ngapType.ProcedureCodeInitialContextSetup),
		code(ngapType.ProcedureCodeInitialContextSetup), // response
	}
	if got := procs[from:min(len(procs), from+len(wantProcs))]; !slices.Equal(got, wantProcs) {
		t.Errorf("NGAP procedures from the release on:\n got %v\nwant %v", got, wantProcs)
	}
	at := slices.Index(gmm, hex(nas.MsgTypeServiceRequest))
	want := []string{hex(nas.MsgTypeServiceRequest), hex(nas.MsgTypeServiceRequest), hex(nas.MsgTypeServiceAccept)}
	if at < 0 || !slices.Equal(gmm[at:min(len(gmm), at+len(want))], want) {
		t.Errorf("5GMM messages: %v, want %v in a row", gmm, want)
	}
	if t.Failed() {
		t.Logf("the capture:\n%s", capture.summary())
	}
}
