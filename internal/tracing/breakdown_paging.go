package tracing

import (
	"slices"
	"time"
)

// The breakdown of a procedure a downlink packet starts (paging.go): its
// spans are those of the UE's RAN UE NGAP ID (the answering Service
// Request), plus every trace that carries its SUPI, plus every trace that
// carries the UP SEID of a span that carries both (UPF-C's). PFCP carries
// no trace context, so a UPF-C span is placed under the deepest span of the
// procedure that was active when it started (the SMF's PFCP request, or
// nothing for the first report), and the SMF's Session Report span under
// UPF-C's report: each is then the deepest while it runs, as if the
// context had been carried.

// Row names of the user plane's untraced parts of a paging.
const (
	// RowDownlinkToUPFC: the packet leaves the data network → UPF-C has
	// UPF-U's note of it (the kernel's veth, UPF-U's N6 read, its buffer,
	// the note and its doorbell).
	RowDownlinkToUPFC = "user plane: DN send → UPF-U buffers → UPF-C reads the note (not traced)"
	// RowUPFUToUE: UPF-C wrote the rules that forward again → the UE has
	// the packet (UPF-U's flush of its buffer, GTP-U on N3, the simulated
	// gNB's and UE's reads), where no other span runs.
	RowUPFUToUE = "user plane: UPF-U releases the buffer → N3 → UE (not traced)"
)

// pagingIndex finds the traces of a UE that has no RAN UE NGAP ID.
type pagingIndex struct {
	byTrace map[string][]int           // trace → its spans
	bySUPI  map[string]map[string]bool // SUPI → traces with a span that names it
	bySEID  map[int64]map[string]bool  // UP SEID → traces with a span that names it
	seids   map[string][]int64         // SUPI → UP SEIDs named with it on one span
}

func indexPaging(spans []Span) pagingIndex {
	px := pagingIndex{byTrace: map[string][]int{}, bySUPI: map[string]map[string]bool{},
		bySEID: map[int64]map[string]bool{}, seids: map[string][]int64{}}
	for i := range spans {
		s := &spans[i]
		px.byTrace[s.TraceID] = append(px.byTrace[s.TraceID], i)
		if s.Str(KeyHop) == HopProcedure {
			continue
		}
		supi := s.Str(KeySUPI)
		seid, hasSEID := s.Int(KeyUPSEID)
		if supi != "" {
			addTrace(px.bySUPI, supi, s.TraceID)
		}
		if hasSEID {
			addTrace(px.bySEID, seid, s.TraceID)
		}
		if supi != "" && hasSEID && !slices.Contains(px.seids[supi], seid) {
			px.seids[supi] = append(px.seids[supi], seid)
		}
	}
	return px
}

func addTrace[K comparable](m map[K]map[string]bool, k K, trace string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][trace] = true
}

