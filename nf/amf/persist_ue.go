package amf

// How UE contexts meet the UE store (persist.go): which procedure points
// write a UE's record, how a record becomes a parked CM-IDLE context again
// at start, and the 5G-TMSI reservation.

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// storedAs says whether the UE's record is in the store, and under which
// 5G-TMSI (a new 5G-GUTI moves it).
type storedAs struct {
	ok   bool
	tmsi uint32
}

// tmsiReservation makes the 5G-TMSI allocator reserve ahead in the store.
type tmsiReservation struct {
	reserve func(limit uint32) error // nil without a store
	resMu   sync.Mutex
	limit   atomic.Uint64 // every TMSI below is reserved
}

// startTMSIAfter makes the allocator hand out TMSIs above last, reserving
// them through reserve first.
func (t *ueTable) startTMSIAfter(last uint32, reserve func(uint32) error) {
	t.tmsi.Store(last)
	t.limit.Store(uint64(last) + 1)
	t.reserve = reserve
}

// reserveUpTo makes sure tmsi is below a reservation written to the store.
func (t *ueTable) reserveUpTo(tmsi uint32) {
	if t.reserve == nil || uint64(tmsi) < t.limit.Load() {
		return
	}
	t.resMu.Lock()
	defer t.resMu.Unlock()
	if uint64(tmsi) < t.limit.Load() {
		return
	}
	next := min(uint64(tmsi)+tmsiBlock, 1<<32-1)
	// A failed write is logged by the store; the allocation goes on, the
	// worst case being a TMSI reused after a restart (the UE's integrity
	// check then fails and it authenticates again).
	_ = t.reserve(uint32(next))
	t.limit.Store(next)
}

// restoreIdle parks a restored context under its 5G-TMSI.
func (t *ueTable) restoreIdle(ue *ueContext) {
	t.mu.Lock()
	t.parkLocked(ue.guti.TMSI, ue)
	t.mu.Unlock()
}

// openPersist opens the UE store and parks every UE it holds as a CM-IDLE
// context (their N2 connections ended with the old process), ready for the
// 5G-GUTI path (registerWithGUTI, adoptIdle) to verify and adopt.
func (n *NF) openPersist() error {
	p := n.cfg.AMF.Persist
	if !p.Enabled {
		return nil
	}
	path := persistPath(n.cfg.DataDir, p.Path, n.guami.AMFID.String())
	st, records, err := openUEStore(path, p.FlushInterval, p.MaxPending, n.log)
	if err != nil {
		st, records, err = n.setAsideUnreadable(path, err)
		if err != nil {
			return err
		}
	}
	n.persist = st
	var last uint32
	restored := 0
	for _, rec := range records {
		ue, err := n.restoredUE(rec)
		if err != nil {
			n.log.Warn("UE store: record not restored", "tmsi", fmt.Sprintf("%08x", rec.TMSI), "supi", rec.SUPI, "err", err)
			st.remove(rec.TMSI)
			continue
		}
		n.ues.restoreIdle(ue)
		n.startReachability(ue)
		n.metrics.registered.Inc()
		last = max(last, rec.TMSI)
		restored++
	}
	n.ues.startTMSIAfter(max(last, st.reservedTMSI()), func(limit uint32) error {
		err := st.reserveTMSI(limit)
		if err != nil {
			n.log.Error("UE store: 5G-TMSI reservation not written", "err", err)
		}
		return err
	})
	n.log.Info("UE contexts restored", "ues", restored, "of", len(records), "store", path)
	return nil
}

// setAsideUnreadable: a store that cannot be read must not keep the AMF
// down (the supervisor would restart it into the same error). The file is
// renamed for the operator to inspect and a new one started; its UEs
// register afresh, with authentication, as after a restart without store.
func (n *NF) setAsideUnreadable(path string, cause error) (*ueStore, []*ueRecord, error) {
	bad := path + ".unreadable"
	if err := os.Rename(path, bad); err != nil {
		return nil, nil, cause // not a bad file: e.g. the directory is not writable
	}
	n.log.Error("UE store unreadable: set aside, its UEs register afresh", "err", cause, "movedTo", bad)
	p := n.cfg.AMF.Persist
	return openUEStore(path, p.FlushInterval, p.MaxPending, n.log)
}

