package udr

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/embedded"
	"github.com/l25gc/l25gc/nf/udr/store/mongodb"
)

// OpenStore opens the backend cfg.UDR.Store names.
func OpenStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	sc := cfg.UDR.Store
	switch sc.Backend {
	case "", "embedded":
		return embedded.Open(StorePath(cfg))
	case "mongodb":
		return mongodb.Open(ctx, sc.MongoDB.URI, sc.MongoDB.Database)
	default:
		return nil, fmt.Errorf("udr.store.backend %q: want embedded or mongodb", sc.Backend)
	}
}

// StorePath is the embedded store's file: udr.store.path, relative to
// data_dir unless absolute.
func StorePath(cfg *config.Config) string {
	p := cfg.UDR.Store.Path
	if p == "" {
		p = "udr.db"
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cfg.DataDir, p)
}

// defaultsOf completes provisioning requests with the node's slices and
// DNNs, and a UE AMBR of 1 Gbps up, 2 Gbps down (free5GC's sample values).
func defaultsOf(cfg *config.Config) prov.Defaults {
	d := prov.Defaults{DNNs: append([]string(nil), cfg.DNNs...), AMBR: prov.AMBR{Uplink: "1 Gbps", Downlink: "2 Gbps"}}
	d.SNSSAIs = append(d.SNSSAIs, cfg.SNSSAIs...)
	return d
}

// rangeOf is a configured subscriber range in the provisioning API's shape.
func rangeOf(r config.SubscriberRange) prov.Range {
	s := prov.Subscriber{IMSI: r.IMSI, K: r.K, OPc: r.OPc, OP: r.OP, SQN: r.SQN, AMF: r.AMF, DNNs: r.DNNs}
	s.SNSSAIs = append(s.SNSSAIs, r.SNSSAIs...)
	s.Session = &prov.SessionQoS{FiveQI: r.FiveQI, ARPPriority: r.ARPPriority} // zero fields take defaults
	if a := r.SessionAMBR; a != nil {
		s.Session.AMBR = prov.AMBR{Uplink: a.Uplink, Downlink: a.Downlink}
	}
	return prov.Range{Subscriber: s, Count: r.Count}
}

// provisionConfigured adds the config's subscriber ranges that are absent,
// so a fresh core and the simulator work with no editing.
func (n *NF) provisionConfigured(ctx context.Context) error {
	for i, r := range n.env.Config.Subscribers {
		res, err := n.addRange(ctx, rangeOf(r))
		if err != nil {
			return fmt.Errorf("udr: subscribers[%d]: %w", i, err)
		}
		n.log.Info("subscriber range provisioned", "first", r.IMSI, "count", r.Count, "added", res.Added, "existing", res.Existing)
	}
	return nil
}

// invalidRequest is a provisioning request that can never succeed.
type invalidRequest struct{ error }

// bulkChunk is how many subscribers go to the store in one call: memory
// stays that of one chunk whatever the range, and a request that ends
// (its client gone, the UDR stopping) stops within one chunk.
const bulkChunk = 1000

// addRange stores the subscribers of r that are absent, a chunk at a time
// until ctx ends. The result counts what was done, also on failure.
func (n *NF) addRange(ctx context.Context, r prov.Range) (prov.BulkResult, error) {
	res := prov.BulkResult{Requested: r.Count}
	r.Subscriber = r.Subscriber.WithDefaults(n.defaults)
	if err := r.Subscriber.Validate(); err != nil {
		return res, invalidRequest{err}
	}
	chunks, err := r.Split(bulkChunk)
	if err != nil {
		return res, invalidRequest{err}
	}
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		recs, err := prov.ToRecords(c, n.plmn)
		if err != nil {
			return res, invalidRequest{err}
		}
		added, err := n.store.AddAbsent(ctx, recs)
		if err != nil {
			return res, err
		}
		res.Added += added
		res.Existing += len(recs) - added
	}
	return res, nil
}
