package bench

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/security"
	"github.com/l25gc/l25gc/test/ransim"
)

// RegistrationOptions configure `l25gc bench registration`.
type RegistrationOptions struct {
	Config      *config.Config // the node config: PLMN, keys, addresses
	Binary      string         // l25gc executable for fresh cores; "" = this one
	SBIModes    []string       // one fresh core per SBI transport
	UECounts    []int
	Concurrency int
	// Warmup UEs register first, unmeasured, so that every measured count
	// meets a core in its steady state (connections pooled, heaps grown)
	// rather than one just started.
	Warmup int
	// AMF is the N2 address of a running core to use instead of fresh
	// ones; its UDR (Config's address) provisions the subscribers.
	AMF       string
	Transport string // N2 transport; "" = the config's
	FirstIMSI string // "" = the config's first subscriber
	Out       io.Writer
	// N3 is the simulated gNB's N3 address (bench pdu); unset: ransim.DefaultN3.
	N3 netip.Addr
	// DNN of the PDU sessions (bench pdu); "" = internet.
	DNN string
	// BackOff, when set, has registering UEs back off at #22 and try again
	// (bench registration); nil: a reject is a failure.
	BackOff *ransim.BackOff
	// Window, when set, opens where each measured run's measurement
	// starts (never in the warm-up, nor around a run's unmeasured setup:
	// startMeasuring) with the core's processes (nil on a running core),
	// for `bench --profile`; the function it returns closes it with the
	// run's results.
	Window func(pids map[string]int, mode string, ues int) func([]Result)
	// Tracing, when set, has fresh cores and the simulator export spans
	// and gives each result its breakdown (breakdown.go); nil: off.
	Tracing *Tracing
}

// Registration measures initial registration for each UE count, with
// distinct subscribers per count so no run re-registers a UE of another.
func Registration(ctx context.Context, o RegistrationOptions) ([]Result, error) {
	return measure(ctx, o, registrationRun)
}

// run measures one UE count on a connected gNB, reporting progress to
// out; the warm-up runs it too (warm), its results dropped.
type run func(ctx context.Context, g *ransim.GNB, f ransim.Fleet, mode string, out io.Writer, warm bool) ([]Result, error)

// phaseLabel names a phase on the progress line.
func phaseLabel(procedure, mode string, ues int, warm bool) string {
	if warm {
		return fmt.Sprintf("warm-up %s %s %d UEs (not measured)", procedure, mode, ues)
	}
	return fmt.Sprintf("%s %s %d UEs", procedure, mode, ues)
}

// registrationRun registers the fleet.
func registrationRun(ctx context.Context, g *ransim.GNB, f ransim.Fleet, mode string, w io.Writer, warm bool) ([]Result, error) {
	f.Progress = ProgressLine(w, phaseLabel("registration", mode, f.UEs, warm))
	startMeasuring(ctx)
	out, err := ransim.RegisterFleet(ctx, g, f)
	if err != nil {
		return nil, err
	}
	return []Result{FromOutcome("registration", mode, f.UEs, f.Concurrency, out)}, nil
}

