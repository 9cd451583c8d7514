// Package embedded is the UDR's default store: every subscriber in memory,
// made durable by an append-only log file under the data dir.
//
// Why a log and not a database library: the hot operations are a lookup by
// ueId and an SQN update per authentication (thousands per second). A map
// answers the first in well under a microsecond, and an SQN update is one
// short line appended with one write(2), so the UDR never waits on a B-tree
// page rewrite or an fsync per request. The log is rewritten (compacted) to
// one record per subscriber when it has grown to twice the live data, at open
// and while running, via a temporary file renamed over the old one, so a
// crash at any point leaves either the old or the new log complete.
//
// Durability: each change reaches the kernel before the call returns (it
// survives a crash of the process); the file is fsynced every second and on
// Close. A power loss may therefore lose up to a second of SQN updates; the
// UE then answers with a synchronisation failure and the AUTS procedure
// moves SQN_HE forward again (TS 33.102 6.3.5), so no UE is locked out.
//
// The log is JSON lines: a header, then "put" (a whole subscriber), "del",
// "sqn", "amf" (AMF 3GPP access registration), "smf" and "smfdel" (SMF
// registration of a PDU session) records. A torn last line
// (crash mid-write) is cut off at open; a bad line elsewhere is an error.
// The file handling (replay, torn tail, compaction, periodic fsync) is
// package keylog's, shared with the AMF's UE-context store; this package
// keeps the records and the map.
package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/keylog"
	"github.com/l25gc/l25gc/nf/udr/store"
)

// format names the log layout in its header line.
const format = "l25gc-udr-log/1"

// record is one line of the log (after the header keylog writes).
type record struct {
	Op      string                            `json:"op"` // put | del | sqn | amf | smf | smfdel
	UeID    string                            `json:"ue,omitempty"`
	SQN     string                            `json:"sqn,omitempty"`
	Sub     *store.Subscriber                 `json:"sub,omitempty"`
	AMF3GPP *models.Amf3GppAccessRegistration `json:"amf3gpp,omitempty"`
	SMF     *models.SmfRegistration           `json:"smf,omitempty"`
	PDUID   int32                             `json:"pdu,omitempty"` // smfdel: the PDU session id
}

// entry is one UE in memory. sub and amf are never modified in place:
// updates build new values, so readers may keep what they were given.
type entry struct {
	sub *store.Subscriber
	// amf is the UE's "amf" record as the log has it. It is decoded when
	// read, which is rare, not when written, once per registration: the
	// write needed a copy of the caller's registration anyway, and a
	// decode per read gives each reader a copy of its own.
	amf []byte
	smf map[int32]smfEntry // SMF registrations by PDU session id
	// putSize and amfSize are the bytes of its records in a compacted log.
	putSize, amfSize int64
}

// smfEntry is one SMF registration and the bytes of its record.
type smfEntry struct {
	reg  *models.SmfRegistration
	size int64
}

func (e *entry) size() int64 {
	n := e.putSize + e.amfSize
	for _, r := range e.smf {
		n += r.size
	}
	return n
}

// Store is the embedded backend; it is safe for concurrent use.
type Store struct {
	mu     sync.RWMutex
	log    *keylog.Log
	ues    map[string]*entry
	sorted []string // ueIds in order; nil when stale
	live   int64    // sum of entry sizes
	closed bool
}

var _ store.Store = (*Store)(nil)

// Open loads the log at path (creating it and its directory if absent) and
// starts the periodic fsync.
func Open(path string) (*Store, error) {
	s := &Store{ues: map[string]*entry{}}
	l, err := keylog.Open(path, keylog.Options{Format: format}, s.replayLine)
	if err != nil {
		return nil, fmt.Errorf("embedded store: %w", err)
	}
	s.log = l
	if l.Oversized(s.live) {
		s.maybeCompact()
	}
	return s, nil
}

// replayLine applies one record of the log at open.
func (s *Store) replayLine(b []byte) error {
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return err
	}
	return s.apply(&rec, int64(len(b)))
}

