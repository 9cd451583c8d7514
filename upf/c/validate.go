package upfc

import (
	"fmt"
	"slices"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// checkRules checks a session's rules as a whole (TS 29.244 7.5.2.1,
// 7.5.4.1): rule IDs unique, every rule a PDR names present, and what
// UPF-U needs to match and forward present. A rule at fault gets Rule
// creation/modification Failure naming it; a missing IE that the rule's
// role makes necessary gets Conditional IE missing.
func checkRules(r *rules.Rules) error {
	if err := uniqueIDs(r); err != nil {
		return err
	}
	for _, p := range r.PDRs {
		if err := checkPDR(r, p); err != nil {
			return err
		}
	}
	for _, f := range r.FARs {
		// TS 29.244 7.5.2.3-2: Outer Header Creation is C, present when
		// the FAR sends into a tunnel: toward the gNB, that is always.
		if f.Action&rules.ActionForward != 0 && f.Destination == rules.Access && f.OuterHeader == nil {
			return &pfcpx.Error{Cause: pfcpx.CauseConditionalIEMissing, OffendingIE: pfcpx.IEOuterHeaderCreation,
				Rule: &pfcpx.FailedRule{Type: pfcpx.RuleFAR, ID: f.ID}, Detail: fmt.Sprintf("FAR %d forwards to Access without Outer Header Creation", f.ID)}
		}
	}
	return nil
}

func checkPDR(r *rules.Rules, p rules.PDR) error {
	if !slices.ContainsFunc(r.FARs, func(f rules.FAR) bool { return f.ID == p.FARID }) {
		return pfcpx.RuleFailure(pfcpx.RulePDR, uint32(p.ID), "PDR %d names FAR %d, which the session does not have", p.ID, p.FARID)
	}
	for _, id := range p.QERIDs {
		if !slices.ContainsFunc(r.QERs, func(q rules.QER) bool { return q.ID == id }) {
			return pfcpx.RuleFailure(pfcpx.RulePDR, uint32(p.ID), "PDR %d names QER %d, which the session does not have", p.ID, id)
		}
	}
	for _, id := range p.URRIDs {
		if !slices.ContainsFunc(r.URRs, func(u rules.URR) bool { return u.ID == id }) {
			return pfcpx.RuleFailure(pfcpx.RulePDR, uint32(p.ID), "PDR %d names URR %d, which the session does not have", p.ID, id)
		}
	}
	// UPF-U finds uplink packets by TEID and downlink ones by UE address.
	switch {
	case p.Source == rules.Access && p.LocalFTEID == nil:
		return &pfcpx.Error{Cause: pfcpx.CauseConditionalIEMissing, OffendingIE: pfcpx.IEFTEID,
			Rule: &pfcpx.FailedRule{Type: pfcpx.RulePDR, ID: uint32(p.ID)}, Detail: fmt.Sprintf("uplink PDR %d has no local F-TEID", p.ID)}
	case p.Source == rules.Core && !p.UEIPv4.IsValid():
		return &pfcpx.Error{Cause: pfcpx.CauseConditionalIEMissing, OffendingIE: pfcpx.IEUEIPAddress,
			Rule: &pfcpx.FailedRule{Type: pfcpx.RulePDR, ID: uint32(p.ID)}, Detail: fmt.Sprintf("downlink PDR %d has no UE IP address", p.ID)}
	}
	return nil
}

// uniqueIDs: a rule ID names one rule of its kind in a session (TS 29.244
// 8.2.36, 8.2.74, 8.2.75, 8.2.54).
func uniqueIDs(r *rules.Rules) error {
	if id, dup := firstDup(r.PDRs, func(p rules.PDR) uint32 { return uint32(p.ID) }); dup {
		return pfcpx.RuleFailure(pfcpx.RulePDR, id, "two PDRs with ID %d", id)
	}
	if id, dup := firstDup(r.FARs, func(f rules.FAR) uint32 { return f.ID }); dup {
		return pfcpx.RuleFailure(pfcpx.RuleFAR, id, "two FARs with ID %d", id)
	}
	if id, dup := firstDup(r.QERs, func(q rules.QER) uint32 { return q.ID }); dup {
		return pfcpx.RuleFailure(pfcpx.RuleQER, id, "two QERs with ID %d", id)
	}
	if id, dup := firstDup(r.URRs, func(u rules.URR) uint32 { return u.ID }); dup {
		return pfcpx.RuleFailure(pfcpx.RuleURR, id, "two URRs with ID %d", id)
	}
	return nil
}

func firstDup[T any](list []T, id func(T) uint32) (uint32, bool) {
	seen := map[uint32]bool{}
	for _, x := range list {
		if seen[id(x)] {
			return id(x), true
		}
		seen[id(x)] = true
	}
	return 0, false
}

// applyModification applies a Session Modification Request to sess in
// TS 29.244 7.5.4's order: Remove, then Update, then Create.
func applyModification(sess *rules.Session, req *pfcpx.SessionModificationRequest) error {
	if f := req.CPFSEID; f != nil {
		// TS 29.244 7.5.4-1: a new CP F-SEID moves the session's CP end.
		sess.CPSEID = f.Seid
		if a, ok := addrOf(f.Ipv4Address); ok {
			sess.CPAddr = a
		}
	}
	if err := applyRemoves(sess, req); err != nil {
		return err
	}
	if err := applyUpdates(sess, req); err != nil {
		return err
	}
	created, err := pfcpx.RulesOf(req.CreatePDR, req.CreateFAR, req.CreateQER, req.CreateURR)
	if err != nil {
		return err
	}
	sess.PDRs = append(sess.PDRs, created.PDRs...)
	sess.FARs = append(sess.FARs, created.FARs...)
	sess.QERs = append(sess.QERs, created.QERs...)
	sess.URRs = append(sess.URRs, created.URRs...)
	return nil
}

func applyRemoves(sess *rules.Session, req *pfcpx.SessionModificationRequest) error {
	for _, r := range req.RemovePDR {
		if r.PDRID == nil {
			return missingIn(pfcpx.IEPDRID, "Remove PDR")
		}
		if !remove(&sess.PDRs, func(p rules.PDR) bool { return p.ID == r.PDRID.RuleId }) {
			return pfcpx.RuleFailure(pfcpx.RulePDR, uint32(r.PDRID.RuleId), "Remove PDR %d: no such PDR", r.PDRID.RuleId)
		}
	}
	for _, r := range req.RemoveFAR {
		if r.FARID == nil {
			return missingIn(pfcpx.IEFARID, "Remove FAR")
		}
		if !remove(&sess.FARs, func(f rules.FAR) bool { return f.ID == r.FARID.FarIdValue }) {
			return pfcpx.RuleFailure(pfcpx.RuleFAR, r.FARID.FarIdValue, "Remove FAR %d: no such FAR", r.FARID.FarIdValue)
		}
	}
	for _, r := range req.RemoveQER {
		if r.QERID == nil {
			return missingIn(pfcpx.IEQERID, "Remove QER")
		}
		if !remove(&sess.QERs, func(q rules.QER) bool { return q.ID == r.QERID.QERID }) {
			return pfcpx.RuleFailure(pfcpx.RuleQER, r.QERID.QERID, "Remove QER %d: no such QER", r.QERID.QERID)
		}
	}
	for _, r := range req.RemoveURR {
		if r.URRID == nil {
			return missingIn(pfcpx.IEURRID, "Remove URR")
		}
		if !remove(&sess.URRs, func(u rules.URR) bool { return u.ID == r.URRID.UrrIdValue }) {
			return pfcpx.RuleFailure(pfcpx.RuleURR, r.URRID.UrrIdValue, "Remove URR %d: no such URR", r.URRID.UrrIdValue)
		}
	}
	for _, q := range req.QueryURR {
		if q.URRID == nil {
			return missingIn(pfcpx.IEURRID, "Query URR")
		}
	}
	return nil
}

func applyUpdates(sess *rules.Session, req *pfcpx.SessionModificationRequest) error {
	for _, ie := range req.UpdatePDR {
		if ie.PDRID == nil {
			return missingIn(pfcpx.IEPDRID, "Update PDR")
		}
		i := slices.IndexFunc(sess.PDRs, func(p rules.PDR) bool { return p.ID == ie.PDRID.RuleId })
		if i < 0 {
			return pfcpx.RuleFailure(pfcpx.RulePDR, uint32(ie.PDRID.RuleId), "Update PDR %d: no such PDR", ie.PDRID.RuleId)
		}
		if err := pfcpx.PatchPDR(&sess.PDRs[i], ie); err != nil {
			return err
		}
	}
	for _, ie := range req.UpdateFAR {
		if ie.FARID == nil {
			return missingIn(pfcpx.IEFARID, "Update FAR")
		}
		i := slices.IndexFunc(sess.FARs, func(f rules.FAR) bool { return f.ID == ie.FARID.FarIdValue })
		if i < 0 {
			return pfcpx.RuleFailure(pfcpx.RuleFAR, ie.FARID.FarIdValue, "Update FAR %d: no such FAR", ie.FARID.FarIdValue)
		}
		if err := pfcpx.PatchFAR(&sess.FARs[i], ie); err != nil {
			return err
		}
	}
	for _, ie := range req.UpdateQER {
		if ie.QERID == nil {
			return missingIn(pfcpx.IEQERID, "Update QER")
		}
		i := slices.IndexFunc(sess.QERs, func(q rules.QER) bool { return q.ID == ie.QERID.QERID })
		if i < 0 {
			return pfcpx.RuleFailure(pfcpx.RuleQER, ie.QERID.QERID, "Update QER %d: no such QER", ie.QERID.QERID)
		}
		if err := pfcpx.PatchQER(&sess.QERs[i], ie); err != nil {
			return err
		}
	}
	for _, ie := range req.UpdateURR {
		if ie.URRID == nil {
			return missingIn(pfcpx.IEURRID, "Update URR")
		}
		i := slices.IndexFunc(sess.URRs, func(u rules.URR) bool { return u.ID == ie.URRID.UrrIdValue })
		if i < 0 {
			return pfcpx.RuleFailure(pfcpx.RuleURR, ie.URRID.UrrIdValue, "Update URR %d: no such URR", ie.URRID.UrrIdValue)
		}
		if err := pfcpx.PatchURR(&sess.URRs[i], ie); err != nil {
			return err
		}
	}
	return nil
}

func missingIn(ie uint16, where string) error {
	return &pfcpx.Error{Cause: pfcpx.CauseMandatoryIEMissing, OffendingIE: ie, Detail: fmt.Sprintf("%s has no %s", where, pfcpx.IEName(ie))}
}

// remove deletes the first element matching; false when none does.
func remove[T any](list *[]T, match func(T) bool) bool {
	i := slices.IndexFunc(*list, match)
	if i < 0 {
		return false
	}
	*list = slices.Delete(*list, i, i+1)
	return true
}
