package amf

// The UE-context store: what a registered UE needs survives a restart of
// the AMF process (issue 10 item 7), so that after a SIGKILL and the
// supervisor's restart the UE's next Registration Request with its 5G-GUTI
// passes the integrity check of the restored context and is accepted
// without a new authentication (TS 24.501 5.5.1.3, TS 33.501 6.4.6).
//
// Where: an embedded log in data_dir (package keylog, the same file
// machinery as the UDR's embedded store), not a UDSF-like NF. An AMF
// restart must not depend on another NF being up (the NF it would read
// from may be the one that failed with it, e.g. on an onvm manager
// restart), and an SBI hop per UE change would cost a round trip on every
// procedure, where a local append costs one write(2) per flush for all UEs.
// The price: the contexts live on the AMF's node; an AMF replaced on
// another node (AMF set re-selection, TS 23.501 5.21) would need them in a
// shared store, which this package's record type is ready to be put in.
//
// Write-behind: procedures queue a snapshot of the UE's record (coalesced
// per 5G-TMSI); a flusher writes the queue every amf.persist.flush_interval
// (a few ms) in one append, and at once when amf.persist.max_pending UEs
// wait, a changer then waiting for that write (back-pressure, not loss).
// A crash of the process loses at most the changes of the last interval
// (what was written is in the kernel; a power loss also takes the last
// second keylog had not fsynced yet), with these consequences:
//   - a UE whose registration completed in it is unknown after the restart:
//     its Registration Request with the GUTI gets an Identity Request and
//     it authenticates again (TS 24.501 5.4.3) — it is not locked out;
//   - a UE whose last counts were lost: the uplink COUNT is rebuilt from
//     the 8-bit sequence number (TS 24.501 4.4.3.1), which covers up to 255
//     lost uplink messages; the downlink COUNT is restored advanced by
//     dlCountMargin, so the UE never sees a COUNT it already received
//     (which it would discard as a replay) while staying within the 255
//     its own estimate from the sequence number accepts;
//   - a deleted UE whose deletion was lost comes back parked; the UDM no
//     longer names this AMF for it, and its GUTI is never reused (below),
//     so it only costs memory until the UE registers afresh.
//
// An unreadable store is set aside (renamed .unreadable) and a new one
// started, so a bad file costs its UEs an authentication, not the AMF.
//
// 5G-TMSIs are never handed out twice across restarts: the allocator
// writes a reservation (the next tmsiBlock values) synchronously before it
// uses a value past the last one, and a restarted AMF allocates above the
// last reservation; past a wrap it skips TMSIs of parked contexts.

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/keylog"
)

const (
	// persistFormat names the store's layout in its header line.
	persistFormat = "l25gc-amf-ues/1"
	// dlCountMargin is how far a restored downlink NAS COUNT is advanced
	// past the stored one: more than the downlink messages one UE gets
	// within a flush interval, less than 255 (TS 24.501 4.4.3.1: the UE
	// estimates the COUNT from its 8-bit sequence number).
	dlCountMargin = 128
	// tmsiBlock is how many 5G-TMSIs one reservation record covers.
	tmsiBlock = 4096
)

// ueRecord is what a registered UE needs after an AMF restart: its
// identities, its 5G NAS security context (TS 24.501 4.4.2), registration
// area, allowed NSSAI and the peers' state of its registration.
type ueRecord struct {
	SUPI string `json:"supi"`
	SUCI string `json:"suci,omitempty"`
	PEI  string `json:"pei,omitempty"`
	// GUAMI and TMSI are the 5G-GUTI (TS 23.003 2.10.1); a record of
	// another GUAMI (the config changed) is not restored.
	GUAMI string `json:"guami"`
	TMSI  uint32 `json:"tmsi"`

	// The 5G NAS security context: KAMF and its ngKSI, the selected
	// algorithms and the COUNTs next to use (downlink) and expected
	// (uplink) when the record was taken.
	NgKSI      uint8  `json:"ngKsi"`
	KAMF       []byte `json:"kamf"`
	EA         uint8  `json:"ea"`
	IA         uint8  `json:"ia"`
	NextDL     uint32 `json:"nextDl"`
	NextUL     uint32 `json:"nextUl"`
	Capability []byte `json:"ueSecCap,omitempty"` // replayed in Security Mode Command

	LastTAI  string          `json:"lastTai,omitempty"`
	TAIs     []string        `json:"tais,omitempty"` // the registration area sent in Registration Accept
	Allowed  []models.Snssai `json:"allowedNssai"`
	T3512    time.Duration   `json:"t3512"` // periodic registration update timer given (TS 24.501 5.3.7)
	Saved    time.Time       `json:"saved"`
	AMBRUL   int64           `json:"ambrUl,omitempty"`
	AMBRDL   int64           `json:"ambrDl,omitempty"`
	PolicyID string          `json:"amPolicyId,omitempty"` // PCF AM policy association
	// UDMRegistered: the UDM has this AMF registered for the UE (UECM);
	// a later deregistration must purge it.
	UDMRegistered   bool   `json:"udmRegistered,omitempty"`
	RadioCapability []byte `json:"radioCapability,omitempty"`

	// PDUSessions are the UE's PDU sessions with their SM contexts, so
	// the AMF reaches each session's SMF again after a restart (TS 23.502
	// 4.2.3.2 step 4 activation, 4.2.2.3.2 release on deregistration).
	PDUSessions []PDUSession `json:"pduSessions,omitempty"`
}

