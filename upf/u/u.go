// Package u is UPF-U, the user plane's forwarding process (DESIGN.md "User
// plane"): a DPDK process of its own that owns the N3 and N6 ports and
// forwards GTP-U and IPv4 between them with the rules UPF-C writes into the
// shared tables (onvm/include/upf_shm.h, package upf/shm); port.c says why
// it owns its ports rather than taking packets from the onvm manager.
// The fast path is C (this directory); Go starts it, runs its loop on one
// locked OS thread, and stops it.
package u

/*
#cgo CFLAGS: -D_GNU_SOURCE -I${SRCDIR}/../../onvm/include -I${SRCDIR}/../../qos -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -mssse3 -O3
#cgo LDFLAGS: -lrte_eal -lrte_mempool -lrte_mbuf -lrte_ethdev -lrte_bus_vdev -lrte_net
#include <stdlib.h>
#include "upfu.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
)

// Port is one UPF-U interface.
type Port struct {
	// Dev is DPDK devargs (net_af_packet0,iface=eth1, net_null0, ...) or a
	// PCI address of a NIC bound to vfio-pci.
	Dev     string
	IP      netip.Prefix // our address and its prefix
	Gateway netip.Addr   // next hop off the prefix (invalid = none)
}

// Config is what UPF-U runs with.
type Config struct {
	Tables      shm.Config // where the rule tables are (MaxSessions is set from here)
	N3, N6      Port
	MaxSessions int
	// Spin is how long it keeps polling after the last packet (default
	// 200µs); then it sleeps between polls, each sleep twice the last, up
	// to Sleep (default 1ms: an idle UPF-U wakes 1000 times a second).
	// A packet ends the nap where the port can say so (rx_wake.c: the
	// PMD's Rx interrupt, or a side socket for net_af_packet), and UPF-C's
	// doorbell ends it for a rule change, so the nap's length costs only a
	// port without either. Before rx_wake the first packet after a pause
	// waited for the nap's end (paging's downlink packet, TS 23.502
	// 4.2.3.3 step 1: ~1ms of a lone paging's 2.25ms with 1ms), and 250µs
	// was the default; at rest that cost UPF-U 6.1-6.5 % of one core
	// (bench idle --sbi xio --window 20s, three alternated pairs, stop 17),
	// the whole core 6.9-7.4 % against issue 11's goal of 5 %; with 1ms
	// UPF-U 1.7-2.1 %, the core 2.4-2.9 %. What it costs: a lone paging's
	// first packet 0.70-0.74 ms p50 against 0.64-0.71 (bench paging --ues
	// 30 --concurrency 1, three pairs): the wake-up of a vCPU that halts
	// longer, not the nap, which the packet ends.
	Spin, Sleep time.Duration
	// Buffer bounds downlink buffering (upf.buffer; 0: its defaults).
	// UPF-U holds at most half its mbuf pool whatever Total says.
	Buffer config.UPFBuffer
	// QoS bounds the shaping of QoS flows (upf.qos; zero: no shaping).
	QoS config.UPFQoS
}

// Lab ports: the UPF ends of the veth pairs `l25gc up` builds. The socket
// ring holds 4096 frames: with af_packet's default 512, a burst arriving
// while UPF-U naps overflowed it here at 250 kpps.
const (
	LabN3Dev = "net_af_packet_n3,iface=l25gc-n3,framecnt=4096"
	LabN6Dev = "net_af_packet_n6,iface=l25gc-n6,framecnt=4096"
)

// FromConfig reads upf.n3, upf.n6 and upf.max_sessions; errors name the
// field.
func FromConfig(c *config.Config) (Config, error) {
	out := Config{MaxSessions: c.UPF.MaxSessions, Tables: shm.ConfigFor(c), Buffer: c.UPF.Buffer, QoS: c.UPF.QoS}
	var err error
	if out.N3, err = portFrom("upf.n3", c.UPF.N3, LabN3Dev); err != nil {
		return Config{}, err
	}
	if out.N6, err = portFrom("upf.n6", c.UPF.N6, LabN6Dev); err != nil {
		return Config{}, err
	}
	return out, nil
}

func portFrom(field string, p config.UPFPort, lab string) (Port, error) {
	out := Port{Dev: p.Port}
	if out.Dev == "" {
		out.Dev = lab
	}
	var err error
	if out.IP, err = netip.ParsePrefix(p.IP); err != nil || !out.IP.Addr().Is4() {
		return Port{}, fmt.Errorf("%s.ip %q: want an IPv4 address with its prefix, e.g. 10.100.0.1/24", field, p.IP)
	}
	if p.Gateway != "" {
		if out.Gateway, err = netip.ParseAddr(p.Gateway); err != nil || !out.Gateway.Is4() {
			return Port{}, fmt.Errorf("%s.gateway %q: want an IPv4 address", field, p.Gateway)
		}
	}
	return out, nil
}

func (c Config) withDefaults() Config {
	c.Tables.MaxSessions = c.MaxSessions
	if c.Spin == 0 {
		c.Spin = 200 * time.Microsecond
	}
	if c.Sleep == 0 {
		c.Sleep = time.Millisecond
	}
	return c
}

// UPF is a started UPF-U.
type UPF struct {
	cfg     Config
	mu      sync.Mutex
	running bool
	done    chan struct{}
	table   *shm.Table
}

var started bool // EAL and the ports come up once per process

// Start attaches to the onvm manager and the rule tables and brings up the
// ports; Run then forwards. Once per process.
func Start(cfg Config) (*UPF, error) {
	cfg = cfg.withDefaults()
	if started {
		return nil, errors.New("upf-u: Start runs once per process (DPDK EAL)")
	}
	started = true
	cc, err := cConfig(cfg)
	if err != nil {
		return nil, err
	}
	var errbuf [512]C.char
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if C.upfu_start(cc, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		C.free(unsafe.Pointer(cc))
		return nil, fmt.Errorf("upf-u: %s", C.GoString(&errbuf[0]))
	}
	C.free(unsafe.Pointer(cc))
	return &UPF{cfg: cfg, done: make(chan struct{})}, nil
}

func cConfig(cfg Config) (*C.struct_upfu_conf, error) {
	if cfg.MaxSessions <= 0 {
		return nil, fmt.Errorf("upf-u: upf.max_sessions %d: want > 0", cfg.MaxSessions)
	}
	cc := (*C.struct_upfu_conf)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_upfu_conf{}))))
	if path := cfg.Tables.Path(); len(path) < len(cc.tables) {
		putString(cc.tables[:], path)
	}
	for i, p := range []Port{cfg.N3, cfg.N6} {
		if len(p.Dev) >= len(cc.port[i].dev) || strings.ContainsRune(p.Dev, ' ') {
			C.free(unsafe.Pointer(cc))
			return nil, fmt.Errorf("upf-u: port %q: want DPDK devargs without spaces", p.Dev)
		}
		putString(cc.port[i].dev[:], p.Dev)
		cc.port[i].ip = C.uint32_t(v4(p.IP.Addr()))
		cc.port[i].plen = C.uint32_t(p.IP.Bits())
		if p.Gateway.IsValid() {
			cc.port[i].gateway = C.uint32_t(v4(p.Gateway))
		}
	}
	cc.max_sessions = C.uint32_t(cfg.MaxSessions)
	cc.spin_us = C.uint32_t(cfg.Spin / time.Microsecond)
	cc.sleep_us = C.uint32_t(cfg.Sleep / time.Microsecond)
	cc.buf_per_session = C.uint32_t(max(cfg.Buffer.PerSession, 0))
	cc.buf_total = C.uint32_t(max(cfg.Buffer.Total, 0))
	cc.qos_max_sessions = C.uint32_t(max(cfg.QoS.MaxShapedSessions, 0))
	cc.qos_queue_us = C.uint32_t(max(cfg.QoS.Queue/time.Microsecond, 0))
	return cc, nil
}

func putString(dst []C.char, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = C.char(s[i])
	}
}

func v4(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Run forwards on one locked OS thread until ctx is done, then closes the
// ports.
func (u *UPF) Run(ctx context.Context) error {
	u.mu.Lock()
	if u.running {
		u.mu.Unlock()
		return errors.New("upf-u: already running")
	}
	u.running = true
	u.mu.Unlock()
	go func() {
		runtime.LockOSThread() // the loop never returns to Go until stopped
		C.upfu_run()
		close(u.done)
	}()
	<-ctx.Done()
	C.upfu_stop()
	<-u.done
	C.upfu_close()
	return nil
}

// MAC is the hardware address of port n3 (true) or n6.
func (u *UPF) MAC(n3 bool) net.HardwareAddr {
	mac := make([]byte, 6)
	i := C.int(1)
	if n3 {
		i = 0
	}
	C.upfu_port_mac(i, (*C.uint8_t)(unsafe.Pointer(&mac[0])))
	return mac
}

// Table opens the rule tables UPF-U forwards with from this process: for
// in-process benchmarks and tools.
func (u *UPF) Table() (*shm.Table, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.table == nil {
		t, err := shm.Open(u.cfg.Tables)
		if err != nil {
			return nil, err
		}
		u.table = t
	}
	return u.table, nil
}
