package e2e

// Network-requested PDU session modification end to end (TS 23.502
// 4.3.3.2, step 1b from the PCF, TS 29.512 4.2.3.2; issue 13): `l25gc
// policy set` with a new Session-AMBR, then a
// GBR flow, then new GBR/MBR for that flow. The simulated UE and gNB must
// hold what the SMF decided (the UE from the Modification Command, TS
// 24.501 8.3.9; the gNB from the PDU Session Resource Modify Request
// Transfer, TS 38.413 9.3.4.3), `l25gc session show` the new rates, and
// tshark must read every N2 message without a malformed one. The core has
// UPF-C without UPF-U: no user plane runs, so no lab lock is needed.

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

const gbrFilter = "filter=permit out 17 from 10.200.0.2 5202 to assigned;5qi=1"

// modificationLab is a core (UPF-C, no UPF-U), N2 captured with NAS
// readable (NEA0), and one UE with PDU session 1 serving the network's
// commands.
type modificationLab struct {
	cfg     *config.Config
	path    string
	capture *capture
	ue      *ransim.UE
	supi    string
}

func startModificationLab(t *testing.T) *modificationLab {
	t.Helper()
	l := &modificationLab{}
	l.cfg, l.path = coreConfig(t, t.TempDir(), func(c *config.Config) { c.AMF.NAS.Ciphering = []string{"NEA0"} })
	startCore(t, l.cfg, l.path)
	_, portStr, _ := strings.Cut(l.cfg.AMF.NGAP.Addr, ":")
	port, _ := strconv.Atoi(portStr)
	l.capture = startCapture(t, port)
	l.ue = sessionUE(t, l.cfg, connectGNB(t, l.cfg))
	l.supi = smfSessions(t, l.cfg)[0].SUPI
	return l
}

// wire ends the capture, fails on a malformed packet, checks that the N2
// carried requests PDU Session Resource Modify Requests and as many
// responses, and that tshark reads each of want in them.
func (l *modificationLab) wire(t *testing.T, requests int, want ...string) {
	t.Helper()
	l.capture.stop(t)
	modifies := 0
	for _, p := range l.capture.dissect(t) {
		for _, c := range p.procedures {
			if c == strconv.Itoa(int(ngapType.ProcedureCodePDUSessionResourceModify)) {
				modifies++
			}
		}
	}
	if modifies != 2*requests {
		t.Errorf("%d PDU Session Resource Modify messages on N2, want %d requests and their responses:\n%s", modifies, requests, l.capture.summary())
	}
	text := l.capture.Tshark(t, "-V", "-Y", "ngap.procedureCode == 26")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("tshark reads no %q in the Modify Requests", w)
		}
	}
}

// Item 2 of the task: a new Session-AMBR alone (straight to the SMF's
// admin API here; the next test goes the default way, through the PCF)
// reaches the UE (Session-AMBR IE) and the gNB (PDU Session Aggregate
// Maximum Bit Rate), and session show prints it.
func TestNewSessionAMBRReachesTheUEAndTheGNB(t *testing.T) {
	l := startModificationLab(t)
	policySet(t, l.path, l.supi, "--session-ambr", "12 Mbps/24 Mbps", "--via", "smf")
	awaitQoS(t, "the new Session-AMBR at the UE and the gNB", func() bool {
		a, _, _ := l.ue.SessionQoS(1)
		q, _ := l.ue.SessionRANQoS(1)
		return a == nasx.SessionAMBR{UplinkBps: 12e6, DownlinkBps: 24e6} && q.AMBR.Up == 12e6 && q.AMBR.Down == 24e6
	})
	if out, err := exec.Command(binary, "session", "show", l.supi, "--config", l.path).CombinedOutput(); err != nil || !strings.Contains(string(out), "12 / 24 Mbit/s") {
		t.Fatalf("l25gc session show: %v\n%s", err, out)
	}
	l.wire(t, 1, "pDUSessionAggregateMaximumBitRateDL: 24000000", "pDUSessionAggregateMaximumBitRateUL: 12000000",
		"Session-AMBR for downlink: 24000 Kbps", "Session-AMBR for uplink: 12000 Kbps")
}

