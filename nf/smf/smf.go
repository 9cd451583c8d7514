// Package smf is the session management function of L25GC+ (TS 23.501
// 6.2.2): Nsmf_PDUSession (TS 29.502) for the AMF, PDU sessions set up,
// modified and released as TS 23.502 4.3.2.2.1, 4.3.3.2 and 4.3.4.2 say,
// 5GSM toward the UE (TS 24.501 6.4), N2 SM information toward the gNB
// (TS 38.413 9.3.4), N4 toward the UPF through an injected rules.N4 (TS
// 29.244), and UE IPv4 addresses from per-DNN pools.
package smf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/gopool"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

const (
	smContextsPath = "/nsmf-pdusession/v1/sm-contexts"
	callbackPrefix = "/nsmf-callback/v1/"
	// procedureTimeout bounds a procedure the SMF runs on its own after
	// answering the AMF (the rest of an establishment, a network-requested
	// modification or release).
	procedureTimeout = 10 * time.Second
)

// Options are what the SMF is wired to besides its environment.
type Options struct {
	// N4 reaches the UPF (protocol/pfcpx's client). Without one every
	// establishment is rejected with #26, as with an unreachable UPF.
	N4 rules.N4
	// UPFAddr is the UPF's N4 address given to N4 ("" = config.SMFUPFAddr).
	UPFAddr string
	// LeaseDir keeps the UE address leases ("" = <data_dir>/smf/leases;
	// "-" = in memory only).
	LeaseDir string
}

// NF is the SMF.
type NF struct {
	env    *nf.Env
	log    *slog.Logger
	id     string
	n4     rules.N4
	upf    string
	cpAddr netip.Addr // the SMF's address in its F-SEID (TS 29.244 8.2.37)
	pools  ipPools
	ctxs   *contexts
	peers  peers
	m      *metrics
	// releaseTimeout is T3592 (tests shorten it).
	releaseTimeout time.Duration
	// pagingGuard waits after an AMF's temporary reject before paging
	// again (pdu_paging.go; tests shorten it).
	pagingGuard time.Duration
	// pagingTimeout ends a paging attempt the AMF never ended
	// (pdu_paging.go; tests shorten it).
	pagingTimeout time.Duration
	// forwardingHold keeps indirect forwarding after a handover
	// (pdu_handover.go; tests shorten it).
	forwardingHold time.Duration
	bg             sync.WaitGroup // procedures running after their answer
	bgMu           sync.Mutex     // orders background's Add before Stop's Wait
	stopped        bool
	stop           context.Context
	cancel         context.CancelFunc
	// workers run background procedures and parallel reads on goroutines
	// whose stacks have grown already (internal/gopool).
	workers *gopool.Pool
}

// New builds the SMF without a UPF (see NewWithOptions).
func New(env *nf.Env) (*NF, error) { return NewWithOptions(env, Options{}) }

// NewWithOptions builds the SMF.
func NewWithOptions(env *nf.Env, o Options) (*NF, error) {
	cfg := env.Config
	if o.UPFAddr == "" {
		o.UPFAddr = cfg.SMFUPFAddr()
	}
	switch o.LeaseDir {
	case "":
		o.LeaseDir = filepath.Join(cfg.DataDir, "smf", "leases")
	case "-":
		o.LeaseDir = ""
	}
	pools, err := newIPPools(cfg.SMF.DNNs, o.LeaseDir)
	if err != nil {
		return nil, err
	}
	cp, _ := netip.ParseAddr(cfg.AdvertisedIP())
	stop, cancel := context.WithCancel(context.Background())
	n := &NF{env: env, log: env.Log, n4: o.N4, upf: o.UPFAddr, cpAddr: cp, pools: pools, ctxs: newContexts(),
		id:    sbi.InstanceID(models.NrfNfManagementNfType_SMF, cfg.AdvertisedAddr(cfg.SMF.SBIPort)),
		peers: peers{env: env}, stop: stop, cancel: cancel, releaseTimeout: t3592, pagingGuard: pagingGuard, forwardingHold: forwardingHold,
		pagingTimeout: pagingTimeout, workers: gopool.New(0)}
	n.m = newMetrics(env.Registry, n)
	if r, ok := o.N4.(rules.Reporter); ok {
		r.OnReport(n.handleReport) // TS 23.502 4.2.3.3 step 2a: the UPF's Downlink Data Reports
	}
	return n, nil
}

