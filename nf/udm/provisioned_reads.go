package udm

// One UDR read for both data sets of TS 23.502 4.2.2.2.2 step 14b. The AMF
// asks the AM data and the SMF selection data of a registering UE with two
// Nudm_SDM_Get requests at once (nf/amf/registration_prefetch.go); the UDM
// reads both from the UDR with one provisioned-data request (TS 29.505
// 5.2.2.1, dataset-names=AM,SMF_SEL) and answers each Get from it.
//
// Invalidation: a read serves each data set at most once, and only to a
// Get that comes within pairWait of the read's start. Any other Get reads
// the UDR again, so nothing is older than that, and an SDM Get repeated
// later (another registration, a data change the AMF heard of) sees the
// UDR's current data.
//
// Errors stay those of the single-set resources: a read that fails other
// than with USER_NOT_FOUND, or lacks the set, is repeated on the set's own
// resource, whose answer (DATA_NOT_FOUND, a UDR failure) is the one given.
// A UDR without provisioned-data (404, 405, 501, 400) is asked per set from
// then on.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// dataSet is one provisioned data set the pair read covers.
type dataSet uint8

const (
	setAM dataSet = 1 << iota
	setSMFSel
	bothSets = setAM | setSMFSel
)

// path is the set's own resource below {supi}/{plmn}/provisioned-data/.
func (s dataSet) path() string {
	if s == setAM {
		return "am-data"
	}
	return "smf-selection-subscription-data"
}

// pairWait bounds how long after a read the other set's Get may use it:
// the AMF sends the two at once, so they meet within microseconds.
const pairWait = 2 * time.Second

// pairRead is one provisioned-data read; its fields are set before done
// closes.
type pairRead struct {
	done       chan struct{}
	am, smfSel json.RawMessage
	err        error
	served     dataSet // sets handed out (under pairReads.mu)
	started    time.Time
}

func (p *pairRead) set(s dataSet) json.RawMessage {
	if s == setAM {
		return p.am
	}
	return p.smfSel
}

// pairReads are the reads whose other set has not been asked yet, by
// supi/plmn; bounded by the subscribers and pruned of old ones.
type pairReads struct {
	mu  sync.Mutex
	m   map[string]*pairRead
	now func() time.Time
}

func newPairReads() *pairReads {
	return &pairReads{m: map[string]*pairRead{}, now: time.Now}
}

// join returns the read to answer set from: a recent one that has not
// served set yet, or a new one the caller must make (mine).
func (r *pairReads) join(key string, s dataSet) (p *pairRead, mine bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if p = r.m[key]; p != nil && p.served&s == 0 && now.Sub(p.started) < pairWait {
		p.served |= s
		if p.served == bothSets {
			delete(r.m, key)
		}
		return p, false
	}
	if len(r.m) >= maxPairReads {
		r.prune(now)
	}
	p = &pairRead{done: make(chan struct{}), served: s, started: now}
	r.m[key] = p
	return p, true
}

// maxPairReads is when join drops reads older than pairWait (Gets of one
// set only, e.g. from other NFs, leave their read behind).
const maxPairReads = 1024

func (r *pairReads) prune(now time.Time) {
	for k, p := range r.m {
		if now.Sub(p.started) >= pairWait {
			delete(r.m, k)
		}
	}
}

// provisionedSet answers Nudm_SDM_Get of set s (TS 29.503 5.2.2.2.3 AM
// data, 5.2.2.2.5 SMF selection data) as the UDR holds it, unchanged.
func (n *NF) provisionedSet(ctx context.Context, supi, plmn string, s dataSet) (json.RawMessage, error) {
	p, mine := n.pairs.join(supi+"/"+plmn, s)
	if mine {
		p.am, p.smfSel, p.err = n.udr.provisionedPair(ctx, supi, plmn)
		close(p.done)
	} else {
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if sbi.CauseOf(p.err) == sbi.CauseUserNotFound {
		return nil, p.err
	}
	if raw := p.set(s); p.err == nil && len(raw) > 0 {
		return raw, nil
	}
	return n.udr.dataSetRaw(ctx, supi, plmn, s.path())
}

// provisionedPair reads the AM and SMF selection data in one request.
func (u *udrClient) provisionedPair(ctx context.Context, supi, plmn string) (am, smfSel json.RawMessage, err error) {
	base, err := u.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDR, models.ServiceName_NUDR_DR)
	if err != nil {
		return nil, nil, err
	}
	if _, no := u.noPairs.Load(base); no {
		return nil, nil, errNoPairRead
	}
	var out struct {
		AmData     json.RawMessage `json:"amData"`
		SmfSelData json.RawMessage `json:"smfSelData"`
	}
	_, err = u.c.Do(ctx, http.MethodGet, base+udrDataPath+url.PathEscape(supi)+"/"+url.PathEscape(plmn)+"/provisioned-data?dataset-names=AM,SMF_SEL", nil, &out)
	switch status, cause := sbi.StatusOf(err), sbi.CauseOf(err); {
	case err == nil:
		return out.AmData, out.SmfSelData, nil
	case status == http.StatusNotFound && cause == sbi.CauseUserNotFound:
		return nil, nil, err
	case status == http.StatusNotFound && cause != sbi.CauseDataNotFound,
		status == http.StatusMethodNotAllowed, status == http.StatusNotImplemented, status == http.StatusBadRequest:
		u.noPairs.Store(base, struct{}{})
	}
	return nil, nil, errNoPairRead
}

// errNoPairRead: read the set on its own resource.
var errNoPairRead = errors.New("no provisioned-data read")

// dataSetRaw reads one provisioned data set as the UDR sent it (an empty
// body is an empty data set). Nudm_SDM_Get answers the UDR's data
// unchanged, so decoding it into the model and encoding it again would
// only cost CPU; decoding into a json.RawMessage still checks it is JSON.
func (u *udrClient) dataSetRaw(ctx context.Context, supi, plmn, set string) (json.RawMessage, error) {
	var out json.RawMessage
	err := u.do(ctx, http.MethodGet, url.PathEscape(supi)+"/"+url.PathEscape(plmn)+"/provisioned-data/"+set, nil, &out)
	if err == nil && len(out) == 0 {
		out = json.RawMessage("{}")
	}
	return out, err
}
