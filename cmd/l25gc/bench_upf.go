package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/upf/u"
)

func init() { benchCmds = append(benchCmds, newBenchUPFCmd) }

// upfResult is one measurement in the JSON shape of issue 11 item 4, plus
// the isolated path's cost per packet.
type upfResult struct {
	Procedure       string  `json:"procedure"`
	Path            string  `json:"path"`
	Direction       string  `json:"direction"`
	PacketBytes     int     `json:"packet_bytes"`
	Sessions        int     `json:"sessions"`
	Cores           int     `json:"cores"`
	PPS             float64 `json:"pps"`
	Gbps            float64 `json:"gbps"`
	Loss            float64 `json:"loss"`
	RTTus           rtt     `json:"rtt_us"`
	NsPerPacket     float64 `json:"ns_per_packet,omitempty"`
	CyclesPerPacket float64 `json:"cycles_per_packet,omitempty"`
	WallPPS         float64 `json:"wall_pps,omitempty"`
	// QoS: every session had a Session-AMBR and a GBR flow QER, so each
	// packet went through its session's shaper (issue 13).
	QoS bool `json:"qos,omitempty"`
}

type rtt struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

func newBenchUPFCmd() *cobra.Command {
	var path, sessions, sizes, jsonPath string
	var packets uint64
	var rate int
	var qos bool
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "upf",
		Short: "UPF-U throughput per core with GTP-U + PDR + FAR + QER + URR",
		Long: "--path isolated: UPF-U's own cost, no kernel in the loop: prebuilt frames run through\n" +
			"the whole pipeline in one process and leave through net_null ports. ns and cycles per\n" +
			"packet and pps come from the forwarding thread's CPU time (one core's rate, fair on a\n" +
			"shared machine); wall_pps is the wall clock's view.\n" +
			"--path veth: UPF-U with net_af_packet ports on two veth pairs of its own, a gNB and a DN\n" +
			"host on raw sockets at the far ends offering --rate packets a second; pps is what\n" +
			"arrived, loss what did not, RTT from probes the far end reflects back through UPF-U.\n" +
			"Both need root and hugepages.",
		Example: "  l25gc bench upf --path isolated --sessions 1,10000 --bytes 64,1400 --json upf.json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path != "isolated" && path != "veth" {
				return fmt.Errorf("--path %s: want isolated or veth", path)
			}
			ss, err := intList("--sessions", sessions)
			if err != nil {
				return err
			}
			bs, err := intList("--bytes", sizes)
			if err != nil {
				return err
			}
			var results []upfResult
			if path == "veth" {
				results, err = benchUPFVeth(ss, bs, rate, duration)
			} else {
				results, err = benchUPFIsolated(ss, bs, packets, qos)
			}
			if err != nil {
				return err
			}
			return writeUPFResults(cmd.OutOrStdout(), results, jsonPath)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "path", "isolated", "isolated (DPDK only) or veth (af_packet on veth pairs of its own)")
	f.IntVar(&rate, "rate", 250_000, "veth: packets a second offered")
	f.DurationVar(&duration, "duration", 2*time.Second, "veth: how long each measurement offers traffic")
	f.StringVar(&sessions, "sessions", "1,10000", "comma-separated session counts installed")
	f.StringVar(&sizes, "bytes", "64,1400", "comma-separated packet sizes (the UE's packet as an Ethernet frame)")
	f.Uint64Var(&packets, "packets", 4_000_000, "packets per measurement")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file")
	f.BoolVar(&qos, "qos", false, "isolated: measure each case again with QoS on (a Session-AMBR and a GBR flow QER per\n"+
		"session: every packet metered, queued and released by its session's shaper), side by side")
	return cmd
}

func intList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s %q: want positive numbers separated by commas", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchUPFIsolated runs every (direction, size, sessions) in one UPF-U
// whose ports are net_null, with tables of its own.
func benchUPFIsolated(sessions, sizes []int, packets uint64, qos bool) ([]upfResult, error) {
	tables := shm.Config{MaxSessions: slices.Max(sessions), Prefix: fmt.Sprintf("l25gc-bench%d", os.Getpid())}
	defer shm.RemoveFile(tables)
	p, err := u.Start(u.Config{Tables: tables, MaxSessions: tables.MaxSessions,
		N3:  u.Port{Dev: "net_null0", IP: mustPrefix("10.100.0.1/24")},
		N6:  u.Port{Dev: "net_null1", IP: mustPrefix("10.200.0.1/24")},
		QoS: config.UPFQoS{MaxShapedSessions: tables.MaxSessions, Queue: 50 * time.Millisecond}})
	if err != nil {
		return nil, err
	}
	modes := []bool{false}
	if qos {
		modes = append(modes, true)
	}
	var out []upfResult
	for _, dir := range []string{"uplink", "downlink"} {
		for _, size := range sizes {
			for _, n := range sessions {
				for _, q := range modes {
					r, err := p.Bench(u.BenchPlan{Downlink: dir == "downlink", Sessions: n, PacketBytes: size, Packets: packets, QoS: q})
					if err != nil {
						return nil, err
					}
					out = append(out, upfResult{Procedure: "upf", Path: "isolated", Direction: dir, PacketBytes: size,
						Sessions: n, Cores: 1, PPS: r.PPS, Gbps: r.PPS * float64(size) * 8 / 1e9,
						Loss: 1 - float64(r.Forwarded)/float64(packets), NsPerPacket: r.NsPerPacket, CyclesPerPacket: r.CyclesPerPacket,
						WallPPS: r.WallPPS, QoS: q})
				}
			}
		}
	}
	return out, nil
}

func writeUPFResults(w io.Writer, rs []upfResult, jsonPath string) error {
	fmt.Fprintf(w, "%-12s %-9s %6s %8s %12s %8s %8s %10s %12s %6s %9s %9s %9s\n", "path", "direction", "bytes", "sessions",
		"pps", "gbps", "ns/pkt", "cycles/pkt", "wall pps", "loss", "rtt p50us", "rtt p99us", "qos cost")
	for i, r := range rs {
		path := r.Path
		if r.QoS {
			path += "+qos"
		}
		fmt.Fprintf(w, "%-12s %-9s %6d %8d %12.0f %8.2f %8.1f %10.1f %12.0f %6.4f %9.1f %9.1f %9s\n", path, r.Direction,
			r.PacketBytes, r.Sessions, r.PPS, r.Gbps, r.NsPerPacket, r.CyclesPerPacket, r.WallPPS, r.Loss, r.RTTus.P50, r.RTTus.P99,
			qosCost(rs, i))
	}
	if jsonPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(jsonPath, append(b, '\n'), 0o644)
}

// qosCost is what QoS took from a +qos row's rate against the row before
// it, the same case with QoS off (issue 13: at most 20 %); "" otherwise.
func qosCost(rs []upfResult, i int) string {
	if i == 0 || !rs[i].QoS || rs[i-1].QoS || rs[i-1].PPS == 0 {
		return ""
	}
	on, off := rs[i], rs[i-1]
	if on.Direction != off.Direction || on.PacketBytes != off.PacketBytes || on.Sessions != off.Sessions {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*(1-on.PPS/off.PPS))
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