// candidates are the spans that may belong to procedure p: its RAN UE
// NGAP ID's, and for a UE named by SUPI, the traces joined to it.
func (ix *spanIndex) candidates(p *Span) []int {
	var out []int
	if ue, ok := p.Int(KeyRANUE); ok {
		out = append(out, ix.byUE[ue]...)
	}
	supi := p.Str(KeySUPI)
	if supi == "" {
		return out
	}
	traces := map[string]bool{}
	for t := range ix.paging.bySUPI[supi] {
		traces[t] = true
	}
	for _, seid := range ix.paging.seids[supi] {
		for t := range ix.paging.bySEID[seid] {
			traces[t] = true
		}
	}
	seen := map[int]bool{}
	for _, i := range out {
		seen[i] = true
	}
	for t := range traces {
		for _, i := range ix.paging.byTrace[t] {
			if !seen[i] && ix.spans[i].Str(KeyHop) != HopProcedure {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// crossDepth gives each trace rooted in a span with a UP SEID (UPF-C's,
// the SMF's Session Report) the depth it would have had if PFCP had
// carried the context: one below the deepest span of another trace of the
// procedure that was running when it started. Traces are placed in the
// order they started, so a chain (UPF-C report → SMF → AMF) nests.
func (ix *spanIndex) crossDepth(p *Span, cands []int) map[string]int {
	if p.Str(KeySUPI) == "" {
		return nil
	}
	var roots []int
	for _, i := range cands {
		s := &ix.spans[i]
		if _, ok := s.Int(KeyUPSEID); ok && ix.depth[i] == 0 && !s.End.Before(p.Start) && !s.Start.After(p.End) {
			roots = append(roots, i)
		}
	}
	slices.SortFunc(roots, func(a, b int) int { return ix.spans[a].Start.Compare(ix.spans[b].Start) })
	offset := map[string]int{}
	for _, r := range roots {
		root := &ix.spans[r]
		if _, done := offset[root.TraceID]; done {
			continue
		}
		best := -1
		for _, j := range cands {
			s := &ix.spans[j]
			if s.TraceID == root.TraceID || s.Duration() <= 0 || s.Start.After(root.Start) || !s.End.After(root.Start) {
				continue
			}
			best = max(best, ix.depth[j]+offset[s.TraceID])
		}
		offset[root.TraceID] = best + 1
	}
	return offset
}

// userPlane is what the user plane does untraced in a procedure a
// downlink packet started: from the packet's send to UPF-C's first span
// (the note of the buffered packet), and from the end of UPF-C's last
// Session Modification (the buffer released) to the procedure's end.
// Deeper spans running meanwhile keep their time (sweep).
func (ix *spanIndex) userPlane(p *Span, cands []int) []segment {
	if p.Str(KeyTrigger) != TriggerDownlink {
		return nil
	}
	var first, lastMod *Span
	for _, i := range cands {
		s := &ix.spans[i]
		if s.Str(KeyHop) != HopUPFC || s.End.Before(p.Start) || s.Start.After(p.End) {
			continue
		}
		if first == nil || s.Start.Before(first.Start) {
			first = s
		}
		if s.Name == UPFCModification && (lastMod == nil || s.End.After(lastMod.End)) {
			lastMod = s
		}
	}
	var out []segment
	if first != nil {
		out = append(out, segment{start: p.Start, end: first.Start, depth: 1, row: RowDownlinkToUPFC})
	}
	if lastMod != nil {
		out = append(out, segment{start: lastMod.End, end: p.End, depth: 1, row: RowUPFUToUE})
	}
	return out
}

// Names of UPF-C's spans the breakdown reads.
const (
	// UPFCReport: a note of UPF-U's buffered downlink data → the SMF's
	// Session Report Response (TS 23.502 4.2.3.3 steps 1-2b).
	UPFCReport = "Downlink Data Report (note → Session Report Response)"
	// UPFCModification: a Session Modification Request handled, rules
	// written for UPF-U (TS 29.244 7.5.4).
	UPFCModification = "Session Modification (rules written)"
)

// traceRanks ranks each trace of a procedure a downlink packet started by
// when it started there: a paging is a chain of independent traces (UPF-C's
// report, the SMF's, the UE's Service Request at the AMF, UPF-C's
// modification), each started by the one before, and a trace that started
// later is what the procedure waits on while an earlier one is still
// finishing (the AMF's 202 to the SMF travels while the UE answers the
// paging). Nil for other procedures: depth alone decides there.
func (ix *spanIndex) traceRanks(p *Span, cands []int) map[string]time.Time {
	if p.Str(KeyTrigger) != TriggerDownlink {
		return nil
	}
	out := map[string]time.Time{}
	for _, i := range cands {
		s := &ix.spans[i]
		if at, ok := out[s.TraceID]; !ok || s.Start.Before(at) {
			out[s.TraceID] = s.Start
		}
	}
	return out
}

// rankSynthetic ranks the segments that are no span's (N2 transit, the
// simulator's side, the user plane) by their start, in a procedure a
// downlink packet started: each is the latest thing to happen when it
// starts, as a trace is.
func rankSynthetic(p *Span, segs []segment) {
	if p.Str(KeyTrigger) != TriggerDownlink {
		return
	}
	for i := range segs {
		if segs[i].rank.IsZero() {
			segs[i].rank = segs[i].start
		}
	}
}