// restoredUE is the parked context a record describes: registered, CM-IDLE,
// with its security context resumed. The downlink COUNT goes on past what
// a crash within the write-behind lag may have lost (dlCountMargin); the
// uplink COUNT is rebuilt from each message's sequence number.
func (n *NF) restoredUE(rec *ueRecord) (*ueContext, error) {
	if rec.GUAMI != n.guami.String() {
		return nil, fmt.Errorf("5G-GUTI of GUAMI %s, this AMF is %s", rec.GUAMI, n.guami)
	}
	if rec.SUPI == "" || len(rec.KAMF) != 32 || rec.TMSI == 0 {
		return nil, fmt.Errorf("no SUPI, KAMF or 5G-TMSI")
	}
	nasCtx, err := n.opts.Crypto.NewNASContext(rec.KAMF, rec.EA, rec.IA)
	if err != nil {
		return nil, err
	}
	nasCtx.Resume(rec.NextDL+dlCountMargin, rec.NextUL)
	ue := &ueContext{state: StateRegistered, registered: true, supi: rec.SUPI, suci: rec.SUCI, pei: rec.PEI,
		guti:       &nasx.GUTI{GUAMI: n.guami, TMSI: rec.TMSI},
		sec:        &secContext{ngKSI: rec.NgKSI, kamf: rec.KAMF, ea: rec.EA, ia: rec.IA, nas: nasCtx, active: true, confirmed: true},
		capability: nasx.SecurityCapability{Raw: rec.Capability}, allowed: rec.Allowed,
		ambrUL: rec.AMBRUL, ambrDL: rec.AMBRDL, policyID: rec.PolicyID, udmRegistered: rec.UDMRegistered,
		radioCapability: rec.RadioCapability, stored: storedAs{ok: true, tmsi: rec.TMSI}}
	if tai, err := domain.ParseTAI(rec.LastTAI); err == nil {
		ue.tai = tai
	}
	ue.RestoreSessions(rec.PDUSessions)
	return ue, nil
}

// persistUE queues the record of a registered UE. It runs where a
// procedure ends (Registration Complete) and before the context is parked
// (N2 release), the points after which the UE's record changes only with
// a new procedure; in between, lost COUNT increments are what dlCountMargin
// and the sequence-number estimate cover.
func (n *NF) persistUE(ue *ueContext) {
	if n.persist == nil || !ue.registered || ue.guti == nil || ue.sec == nil || ue.sec.nas == nil {
		return
	}
	if ue.stored.ok && ue.stored.tmsi != ue.guti.TMSI {
		n.persist.remove(ue.stored.tmsi) // a new 5G-GUTI (TS 24.501 5.5.1.2.4)
	}
	sp := n.trace.Child(ue.amfID, "persist UE record", tracing.HopStore)
	n.persist.save(n.recordOf(ue))
	sp.End()
	ue.stored = storedAs{ok: true, tmsi: ue.guti.TMSI}
}

// forgetUE deletes the UE's record: its 5GMM context ended (deregistration,
// the UDM's deregistration, a context replaced by a new registration).
func (n *NF) forgetUE(ue *ueContext) {
	if n.persist == nil || !ue.stored.ok {
		return
	}
	n.persist.remove(ue.stored.tmsi)
	ue.stored = storedAs{}
}

// recordOf snapshots what the UE needs after a restart; the record shares
// no memory with the context.
func (n *NF) recordOf(ue *ueContext) *ueRecord {
	nextDL, nextUL := ue.sec.nas.Counts()
	tais := make([]string, len(n.tais))
	for i, t := range n.tais {
		tais[i] = t.String()
	}
	return &ueRecord{SUPI: ue.supi, SUCI: ue.suci, PEI: ue.pei, GUAMI: n.guami.String(), TMSI: ue.guti.TMSI,
		NgKSI: ue.sec.ngKSI, KAMF: slices.Clone(ue.sec.kamf), EA: ue.sec.ea, IA: ue.sec.ia, NextDL: nextDL, NextUL: nextUL,
		Capability: slices.Clone(ue.capability.Raw), LastTAI: ue.tai.String(), TAIs: tais,
		Allowed: slices.Clone(ue.allowed), T3512: n.cfg.AMF.NAS.T3512, Saved: time.Now().UTC(),
		AMBRUL: ue.ambrUL, AMBRDL: ue.ambrDL, PolicyID: ue.policyID, UDMRegistered: ue.udmRegistered,
		RadioCapability: slices.Clone(ue.radioCapability),
		PDUSessions:     ue.storedSessions(),
	}
}

// closePersist writes what is queued and closes the store.
func (n *NF) closePersist() {
	if n.persist == nil {
		return
	}
	if err := n.persist.close(); err != nil {
		n.log.Warn("UE store close", "err", err)
	}
}
