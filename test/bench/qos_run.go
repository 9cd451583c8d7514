package bench

// `l25gc bench qos`: a fresh core with a user plane, one UE held by the
// simulator with its TUN in netns l25gc-ue1 (`l25gc ransim --tun --hold`),
// the case's Session-AMBR and GBR QoS flows set with `l25gc policy set` (a
// network-requested modification), then the case's UDP flows at their
// offered rates through UPF-U, downlink and then uplink.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/sbi"
)

// QoSOptions configure a QoS benchmark.
type QoSOptions struct {
	Config  *config.Config
	Binary  string // l25gc executable; "" = this one
	Case    QoSCase
	Seconds int
	Out     io.Writer
}

// DN ports of the flows: the default flow's, then one per QoS flow.
const qosBasePort = 5201

const ueNetns, dnNetns = "l25gc-ue1", "l25gc-dn"

// QoS runs the benchmark and returns one result per flow and direction.
func QoS(ctx context.Context, o QoSOptions) ([]QoSResult, error) {
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		o.Binary = exe
	}
	cfg := o.Config.Clone()
	if !slices.Contains(cfg.NFs, "upf-u") {
		cfg.NFs = append(cfg.NFs, "upf-u")
	}
	if len(o.Case.Weights) > 0 {
		cfg.SMF.QoS.Weights = o.Case.Weights
	}
	core, err := StartFreshCore(ctx, FreshCore{Config: cfg, Binary: o.Binary, SBI: cfg.SBI.Transport, Subscribers: 1, Out: o.Out})
	if err != nil {
		return nil, err
	}
	defer core.Stop()
	path := filepath.Join(core.dir, "l25gc.yaml")
	ue, stop, err := holdUE(ctx, o.Binary, path)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := applyCase(ctx, o.Binary, path, core.Config, o.Case); err != nil {
		return nil, err
	}
	var out []QoSResult
	for _, dir := range []string{"downlink", "uplink"} {
		fmt.Fprintf(o.Out, "case %s %s: %d flows for %d s\n", o.Case.Name, dir, len(o.Case.Flows), o.Seconds)
		perSecond, err := RunUDPFlows(ctx, o.Case.udpFlows(ue, dir), o.Seconds)
		if err != nil {
			return out, err
		}
		rs, err := o.Case.QoSResults(dir, perSecond)
		if err != nil {
			return out, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// udpFlows are the case's flows between the UE and the data network host;
// flow i uses DN port qosBasePort+i (its QoS flow's packet filter).
func (c QoSCase) udpFlows(ue netip.Addr, dir string) []UDPFlow {
	dn := netip.MustParseAddr("10.200.0.2")
	out := make([]UDPFlow, len(c.Flows))
	for i, f := range c.Flows {
		dnEnd, ueEnd := netip.AddrPortFrom(dn, uint16(qosBasePort+i)), netip.AddrPortFrom(ue, uint16(7000+i))
		out[i] = UDPFlow{FromNetns: dnNetns, ToNetns: ueNetns, From: dnEnd, To: ueEnd, Rate: f.Offered}
		if dir == "uplink" {
			out[i] = UDPFlow{FromNetns: ueNetns, ToNetns: dnNetns, From: ueEnd, To: dnEnd, Rate: f.Offered}
		}
	}
	return out
}

// holdUE starts `l25gc ransim --ues 1 --pdu --tun --hold` and waits for
// the UE's address; stop releases the session (Ctrl-C) and waits.
func holdUE(ctx context.Context, binary, path string) (netip.Addr, func(), error) {
	cmd := exec.Command(binary, "ransim", "--config", path, "--ues", "1", "--pdu", "--tun", "--hold", "30m")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return netip.Addr{}, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	re := regexp.MustCompile(`inet (10\.60\.\d+\.\d+)`)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-exited:
			return netip.Addr{}, nil, fmt.Errorf("bench qos: ransim ended: %v\n%s", err, log.String())
		default:
		}
		b, _ := exec.Command("ip", "-n", ueNetns, "-4", "addr").Output()
		if m := re.FindSubmatch(b); m != nil {
			return netip.MustParseAddr(string(m[1])), stop, nil
		}
	}
	stop()
	return netip.Addr{}, nil, errors.New("bench qos: the UE's TUN has no address after 60 s")
}

// applyCase sets the AMBR and adds the QoS flows with the CLI, then waits
// until the gNB confirmed them all.
func applyCase(ctx context.Context, binary, path string, cfg *config.Config, c QoSCase) error {
	sessions, err := adminSessions(ctx, cfg)
	if err != nil || len(sessions) != 1 {
		return fmt.Errorf("bench qos: the SMF's sessions: %v %+v", err, sessions)
	}
	args := []string{"policy", "set", sessions[0].SUPI, "--config", path, "--session-ambr", fmt.Sprintf("%d bps/%d bps", c.AMBR, c.AMBR)}
	want := 1
	for i, f := range c.Flows {
		if !f.QoS {
			continue
		}
		want++
		args = append(args, "--qos-flow", fmt.Sprintf("filter=permit out 17 from 10.200.0.2 %d to assigned;5qi=%d;gbr=%d bps/%d bps;mbr=%d bps/%d bps;precedence=%d",
			qosBasePort+i, qosFlow5QI, f.GBR, f.GBR, f.MBR, f.MBR, 10+i))
	}
	if out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("bench qos: l25gc policy set: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s, err := adminSessions(ctx, cfg)
		if err == nil && len(s) == 1 && confirmed(s[0]) == want {
			return nil
		}
	}
	return fmt.Errorf("bench qos: the session does not hold %d confirmed QoS flows 20 s after the policy update", want)
}

func confirmed(s smf.SessionView) int {
	n := 0
	for _, f := range s.Flows {
		if !f.Pending {
			n++
		}
	}
	return n
}

// adminSessions is the SMF admin API's session list.
func adminSessions(ctx context.Context, cfg *config.Config) ([]smf.SessionView, error) {
	token, err := prov.ReadToken(cfg.AdminTokenPath())
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+cfg.Addr(cfg.SMF.SBIPort)+"/smf-admin/v1/pdu-sessions", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	rsp, err := (&http.Client{Transport: sbi.NewTCP().RoundTripper(), Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("SMF admin API: %s", rsp.Status)
	}
	var out []smf.SessionView
	return out, json.NewDecoder(rsp.Body).Decode(&out)
}

// QoSChart writes the SVG chart of throughput over time per flow and
// direction (the paper's Fig. 10) to path.
func QoSChart(path string, results []QoSResult) error {
	p := plot.New()
	p.Title.Text = "QoS: throughput per flow (solid downlink, dashed uplink)"
	p.X.Label.Text = "s"
	p.Y.Label.Text = "Mbit/s"
	p.Add(plotter.NewGrid())
	for i, r := range results {
		xys := make(plotter.XYs, len(r.PerSecondMbps))
		for s, v := range r.PerSecondMbps {
			xys[s] = plotter.XY{X: float64(s + 1), Y: v}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i % max(1, len(results)/2)) // a flow's colour in both directions
		if r.Direction == "uplink" {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(r.Flow+" "+r.Direction+" (ideal "+strconv.FormatFloat(r.ExpectedMbps, 'f', -1, 64)+")", l)
	}
	p.Y.Min = 0
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