// Item 3: a GBR flow, then new GBR/MBR for it through the PCF: its QER,
// the UE's "modify existing" flow description and the gNB's flow
// parameters change, and session show prints the new rates.
func TestPolicyChangesAFlowsGBRAndMBR(t *testing.T) {
	l := startModificationLab(t)
	policySet(t, l.path, l.supi, "--qos-flow", gbrFilter+";gbr=2 Mbps/2 Mbps;mbr=5 Mbps/5 Mbps")
	qfi, _ := strconv.Atoi(awaitFlowAdded(t, l.cfg, "1"))
	policySet(t, l.path, l.supi, "--qos-flow", gbrFilter+";gbr=4 Mbps/4 Mbps;mbr=7 Mbps/7 Mbps")
	awaitQoS(t, "the new GBR/MBR at the UE and the gNB", func() bool {
		_, flows, _ := l.ue.SessionQoS(1)
		q, _ := l.ue.SessionRANQoS(1)
		f, ok := q.Flow(uint8(qfi))
		return ok && f.GFBRDown == 4e6 && f.MFBRUp == 7e6 && flowRate(flows, uint8(qfi), nasType.ParameterIdentifierMFBRDownlink) == 7e6
	})
	out, err := exec.Command(binary, "session", "show", l.supi, "--config", l.path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "4 / 4 Mbit/s") || !strings.Contains(string(out), "7 / 7 Mbit/s") {
		t.Fatalf("l25gc session show: %v\n%s", err, out)
	}
	if s := smfSessions(t, l.cfg)[0]; len(s.Flows) != 2 || s.Flows[1].Pending {
		t.Fatalf("SMF session %+v", s)
	}
	l.wire(t, 2, "Create new QoS flow description", "Modify existing QoS flow description", "guaranteedFlowBitRateDL: 4000000",
		"maximumFlowBitRateUL: 7000000")
}

// sessionUE registers one UE at g, gives it PDU session 1 and has it
// answer what the network sends until the test ends.
func sessionUE(t *testing.T, cfg *config.Config, g *ransim.GNB) *ransim.UE {
	t.Helper()
	ctx := procCtx(t)
	ue := newUE(t, cfg, g, 0, "null")
	if _, err := ue.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ue.AwaitConfigurationUpdate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ue.RequestPDUSession(ctx, 1, "internet"); err != nil {
		t.Fatalf("PDU Session Establishment: %v", err)
	}
	serve, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ue.Serve(serve) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the UE serving the network's commands: %v", err)
		}
	})
	return ue
}

func policySet(t *testing.T, cfgPath, supi string, args ...string) {
	t.Helper()
	out, err := exec.Command(binary, append([]string{"policy", "set", supi, "--config", cfgPath}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("l25gc policy set %v: %v\n%s", args, err, out)
	}
}

// awaitQoS polls ok for up to 20 s (after a policy set or a handover).
func awaitQoS(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not there after 20 s", what)
		}
	}
}

// flowRate is a rate parameter of flow qfi's description at the UE, in bit/s.
func flowRate(flows nasType.QoSFlowDescs, qfi uint8, id nasType.QoSFlowParameterIdentifier) uint64 {
	for _, f := range flows {
		if f.QFI != qfi {
			continue
		}
		for _, p := range f.Parameters {
			if p.Identifier() != id {
				continue
			}
			if b, err := p.MarshalBinary(); err == nil && len(b) == 3 {
				return nasx.BitRate(b[0], uint16(b[1])<<8|uint16(b[2]))
			}
		}
	}
	return 0
}