// Handler serves nsmf-pdusession, the callbacks the SMF gave the PCF and
// the AMF (N1N2 transfer failure), and the admin API (handler_admin.go).
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+smContextsPath, n.handleCreate)
	mux.HandleFunc("POST "+smContextsPath+"/{smContextRef}/modify", n.handleUpdate)
	mux.HandleFunc("POST "+smContextsPath+"/{smContextRef}/release", n.handleRelease)
	mux.HandleFunc("POST "+callbackPrefix+"sm-policies/{smContextRef}/update", n.handlePolicyUpdate)
	mux.HandleFunc("POST "+callbackPrefix+"sm-policies/{smContextRef}/terminate", n.handlePolicyTerminate)
	mux.HandleFunc("POST "+n1n2FailurePath+"{smContextRef}", n.handleN1N2Failure)
	n.routeAdmin(mux)
	return mux
}

// Profile is the SMF's NRF profile (TS 29.510 6.1.6.2.2), with the slices
// and DNNs it serves so the AMF selects it by them (smfInfo, 6.1.6.2.22).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	p := sbi.Profile(n.id, models.NrfNfManagementNfType_SMF, cfg.AdvertisedIP(), cfg.SMF.SBIPort, n.env.PLMN(),
		models.ServiceName_NSMF_PDUSESSION)
	var dnns []models.DnnSmfInfoItem
	for _, d := range cfg.SMF.DNNs {
		dnns = append(dnns, models.DnnSmfInfoItem{Dnn: d.DNN})
	}
	info := &models.SmfInfo{}
	for _, s := range cfg.SNSSAIs {
		ext := models.ExtSnssai{Sst: int32(s.SST), Sd: s.SD}
		p.SNssais = append(p.SNssais, ext)
		info.SNssaiSmfInfoList = append(info.SNssaiSmfInfoList, models.SnssaiSmfInfoItem{SNssai: &ext, DnnSmfInfoList: dnns})
	}
	p.SmfInfo = info
	return p
}

// Start has no background work of its own.
func (n *NF) Start(context.Context) error { return nil }

// Stop ends the procedures still running, closes the address leases'
// logs, then the N4 client if it has sockets to close (pfcpx.Client).
func (n *NF) Stop(context.Context) {
	n.bgMu.Lock()
	n.stopped = true
	n.bgMu.Unlock()
	n.cancel()
	n.bg.Wait()
	n.pools.close()
	if c, ok := n.n4.(io.Closer); ok {
		_ = c.Close()
	}
}

// background runs a procedure after its request was answered, or when
// a timer fired, bounded by procedureTimeout and ended by Stop; after
// Stop it runs nothing (a timer may still fire).
func (n *NF) background(f func(ctx context.Context)) {
	if run := n.procedure(f); run != nil {
		n.workers.Go(run)
	}
}

// procedure is f as background runs it, counted for Stop from now on;
// nil after Stop.
func (n *NF) procedure(f func(ctx context.Context)) func() {
	n.bgMu.Lock()
	if n.stopped {
		n.bgMu.Unlock()
		return nil
	}
	n.bg.Add(1) // before Stop's Wait, never concurrently with it
	n.bgMu.Unlock()
	return func() {
		defer n.bg.Done()
		ctx, cancel := context.WithTimeout(n.stop, procedureTimeout)
		defer cancel()
		f(ctx)
	}
}

// errNoUPF: the SMF was built without N4.
var errNoUPF = errors.New("no UPF: the SMF has no N4 client")

func (n *NF) n4Client() (rules.N4, error) {
	if n.n4 == nil {
		return nil, errNoUPF
	}
	return n.n4, nil
}

func (n *NF) String() string { return fmt.Sprintf("SMF %s", n.id) }