// measure runs a benchmark on fresh cores, one per SBI mode, or on the
// running core of o.AMF.
func measure(ctx context.Context, o RegistrationOptions, r run) ([]Result, error) {
	if len(o.Config.Subscribers) == 0 {
		return nil, errors.New("bench: the config has no subscriber range to take keys from")
	}
	if o.FirstIMSI == "" {
		o.FirstIMSI = o.Config.Subscribers[0].IMSI
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	total := o.Warmup
	for _, n := range o.UECounts {
		total += n
	}
	if o.AMF != "" {
		if err := provision(ctx, o, total); err != nil {
			return nil, err
		}
		return fleetRuns(ctx, o, o.AMF, o.Config.SBI.Transport, nil, r)
	}
	var all []Result
	for _, mode := range o.SBIModes {
		results, err := onFreshCore(ctx, o, mode, total, r)
		all = append(all, results...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// onFreshCore starts a core with SBI mode and total subscribers in its own
// directories, runs every UE count against it and stops it.
func onFreshCore(ctx context.Context, o RegistrationOptions, mode string, total int, r run) ([]Result, error) {
	cfg := o.Config.Clone()
	if o.Transport != "" {
		// Both ends of N2 speak what --n2 names: under auto the AMF may pick
		// another transport (raw as root) than the one the gNB dials.
		cfg.AMF.NGAP.Transport = o.Transport
	}
	o.Tracing.configure(cfg)
	core, err := StartFreshCore(ctx, FreshCore{Config: cfg, Binary: o.Binary, SBI: mode,
		FirstIMSI: o.FirstIMSI, Subscribers: total, Out: o.Out})
	if err != nil {
		return nil, err
	}
	defer core.Stop()
	o.Config = core.Config
	return fleetRuns(ctx, o, core.Config.AMF.NGAP.Addr, mode, core.PIDs(), r)
}

// FreshCore says how to start a benchmark's own core.
type FreshCore struct {
	Config      *config.Config // template: PLMN, keys, ports
	Binary      string         // l25gc executable; "" = this one
	SBI         string         // the SBI transport, explicit (no silent fallback), with +tls, +mtls, +nooauth (applySBIMode)
	FirstIMSI   string         // first subscriber provisioned; "" = the config's
	Subscribers int            // how many, with the keys of the config's first range
	Out         io.Writer
}

// RunningCore is a benchmark's core: its config (temporary data and log
// directories) and its processes. Stop stops it and removes the directories.
type RunningCore struct {
	*node.Core
	Config *config.Config
	dir    string
}

// StartFreshCore starts a core in a temporary directory with the
// subscribers f asks for, after checking that its ports are free.
func StartFreshCore(ctx context.Context, f FreshCore) (*RunningCore, error) {
	if len(f.Config.Subscribers) == 0 {
		return nil, errors.New("bench: the config has no subscriber range to take keys from")
	}
	if f.Out == nil {
		f.Out = io.Discard
	}
	dir, err := os.MkdirTemp("", "l25gc-bench-")
	if err != nil {
		return nil, err
	}
	cfg := f.Config.Clone()
	cfg.DataDir, cfg.LogDir = filepath.Join(dir, "data"), filepath.Join(dir, "log")
	transport, err := applySBIMode(cfg, f.SBI)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cfg.LogLevel = "warn"
	r := cfg.Subscribers[0]
	if f.FirstIMSI != "" {
		r.IMSI = f.FirstIMSI
	}
	r.Count = max(f.Subscribers, 1)
	cfg.Subscribers = []config.SubscriberRange{r}
	admitOneGNBFleet(cfg, r.Count)
	path := filepath.Join(dir, "l25gc.yaml")
	if err := cfg.Save(path); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := portsFree(cfg); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fmt.Fprintf(f.Out, "starting a core with SBI %s and %d subscribers (logs in %s)\n", f.SBI, r.Count, cfg.LogDir)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	core, err := node.Start(sctx, cfg, node.Options{Binary: f.Binary, ConfigPath: path, SBI: transport})
	cancel()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bench: core with SBI %s: %w", f.SBI, err)
	}
	return &RunningCore{Core: core, Config: cfg, dir: dir}, nil
}

// Stop stops the core and removes its temporary directories.
func (c *RunningCore) Stop() {
	c.Core.Stop()
	os.RemoveAll(c.dir)
}

// portsFree refuses a fresh core whose ports are taken (node.CheckPorts
// names the port, its field and the core holding it), and says how to
// benchmark a running core instead.
func portsFree(cfg *config.Config) error {
	if err := node.CheckPorts(cfg, config.Builtin); err != nil {
		return fmt.Errorf("bench: %w; or point the benchmark at the running core with --amf", err)
	}
	return nil
}

// fleetRuns connects one gNB and runs each UE count in turn, after the
// warm-up.
func fleetRuns(ctx context.Context, o RegistrationOptions, amf, mode string, pids map[string]int, r run) ([]Result, error) {
	cfg := o.Config
	transport := o.Transport
	if transport == "" {
		transport = cfg.AMF.NGAP.Transport
	}
	gcfg := GNBConfig(cfg, amf, transport)
	if o.N3.IsValid() {
		gcfg.N3 = o.N3
	}
	g, err := ransim.Connect(ctx, gcfg)
	if err != nil {
		return nil, fmt.Errorf("bench: gNB: %w", err)
	}
	defer g.Close()
	fleet, err := FleetFor(cfg, o.FirstIMSI, "null")
	if err != nil {
		return nil, err
	}
	fleet.Concurrency, fleet.BackOff = o.Concurrency, o.BackOff
	var results []Result
	offset := 0
	if o.Warmup > 0 {
		f := fleet
		f.UEs = o.Warmup
		warm, err := r(ctx, g, f, mode, o.Out, true)
		if err != nil {
			return nil, err
		}
		for _, w := range warm {
			if w.Failed > 0 {
				return nil, fmt.Errorf("bench: %d of %d warm-up %s procedures failed: %v", w.Failed, w.UEs, w.Procedure, w.Errors)
			}
		}
		offset = o.Warmup
	}
	o.Tracing.trace(g)
	for _, n := range o.UECounts {
		f := fleet
		f.UEs = n
		if f.FirstIMSI, err = ransim.IMSI(o.FirstIMSI, offset); err != nil {
			return results, err
		}
		offset += n
		var w *measuredWindow
		if o.Window != nil {
			w = &measuredWindow{open: func() func([]Result) { return o.Window(pids, mode, n) }}
		}
		rs, err := r(withWindow(ctx, w), g, f, mode, o.Out, false)
		w.end(rs)
		if err != nil {
			return results, err
		}
		for i := range rs {
			rs[i].PeakRSSMiB = peakRSS(pids)
		}
		o.Tracing.attach(ctx, rs)
		results = append(results, rs...)
	}
	return results, nil
}

// GNBConfig is a simulated gNB in the node's PLMN and tracking area.
func GNBConfig(cfg *config.Config, amf, transport string) ransim.GNBConfig {
	var tac domain.TAC
	if len(cfg.TACs) > 0 {
		tac, _ = domain.ParseTAC(cfg.TACs[0]) // the config loader checked it
	}
	return ransim.GNBConfig{AMF: amf, Transport: transport, SCTPImpl: cfg.AMF.NGAP.SCTPImpl, PLMN: cfg.PLMN, TAC: tac, ID: 1, SNSSAIs: domain.SNSSAIsToModels(cfg.SNSSAIs)}
}

// FleetFor takes the keys of the config's first subscriber range and the
// SUCI protection scheme ("null", "profile_a", "profile_b") with the
// home network key of the config.
func FleetFor(cfg *config.Config, firstIMSI, scheme string) (ransim.Fleet, error) {
	r := cfg.Subscribers[0]
	k, err := hex.DecodeString(r.K)
	if err != nil {
		return ransim.Fleet{}, fmt.Errorf("subscribers[0].k: %w", err)
	}
	opc, err := subscriberOPc(r)
	if err != nil {
		return ransim.Fleet{}, err
	}
	c, err := Concealment(cfg, scheme)
	if err != nil {
		return ransim.Fleet{}, err
	}
	return ransim.Fleet{FirstIMSI: firstIMSI, K: k, OPc: opc, Conceal: c}, nil
}

func subscriberOPc(r config.SubscriberRange) ([]byte, error) {
	if r.OPc != "" {
		return hex.DecodeString(r.OPc)
	}
	k, _ := hex.DecodeString(r.K)
	op, err := hex.DecodeString(r.OP)
	if err != nil {
		return nil, fmt.Errorf("subscribers[0].op: %w", err)
	}
	return security.DeriveOPc(k, op)
}

// Concealment finds the home network public key for a SUCI scheme in the
// config (the UDM holds the private key; a USIM holds the public one).
func Concealment(cfg *config.Config, scheme string) (ransim.Concealment, error) {
	if scheme == "" || scheme == "null" {
		return ransim.Concealment{Scheme: security.SchemeNull}, nil
	}
	for _, key := range cfg.UDM.SUCIKeys {
		if key.Scheme != scheme {
			continue
		}
		id := uint8(security.SchemeProfileA)
		if scheme == "profile_b" {
			id = security.SchemeProfileB
		}
		priv, err := hex.DecodeString(key.PrivateKey)
		if err != nil {
			return ransim.Concealment{}, fmt.Errorf("udm.suci_keys id %d: %w", key.ID, err)
		}
		pub, err := security.PublicKeyFromPrivate(id, priv)
		if err != nil {
			return ransim.Concealment{}, fmt.Errorf("udm.suci_keys id %d: %w", key.ID, err)
		}
		return ransim.Concealment{Scheme: id, KeyID: uint8(key.ID), HNPublic: pub}, nil
	}
	return ransim.Concealment{}, fmt.Errorf("no home network key with scheme %s in udm.suci_keys", scheme)
}

// provision adds the benchmark's subscribers to a running core's UDR.
func provision(ctx context.Context, o RegistrationOptions, total int) error {
	r := o.Config.Subscribers[0]
	// A core with sbi.tls serves provisioning over TLS only.
	base := o.Config.SBIScheme() + "://" + o.Config.AdvertisedAddr(o.Config.UDR.SBIPort)
	sub := prov.Subscriber{IMSI: o.FirstIMSI, K: r.K, OPc: r.OPc, OP: r.OP, SQN: r.SQN, AMF: r.AMF, DNNs: r.DNNs}
	sub.SNSSAIs = append(sub.SNSSAIs, r.SNSSAIs...)
	token, err := prov.ReadToken(o.Config.AdminTokenPath())
	if err != nil {
		return fmt.Errorf("bench: provisioning needs the admin token: %w", err)
	}
	tcp, err := node.SBITCP(o.Config, node.ToolCert)
	if err != nil {
		return fmt.Errorf("bench: provisioning: %w", err)
	}
	c := prov.NewClient(base, tcp.RoundTripper(), token)
	res, err := c.AddRangeInBatches(ctx, prov.Range{Subscriber: sub, Count: total}, o.Config.UDR.MaxBulk, nil)
	if err != nil {
		return fmt.Errorf("bench: provisioning %d subscribers at %s: %w", total, base, err)
	}
	fmt.Fprintf(o.Out, "provisioned %d subscribers from %s (%d added, %d existed)\n", total, o.FirstIMSI, res.Added, res.Existing)
	return nil
}

// peakRSS reads each NF's peak resident set (VmHWM) from /proc.
func peakRSS(pids map[string]int) map[string]float64 {
	if len(pids) == 0 {
		return nil
	}
	out := map[string]float64{}
	for name, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				out[name] = kb / 1024
			}
		}
	}
	return out
}

// ProgressLine reports a long run on one updating line of w.
func ProgressLine(w io.Writer, label string) func(done, failed, total int) {
	return func(done, failed, total int) {
		end := "\r"
		if done == total {
			end = "\n"
		}
		fmt.Fprintf(w, "  %s: %d/%d done, %d failed%s", label, done, total, failed, end)
	}
}

// admitOneGNBFleet lets the benchmark's own core take every subscriber of
// the run on one N2 association: the simulator drives a whole fleet
// through one gNB, so the default amf.ngap.max_ues_per_gnb (16384) would
// refuse the rest of a 20,000-UE burst with #22 whatever the limiter
// does. A larger cap from the user's config stays.
func admitOneGNBFleet(cfg *config.Config, ues int) {
	cfg.AMF.NGAP.MaxUEsPerGNB = max(cfg.AMF.NGAP.MaxUEsPerGNB, ues)
	cfg.AMF.NGAP.MaxUEs = max(cfg.AMF.NGAP.MaxUEs, ues)
}