// A QoS flow the target gNB refuses in a handover (N2: QoS Flow Failed to
// Setup List; Xn: left out of the accepted flows) is removed by the SMF
// once the UE is there (TS 23.502 4.9.1.3.3 step 11, 4.9.1.2.2): the SMF's
// session and the UE's QoS flow descriptions lose it, the default flow
// stays. The core has UPF-C without UPF-U (no lab lock).
func TestFlowsTheTargetGNBRefusesAreRemovedAfterHandover(t *testing.T) {
	for _, kind := range []string{"n2", "xn"} {
		t.Run(kind, func(t *testing.T) {
			cfg, path := coreConfig(t, t.TempDir(), nil)
			startCore(t, cfg, path)
			ctx := procCtx(t)
			gnbs, err := ransim.ConnectGNBs(ctx, bench.GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport), 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gnbs {
				t.Cleanup(func() { g.Close() })
			}
			ue := sessionUE(t, cfg, gnbs[0])
			supi := smfSessions(t, cfg)[0].SUPI
			policySet(t, path, supi, "--qos-flow", gbrFilter+";gbr=2 Mbps/2 Mbps;mbr=5 Mbps/5 Mbps")
			qfi, _ := strconv.Atoi(awaitFlowAdded(t, cfg, "1"))
			gnbs[1].RefuseQoSFlows(uint8(qfi))
			if kind == "n2" {
				_, err = ue.HandoverN2(ctx, gnbs[1], ransim.N2Options{})
			} else {
				_, err = ue.HandoverXn(ctx, gnbs[1])
			}
			if err != nil {
				t.Fatalf("%s handover: %v", kind, err)
			}
			awaitQoS(t, "the refused flow removed at the SMF and the UE", func() bool {
				s := smfSessions(t, cfg)
				_, flows, _ := ue.SessionQoS(1)
				return len(s) == 1 && len(s[0].Flows) == 1 && s[0].Flows[0].QFI == 1 && len(flows) == 1 && flows[0].QFI == 1
			})
			if q, _ := ue.SessionRANQoS(1); len(q.Flows) != 1 || q.Flows[0].QFI != 1 {
				t.Errorf("the target gNB holds flows %+v, want the default one", q.Flows)
			}
		})
	}
}

// A policy the UPF cannot install: flows are added until UPF-C's rule
// tables refuse one (PFCP cause 75, No resources available, TS 29.244
// 8.2.1). `l25gc policy set` then fails with the SMF's ProblemDetails —
// INSUFFICIENT_RESOURCES, the PFCP cause and the flow that did not fit —
// not the 504 TARGET_NF_NOT_REACHABLE of a UPF that does not answer; the
// session keeps the flows it had.
func TestPolicyTheUPFCannotInstallNamesThePFCPCause(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), nil)
	startCore(t, cfg, path)
	sessionUE(t, cfg, connectGNB(t, cfg))
	supi := smfSessions(t, cfg)[0].SUPI
	for port := 6000; port < 6062; port++ {
		flow := "filter=permit out 17 from 10.200.0.2 " + strconv.Itoa(port) + " to assigned;5qi=1;gbr=1 Mbps/1 Mbps;mbr=2 Mbps/2 Mbps"
		out, err := exec.Command(binary, "policy", "set", supi, "--config", path, "--qos-flow", flow).CombinedOutput()
		if err == nil {
			continue
		}
		t.Logf("l25gc policy set for the flow of port %d:\n%s", port, out)
		for _, want := range []string{"500 Internal Server Error INSUFFICIENT_RESOURCES", "PFCP cause 75 (No resources available)", "did not fit"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("l25gc policy set says no %q:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), "TARGET_NF_NOT_REACHABLE") || strings.Contains(string(out), `{"`) {
			t.Errorf("l25gc policy set:\n%s", out)
		}
		if n := len(smfSessions(t, cfg)[0].Flows); n != port-6000+1 {
			t.Errorf("the session shows %d flows after %d were added, want them all and the default one", n, port-6000)
		}
		return
	}
	t.Skip("UPF-C's rule tables took 62 flows: nothing to refuse")
}