// apply changes memory by one record of n bytes.
func (s *Store) apply(rec *record, n int64) error {
	switch rec.Op {
	case "put":
		if rec.Sub == nil || rec.Sub.UeID == "" {
			return errors.New("put record without a subscriber")
		}
		s.setEntry(rec.Sub.UeID, &entry{sub: rec.Sub, putSize: n})
	case "del":
		s.deleteEntry(rec.UeID)
	case "sqn":
		if e := s.ues[rec.UeID]; e != nil {
			e.sub = withSQN(e.sub, rec.SQN)
		}
	case "amf":
		if e := s.ues[rec.UeID]; e != nil {
			s.replayAMF(e, rec)
		}
	case "smf":
		if e := s.ues[rec.UeID]; e != nil && rec.SMF != nil {
			s.setSMF(e, rec.SMF, n)
		}
	case "smfdel":
		if e := s.ues[rec.UeID]; e != nil {
			s.deleteSMF(e, rec.PDUID)
		}
	default:
		return fmt.Errorf("unknown record %q", rec.Op)
	}
	return nil
}

// replayAMF sets e's AMF registration from a record of the log, written
// again as PutAMF3GPPAccess encodes it. A record without a registration
// (an older writer stored a nil one) clears it.
func (s *Store) replayAMF(e *entry, rec *record) {
	if rec.AMF3GPP == nil {
		s.setAMF(e, nil)
		return
	}
	b, err := encode(rec)
	if err != nil { // decoded from JSON a moment ago: it encodes
		s.setAMF(e, nil)
		return
	}
	s.setAMF(e, b)
}

// setAMF stores rec, an encoded "amf" record, as e's AMF registration.
func (s *Store) setAMF(e *entry, rec []byte) {
	n := int64(len(rec))
	s.live += n - e.amfSize
	e.amf, e.amfSize = rec, n
}

// setSMF stores reg (its PDU session's registration) in a fresh map, so
// readers holding the old one are not disturbed.
func (s *Store) setSMF(e *entry, reg *models.SmfRegistration, n int64) {
	m := make(map[int32]smfEntry, len(e.smf)+1)
	for id, r := range e.smf {
		m[id] = r
	}
	s.live += n - m[reg.PduSessionId].size
	m[reg.PduSessionId] = smfEntry{reg: reg, size: n}
	e.smf = m
}

func (s *Store) deleteSMF(e *entry, id int32) {
	old, ok := e.smf[id]
	if !ok {
		return
	}
	m := make(map[int32]smfEntry, len(e.smf))
	for k, r := range e.smf {
		if k != id {
			m[k] = r
		}
	}
	s.live -= old.size
	e.smf = m
}

// setEntry stores a (re)provisioned UE; its AMF and SMF registrations,
// which describe the UE's current registration and sessions rather than
// its subscription, carry over.
func (s *Store) setEntry(ueID string, e *entry) {
	if old, ok := s.ues[ueID]; ok {
		s.live -= old.size()
		e.amf, e.amfSize, e.smf = old.amf, old.amfSize, old.smf
	} else {
		s.sorted = nil
	}
	s.ues[ueID] = e
	s.live += e.size()
}

func (s *Store) deleteEntry(ueID string) {
	if old, ok := s.ues[ueID]; ok {
		s.live -= old.size()
		delete(s.ues, ueID)
		s.sorted = nil
	}
}

func withSQN(sub *store.Subscriber, sqn string) *store.Subscriber {
	c := *sub
	c.Auth = store.SetSQNIn(sub.Auth, sqn)
	return &c
}

// emitSnapshot writes one put (and amf) record per UE, recomputing each
// UE's size; the caller holds s.mu.
func (s *Store) emitSnapshot(emit func([]byte) error) error {
	s.live = 0
	for ueID, e := range s.ues {
		put, err := encode(&record{Op: "put", Sub: e.sub})
		if err != nil {
			return err
		}
		e.putSize, e.amfSize = int64(len(put)), 0
		if err := emit(put); err != nil {
			return err
		}
		if e.amf != nil {
			e.amfSize = int64(len(e.amf))
			if err := emit(e.amf); err != nil {
				return err
			}
		}
		if err := emitSMFRecords(emit, ueID, e); err != nil {
			return err
		}
		s.live += e.size()
	}
	return nil
}

// emitSMFRecords writes one smf record per SMF registration of the UE,
// recomputing their sizes.
func emitSMFRecords(emit func([]byte) error, ueID string, e *entry) error {
	for id, r := range e.smf {
		b, err := encode(&record{Op: "smf", UeID: ueID, SMF: r.reg})
		if err != nil {
			return err
		}
		if err := emit(b); err != nil {
			return err
		}
		e.smf[id] = smfEntry{reg: r.reg, size: int64(len(b))}
	}
	return nil
}

