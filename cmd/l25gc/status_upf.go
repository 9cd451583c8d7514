package main

// `l25gc status` for the user plane (issue 11 item 1): UPF-U's ports with
// their devices, addresses and counters, its drops by reason and the
// sessions in the rule tables. The counters come from UPF-U's /metrics
// (the l25gc_upf_* families upf/shm's Collector serves), not from the
// tables themselves: opening the tables is UPF-C's and UPF-U's business,
// and a scrape works the same for a UPF-U on a node whose hugepages this
// process cannot map.

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/upf/u"
)

// upfPortCounters are one port's counters as UPF-U exports them.
type upfPortCounters struct {
	RxPackets, RxBytes, TxPackets, TxBytes uint64
	Replies                                map[string]uint64 // arp, icmp_echo, gtpu_echo, error_indication
}

// upfCounters are UPF-U's counters read from its /metrics.
type upfCounters struct {
	Ports    map[string]*upfPortCounters // "n3", "n6"
	Drops    map[string]uint64           // by reason
	Sessions uint64
	// Downlink buffering for idle UEs (paging) and handover.
	Buffered   uint64            // packets held now
	Buffer     map[string]uint64 // buffered, flushed, overflow, discarded totals
	Reports    uint64            // Downlink Data notes for UPF-C's Session Reports
	EndMarkers uint64
	// Idle naps by what ended them: packet (a port received: the first
	// downlink packet to an idle UE did not wait the nap out), other.
	Naps map[string]uint64
}

// The families upf/shm.NewCollector serves.
const (
	metricUPFPackets  = "l25gc_upf_port_packets_total"
	metricUPFBytes    = "l25gc_upf_port_bytes_total"
	metricUPFReplies  = "l25gc_upf_replies_total"
	metricUPFDrops    = "l25gc_upf_drops_total"
	metricUPFSessions = "l25gc_upf_sessions"
	metricUPFBuffered = "l25gc_upf_buffered_packets"
	metricUPFBuffer   = "l25gc_upf_buffer_packets_total"
	metricUPFReports  = "l25gc_upf_downlink_data_reports_total"
	metricUPFEndMarks = "l25gc_upf_end_markers_total"
	metricUPFNaps     = "l25gc_upf_naps_total"
)

// parseUPFMetrics reads UPF-U's counters from a Prometheus text exposition.
// A page without the sessions gauge is not UPF-U's: that is an error, so
// status never shows zeros for a port it did not read.
func parseUPFMetrics(r io.Reader) (upfCounters, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return upfCounters{}, fmt.Errorf("UPF-U metrics: %w", err)
	}
	sessions, ok := fams[metricUPFSessions]
	if !ok || len(sessions.GetMetric()) == 0 {
		return upfCounters{}, fmt.Errorf("UPF-U metrics: no %s: is this UPF-U's metrics port?", metricUPFSessions)
	}
	c := upfCounters{Ports: map[string]*upfPortCounters{}, Drops: map[string]uint64{}, Buffer: map[string]uint64{},
		Naps: map[string]uint64{}, Sessions: uint64(sessions.GetMetric()[0].GetGauge().GetValue())}
	for _, m := range fams[metricUPFPackets].GetMetric() {
		p := c.port(label(m, "port"))
		setDirection(label(m, "dir"), counterValue(m), &p.RxPackets, &p.TxPackets)
	}
	for _, m := range fams[metricUPFBytes].GetMetric() {
		p := c.port(label(m, "port"))
		setDirection(label(m, "dir"), counterValue(m), &p.RxBytes, &p.TxBytes)
	}
	for _, m := range fams[metricUPFReplies].GetMetric() {
		c.port(label(m, "port")).Replies[label(m, "kind")] = counterValue(m)
	}
	for _, m := range fams[metricUPFDrops].GetMetric() {
		c.Drops[label(m, "reason")] = counterValue(m)
	}
	for _, m := range fams[metricUPFBuffer].GetMetric() {
		c.Buffer[label(m, "event")] = counterValue(m)
	}
	for _, m := range fams[metricUPFNaps].GetMetric() {
		c.Naps[label(m, "ended_by")] = counterValue(m)
	}
	c.Buffered = firstValue(fams[metricUPFBuffered])
	c.Reports = firstValue(fams[metricUPFReports])
	c.EndMarkers = firstValue(fams[metricUPFEndMarks])
	return c, nil
}