// persistLine is one line of the store after the header.
type persistLine struct {
	Op   string    `json:"op"` // put | del | tmsi
	UE   *ueRecord `json:"ue,omitempty"`
	TMSI uint32    `json:"tmsi,omitempty"` // del: whose record; tmsi: reserved below this
}

// ueStore is the write-behind store of UE records, keyed by 5G-TMSI.
type ueStore struct {
	log        *slog.Logger
	interval   time.Duration
	maxPending int

	// pending is what waits for the flusher: a record to put, or nil to
	// delete. Guarded by pmu; drained signals a flush that emptied it.
	pmu     sync.Mutex
	pending map[uint32]*ueRecord
	drained *sync.Cond
	kick    chan struct{}
	arm     chan struct{} // the first change after a quiet spell: start the interval

	// fmu guards the file and what compaction needs: the encoded record
	// of every live UE and the TMSI reservation.
	fmu      sync.Mutex
	file     *keylog.Log
	live     map[uint32][]byte
	liveSize int64
	reserved uint32 // every TMSI handed out is below this
	closed   bool

	stop chan struct{}
	done chan struct{}
}

// openUEStore opens (or creates) the store at path and returns it with
// the records it holds.
func openUEStore(path string, interval time.Duration, maxPending int, log *slog.Logger) (*ueStore, []*ueRecord, error) {
	s := &ueStore{log: log, interval: interval, maxPending: maxPending, pending: map[uint32]*ueRecord{},
		kick: make(chan struct{}, 1), arm: make(chan struct{}, 1), live: map[uint32][]byte{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.drained = sync.NewCond(&s.pmu)
	f, err := keylog.Open(path, keylog.Options{Format: persistFormat}, s.replay)
	if err != nil {
		return nil, nil, fmt.Errorf("amf: UE store: %w", err)
	}
	s.file = f
	records := make([]*ueRecord, 0, len(s.live))
	for tmsi, b := range s.live {
		var l persistLine
		if err := json.Unmarshal(b, &l); err != nil || l.UE == nil {
			return nil, nil, fmt.Errorf("amf: UE store %s: record of 5G-TMSI %08x: %v", path, tmsi, err)
		}
		records = append(records, l.UE)
	}
	go s.flushLoop()
	return s, records, nil
}

// replay applies one line at open; the record itself is decoded once
// more by openUEStore, only for the UEs still live at the end.
func (s *ueStore) replay(b []byte) error {
	var l struct {
		Op string `json:"op"`
		UE *struct {
			TMSI uint32 `json:"tmsi"`
		} `json:"ue"`
		TMSI uint32 `json:"tmsi"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	switch {
	case l.Op == "put" && l.UE != nil:
		s.setLive(l.UE.TMSI, append([]byte(nil), b...))
	case l.Op == "del":
		s.setLive(l.TMSI, nil)
	case l.Op == "tmsi":
		s.reserved = max(s.reserved, l.TMSI)
	default:
		return fmt.Errorf("unknown UE store record %q", l.Op)
	}
	return nil
}

// setLive records the encoded put of tmsi (nil: deleted); fmu held.
func (s *ueStore) setLive(tmsi uint32, put []byte) {
	s.liveSize -= int64(len(s.live[tmsi]))
	if put == nil {
		delete(s.live, tmsi)
		return
	}
	s.live[tmsi] = put
	s.liveSize += int64(len(put))
}

// save queues rec (a snapshot the caller no longer touches) for the next
// flush; with maxPending UEs already waiting it waits for that flush.
func (s *ueStore) save(rec *ueRecord) { s.queue(rec.TMSI, rec) }

// remove queues the deletion of the record of tmsi.
func (s *ueStore) remove(tmsi uint32) { s.queue(tmsi, nil) }

func (s *ueStore) queue(tmsi uint32, rec *ueRecord) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	for len(s.pending) >= s.maxPending && !s.isClosed() {
		if _, queued := s.pending[tmsi]; queued {
			break // coalesces with a queued change: the queue does not grow
		}
		s.kickFlush()
		s.drained.Wait()
	}
	if len(s.pending) == 0 {
		select {
		case s.arm <- struct{}{}:
		default:
		}
	}
	s.pending[tmsi] = rec
	if len(s.pending) >= s.maxPending {
		s.kickFlush()
	}
}

func (s *ueStore) isClosed() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *ueStore) kickFlush() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// flushLoop writes the queue an interval after its first change (so that
// interval's changes go in one append), or at once when kicked. It sleeps
// while nothing is queued: an idle AMF does not wake every interval.
func (s *ueStore) flushLoop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			s.flush()
			return
		case <-s.kick:
		case <-s.arm:
			t := time.NewTimer(s.interval)
			select {
			case <-s.stop:
				t.Stop()
				s.flush()
				return
			case <-s.kick:
				t.Stop()
			case <-t.C:
			}
		}
		s.flush()
	}
}

// flush writes everything queued in one append.
func (s *ueStore) flush() {
	s.pmu.Lock()
	batch := s.pending
	if len(batch) > 0 {
		s.pending = make(map[uint32]*ueRecord, len(batch))
	} else {
		batch = nil // still s.pending: queue may add to it once pmu is released
	}
	s.pmu.Unlock()
	if len(batch) > 0 {
		if err := s.write(batch); err != nil {
			s.log.Error("UE store: write failed; these UEs re-register from scratch after a restart", "ues", len(batch), "err", err)
		}
	}
	s.pmu.Lock()
	s.drained.Broadcast()
	s.pmu.Unlock()
}

func (s *ueStore) write(batch map[uint32]*ueRecord) error {
	lines := make(map[uint32][]byte, len(batch))
	var buf []byte
	for tmsi, rec := range batch {
		l := persistLine{Op: "del", TMSI: tmsi}
		if rec != nil {
			l = persistLine{Op: "put", UE: rec}
		}
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b = append(b, '\n')
		buf = append(buf, b...)
		if rec != nil {
			lines[tmsi] = b
		}
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.closed {
		return errors.New("closed")
	}
	if err := s.file.Append(buf); err != nil {
		return err
	}
	for tmsi, rec := range batch {
		if rec == nil {
			s.setLive(tmsi, nil)
		} else {
			s.setLive(tmsi, lines[tmsi])
		}
	}
	s.maybeCompact()
	return nil
}

// reserveTMSI writes, before it returns, that TMSIs below limit may be in
// use, so that a restarted AMF allocates above it.
func (s *ueStore) reserveTMSI(limit uint32) error {
	b, _ := json.Marshal(persistLine{Op: "tmsi", TMSI: limit})
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.closed {
		return errors.New("amf: UE store closed")
	}
	if err := s.file.Append(append(b, '\n')); err != nil {
		return err
	}
	s.reserved = max(s.reserved, limit)
	return nil
}

// reservedTMSI is the limit of the last reservation.
func (s *ueStore) reservedTMSI() uint32 {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return s.reserved
}

// maybeCompact rewrites the file to the live records; fmu held.
func (s *ueStore) maybeCompact() {
	if !s.file.Oversized(s.liveSize) {
		return
	}
	err := s.file.Compact(func(emit func([]byte) error) error {
		res, _ := json.Marshal(persistLine{Op: "tmsi", TMSI: s.reserved})
		if err := emit(append(res, '\n')); err != nil {
			return err
		}
		for _, b := range s.live {
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("UE store: compaction failed; the log keeps growing", "err", err)
	}
}

// close writes what is queued and closes the file.
func (s *ueStore) close() error {
	s.pmu.Lock()
	select {
	case <-s.stop:
		s.pmu.Unlock()
		return nil
	default:
	}
	close(s.stop)
	s.drained.Broadcast()
	s.pmu.Unlock()
	<-s.done
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.closed = true
	return s.file.Close()
}

// persistPath is the store's file for cfg: amf.persist.path, or one named
// after the AMF ID, under data_dir unless absolute.
func persistPath(dataDir, path, amfID string) string {
	if path == "" {
		path = "amf-" + amfID + ".ues"
	}
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dataDir, path)
}