func encode(rec *record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// appendLog writes records' bytes to the log; the caller holds s.mu.
func (s *Store) appendLog(b []byte) error {
	if s.closed {
		return errors.New("embedded store: closed")
	}
	if err := s.log.Append(b); err != nil {
		return fmt.Errorf("embedded store: %w", err)
	}
	return nil
}

// maybeCompact runs after a write; the caller holds s.mu. A failed
// compaction leaves the old log in place and in use, so it is dropped: the
// change itself is already durable.
func (s *Store) maybeCompact() {
	if s.log.Oversized(s.live) {
		live := s.live
		if err := s.log.Compact(s.emitSnapshot); err != nil {
			s.live = live
		}
	}
}

// decodeSub deep-copies a subscriber through its log encoding, so the store
// never shares memory with what the caller passed in.
func decodeSub(put []byte) (*store.Subscriber, error) {
	var rec record
	if err := json.Unmarshal(bytes.TrimSpace(put), &rec); err != nil {
		return nil, err
	}
	return rec.Sub, nil
}

// PutSubscriber implements store.Store.
func (s *Store) PutSubscriber(_ context.Context, sub *store.Subscriber) error {
	if sub == nil || sub.UeID == "" {
		return errors.New("embedded store: subscriber without ueId")
	}
	put, err := encode(&record{Op: "put", Sub: sub})
	if err != nil {
		return fmt.Errorf("embedded store: %w", err)
	}
	copied, err := decodeSub(put)
	if err != nil {
		return fmt.Errorf("embedded store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.appendLog(put); err != nil {
		return err
	}
	s.setEntry(sub.UeID, &entry{sub: copied, putSize: int64(len(put))})
	s.maybeCompact()
	return nil
}

// AddAbsent implements store.Store: all new subscribers go to the log in one
// write, and into memory as given.
func (s *Store) AddAbsent(_ context.Context, subs []*store.Subscriber) (int, error) {
	type prepared struct {
		sub *store.Subscriber
		put []byte
	}
	s.mu.RLock()
	todo := make([]prepared, 0, len(subs))
	seen := make(map[string]bool, len(subs))
	for _, sub := range subs {
		if sub == nil || sub.UeID == "" {
			s.mu.RUnlock()
			return 0, errors.New("embedded store: subscriber without ueId")
		}
		if _, ok := s.ues[sub.UeID]; !ok && !seen[sub.UeID] {
			seen[sub.UeID] = true
			todo = append(todo, prepared{sub: sub})
		}
	}
	s.mu.RUnlock()

	var buf bytes.Buffer
	var enc rangeEncoder
	for i := range todo {
		put, err := enc.put(todo[i].sub)
		if err != nil {
			return 0, fmt.Errorf("embedded store: %w", err)
		}
		todo[i].put = put // the caller hands subs over: no copy (see store.Store)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var added []string
	for _, p := range todo {
		if _, ok := s.ues[p.sub.UeID]; ok {
			continue // added by someone else since the check
		}
		buf.Write(p.put)
		s.setEntry(p.sub.UeID, &entry{sub: p.sub, putSize: int64(len(p.put))})
		added = append(added, p.sub.UeID)
	}
	if buf.Len() > 0 {
		if err := s.appendLog(buf.Bytes()); err != nil {
			for _, id := range added {
				s.deleteEntry(id) // not durable: take it back
			}
			return 0, err
		}
	}
	s.maybeCompact()
	return len(added), nil
}

// rangeEncoder writes the put records of a batch. The subscribers of a
// provisioned range differ only in their ueId (and share their nested
// data), so it encodes the first as a template and gives the others the
// template's bytes with their own ueId: a bulk add of 10,000 costs one
// JSON encoding of the data sets, not 10,000.
type rangeEncoder struct {
	last *store.Subscriber // the subscriber tmpl was made from
	tmpl []byte            // its put record with "ueId":"", after the prefix
}

// putPrefix is how every put record starts: Subscriber's first field is
// its ueId.
const putPrefix = `{"op":"put","sub":{"ueId":`

func (e *rangeEncoder) put(sub *store.Subscriber) ([]byte, error) {
	if e.last == nil || !sameButUeID(e.last, sub) {
		blank := *sub
		blank.UeID = ""
		b, err := encode(&record{Op: "put", Sub: &blank})
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte(putPrefix+`""`)) {
			return nil, fmt.Errorf("put record of %s does not start with its ueId", sub.UeID)
		}
		e.last, e.tmpl = sub, b[len(putPrefix)+2:]
	}
	id, err := json.Marshal(sub.UeID)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(putPrefix)+len(id)+len(e.tmpl))
	return append(append(append(out, putPrefix...), id...), e.tmpl...), nil
}

// sameButUeID says whether a and b hold the same data apart from their
// ueId. Data shared between them compares in constant time (DeepEqual
// stops at identical pointers, maps and slices).
func sameButUeID(a, b *store.Subscriber) bool {
	x, y := *a, *b
	x.UeID, y.UeID = "", ""
	return reflect.DeepEqual(x, y)
}

func (s *Store) get(ueID string) (*entry, error) {
	e, ok := s.ues[ueID]
	if !ok {
		return nil, store.ErrNotFound
	}
	return e, nil
}

// Subscriber implements store.Store.
func (s *Store) Subscriber(_ context.Context, ueID string) (*store.Subscriber, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	c := *e.sub
	return &c, nil
}

// DeleteSubscriber implements store.Store.
func (s *Store) DeleteSubscriber(_ context.Context, ueID string) error {
	del, err := encode(&record{Op: "del", UeID: ueID})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.get(ueID); err != nil {
		return err
	}
	if err := s.appendLog(del); err != nil {
		return err
	}
	s.deleteEntry(ueID)
	s.maybeCompact()
	return nil
}

// List implements store.Store.
func (s *Store) List(_ context.Context, offset, limit int) ([]*store.Subscriber, int, error) {
	s.mu.Lock() // may rebuild the sorted index
	defer s.mu.Unlock()
	if s.sorted == nil {
		s.sorted = make([]string, 0, len(s.ues))
		for id := range s.ues {
			s.sorted = append(s.sorted, id)
		}
		sort.Strings(s.sorted)
	}
	total := len(s.sorted)
	if offset < 0 {
		offset = 0
	}
	if offset > total {
		offset = total
	}
	end := total
	if limit >= 0 && offset+limit < total {
		end = offset + limit
	}
	out := make([]*store.Subscriber, 0, end-offset)
	for _, id := range s.sorted[offset:end] {
		c := *s.ues[id].sub
		out = append(out, &c)
	}
	return out, total, nil
}

// AuthSubscription implements store.Store.
func (s *Store) AuthSubscription(_ context.Context, ueID string) (*models.AuthenticationSubscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	a := e.sub.Auth
	if a.SequenceNumber != nil {
		seq := *a.SequenceNumber
		a.SequenceNumber = &seq
	}
	return &a, nil
}

// SetSQN implements store.Store.
func (s *Store) SetSQN(_ context.Context, ueID, expected, next string) error {
	if err := store.CheckSQN(next); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(ueID)
	if err != nil {
		return err
	}
	if expected != "" && !equalHex(e.sub.SQN(), expected) {
		return store.ErrConflict
	}
	return s.writeSQN(e, ueID, next)
}

// IncrementSQN implements store.Store; the store lock serialises callers.
func (s *Store) IncrementSQN(_ context.Context, ueID string, delta uint64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(ueID)
	if err != nil {
		return "", err
	}
	next, err := store.AddSQN(e.sub.SQN(), delta)
	if err != nil {
		return "", err
	}
	if err := s.writeSQN(e, ueID, next); err != nil {
		return "", err
	}
	return next, nil
}

func (s *Store) writeSQN(e *entry, ueID, sqn string) error {
	rec, err := encode(&record{Op: "sqn", UeID: ueID, SQN: sqn})
	if err != nil {
		return err
	}
	if err := s.appendLog(rec); err != nil {
		return err
	}
	e.sub = withSQN(e.sub, sqn)
	s.maybeCompact()
	return nil
}

func equalHex(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// AMData implements store.Store.
func (s *Store) AMData(_ context.Context, ueID, plmn string) (*models.AccessAndMobilitySubscriptionData, error) {
	sub, err := s.provisioned(ueID, plmn)
	if err != nil {
		return nil, err
	}
	am := sub.AM
	return &am, nil
}

// SMFSelection implements store.Store.
func (s *Store) SMFSelection(_ context.Context, ueID, plmn string) (*models.SmfSelectionSubscriptionData, error) {
	sub, err := s.provisioned(ueID, plmn)
	if err != nil {
		return nil, err
	}
	sel := sub.SMFSelection
	return &sel, nil
}

// SMData implements store.Store.
func (s *Store) SMData(_ context.Context, ueID, plmn string, snssai *models.Snssai, dnn string) ([]models.SessionManagementSubscriptionData, error) {
	sub, err := s.provisioned(ueID, plmn)
	if err != nil {
		return nil, err
	}
	return store.FilterSM(sub.SM, snssai, dnn), nil
}

// provisioned finds the UE's data provisioned for the serving PLMN.
func (s *Store) provisioned(ueID, plmn string) (*store.Subscriber, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	if e.sub.ServingPlmnID != plmn {
		return nil, store.ErrNotFound
	}
	return e.sub, nil
}

// AMPolicy implements store.Store.
func (s *Store) AMPolicy(_ context.Context, ueID string) (*models.AmPolicyData, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	p := e.sub.AMPolicy
	return &p, nil
}

// SMPolicy implements store.Store.
func (s *Store) SMPolicy(_ context.Context, ueID string, snssai *models.Snssai, dnn string) (*models.SmPolicyData, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	if e.sub.SMPolicy.SmPolicySnssaiData == nil {
		return nil, store.ErrNotFound
	}
	p := store.FilterSMPolicy(e.sub.SMPolicy, snssai, dnn)
	return &p, nil
}

// PolicyFlows implements store.Store.
func (s *Store) PolicyFlows(_ context.Context, ueID string) ([]store.FlowRule, []store.QosFlow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, nil, err
	}
	return e.sub.FlowRules, e.sub.QosFlows, nil
}

// PutSMFRegistration implements store.Store.
func (s *Store) PutSMFRegistration(_ context.Context, ueID string, reg *models.SmfRegistration) (bool, error) {
	rec, err := encode(&record{Op: "smf", UeID: ueID, SMF: reg})
	if err != nil {
		return false, err
	}
	var copied record
	if err := json.Unmarshal(rec, &copied); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(ueID)
	if err != nil {
		return false, err
	}
	if err := s.appendLog(rec); err != nil {
		return false, err
	}
	_, replaced := e.smf[reg.PduSessionId]
	s.setSMF(e, copied.SMF, int64(len(rec)))
	s.maybeCompact()
	return replaced, nil
}

// SMFRegistrations implements store.Store.
func (s *Store) SMFRegistrations(_ context.Context, ueID string) ([]models.SmfRegistration, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.get(ueID)
	if err != nil {
		return nil, err
	}
	out := make([]models.SmfRegistration, 0, len(e.smf))
	for _, r := range e.smf {
		out = append(out, *r.reg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PduSessionId < out[j].PduSessionId })
	return out, nil
}

// DeleteSMFRegistration implements store.Store.
func (s *Store) DeleteSMFRegistration(_ context.Context, ueID string, pduSessionID int32) error {
	rec, err := encode(&record{Op: "smfdel", UeID: ueID, PDUID: pduSessionID})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(ueID)
	if err != nil {
		return err
	}
	if _, ok := e.smf[pduSessionID]; !ok {
		return store.ErrNotFound
	}
	if err := s.appendLog(rec); err != nil {
		return err
	}
	s.deleteSMF(e, pduSessionID)
	s.maybeCompact()
	return nil
}

// PutAMF3GPPAccess implements store.Store.
func (s *Store) PutAMF3GPPAccess(_ context.Context, ueID string, reg *models.Amf3GppAccessRegistration) error {
	if reg == nil {
		return errors.New("embedded store: no AMF registration to store")
	}
	rec, err := encode(&record{Op: "amf", UeID: ueID, AMF3GPP: reg})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(ueID)
	if err != nil {
		return err
	}
	if err := s.appendLog(rec); err != nil {
		return err
	}
	s.setAMF(e, rec)
	s.maybeCompact()
	return nil
}

// AMF3GPPAccess implements store.Store.
func (s *Store) AMF3GPPAccess(_ context.Context, ueID string) (*models.Amf3GppAccessRegistration, error) {
	s.mu.RLock()
	e, err := s.get(ueID)
	var rec []byte
	if err == nil {
		rec = e.amf // never changed in place: safe to decode unlocked
	}
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, store.ErrNotFound
	}
	var r record
	if err := json.Unmarshal(rec, &r); err != nil {
		return nil, fmt.Errorf("embedded store: AMF registration of %s: %w", ueID, err)
	}
	return r.AMF3GPP, nil
}

// Close implements store.Store: it stops the periodic fsync, syncs and
// closes the log.
func (s *Store) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.log.Close()
}