// firstValue is the value of a family of one series (0 when absent: an
// older UPF-U).
func firstValue(f *dto.MetricFamily) uint64 {
	if f == nil || len(f.GetMetric()) == 0 {
		return 0
	}
	m := f.GetMetric()[0]
	if m.GetGauge() != nil {
		return uint64(m.GetGauge().GetValue())
	}
	return counterValue(m)
}

func (c upfCounters) port(name string) *upfPortCounters {
	p, ok := c.Ports[name]
	if !ok {
		p = &upfPortCounters{Replies: map[string]uint64{}}
		c.Ports[name] = p
	}
	return p
}

func setDirection(dir string, v uint64, rx, tx *uint64) {
	switch dir {
	case "rx":
		*rx = v
	case "tx":
		*tx = v
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func counterValue(m *dto.Metric) uint64 {
	if m.GetCounter() != nil {
		return uint64(m.GetCounter().GetValue())
	}
	return uint64(m.GetUntyped().GetValue())
}

// fetchUPFCounters scrapes UPF-U's /metrics at metricsAddr (host:port).
func fetchUPFCounters(client *http.Client, metricsAddr string) (upfCounters, error) {
	url := "http://" + metricsAddr + "/metrics"
	resp, err := client.Get(url)
	if err != nil {
		return upfCounters{}, fmt.Errorf("UPF-U does not answer on %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return upfCounters{}, fmt.Errorf("UPF-U's %s answered %s", url, resp.Status)
	}
	return parseUPFMetrics(resp.Body)
}

// upfPortInfo is what config says of a port: the DPDK device UPF-U opens
// and its address there.
type upfPortInfo struct{ Name, Device, Address string }

// upfPortsOf are UPF-U's ports as cfg gives them (the lab af_packet
// devices when upf.n3.port/upf.n6.port are empty), in N3, N6 order.
func upfPortsOf(cfg *config.Config) []upfPortInfo {
	n3 := upfPortInfo{Name: "n3", Device: cfg.UPF.N3.Port, Address: cfg.UPF.N3.IP}
	n6 := upfPortInfo{Name: "n6", Device: cfg.UPF.N6.Port, Address: cfg.UPF.N6.IP}
	if n3.Device == "" {
		n3.Device = u.LabN3Dev
	}
	if n6.Device == "" {
		n6.Device = u.LabN6Dev
	}
	return []upfPortInfo{n3, n6}
}

// printUPFStatus writes UPF-U's section of `l25gc status`: one line saying
// why there is nothing to show, or its ports, drops and sessions.
func printUPFStatus(w io.Writer, client *http.Client, st *node.State, cfg *config.Config) error {
	p := findNF(st, "upf-u")
	switch {
	case p == nil:
		_, err := fmt.Fprintln(w, "UPF-U: not run by this node (nfs has no upf-u)")
		return err
	case !node.Alive(p.PID):
		_, err := fmt.Fprintf(w, "UPF-U: not running (pid %d is gone); no user-plane counters\n", p.PID)
		return err
	}
	c, err := fetchUPFCounters(client, p.MetricsAddr)
	if err != nil {
		_, err = fmt.Fprintf(w, "UPF-U: pid %d is running but shows no counters: %v\n", p.PID, err)
		return err
	}
	return formatUPFStatus(w, p.PID, upfPortsOf(cfg), c)
}

func findNF(st *node.State, name string) *node.Process {
	for _, p := range st.NFs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// formatUPFStatus is the table of UPF-U's ports, then its replies, drops
// (the reasons with a count, so a reader sees at once what went wrong)
// and sessions.
func formatUPFStatus(w io.Writer, pid int, ports []upfPortInfo, c upfCounters) error {
	fmt.Fprintf(w, "UPF-U pid %d: %d sessions in the rule tables\n", pid, c.Sessions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tDEVICE\tADDRESS\tRX PKTS\tRX BYTES\tTX PKTS\tTX BYTES\tREPLIES")
	for _, port := range ports {
		pc := c.Ports[port.Name]
		if pc == nil {
			pc = &upfPortCounters{}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", port.Name, port.Device, port.Address,
			pc.RxPackets, pc.RxBytes, pc.TxPackets, pc.TxBytes, nonZero(pc.Replies))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "drops: %s\n", nonZero(c.Drops)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "downlink buffer: %d held now; %s; %d downlink data reports, %d end markers\n",
		c.Buffered, nonZero(c.Buffer), c.Reports, c.EndMarkers); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "idle naps ended by: %s\n", nonZero(c.Naps))
	return err
}

// nonZero lists the non-zero counts of m as "name N, …" by name, or "none".
func nonZero(m map[string]uint64) string {
	var parts []string
	for name, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
