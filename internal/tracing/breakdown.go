package tracing

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// A Breakdown cuts the end-to-end time of each procedure the simulator
// recorded into hops. Every instant of a procedure is given to the
// deepest span active then (ties: the one that started last; in a
// procedure a downlink packet started, the trace that started last comes
// first, breakdown_paging.go), so the "part" hops of one procedure add up
// exactly to its end-to-end time;
// what no span covers is the NotAccounted row. Part hops are exclusive
// time (an SBI call's transport is its client span minus its server span);
// "detail" hops are inclusive (an SBI call as its client saw it and as its
// server spent it) and overlap the parts.
type Breakdown struct {
	Procedure string `json:"procedure"`
	Count     int    `json:"procedures"`
	EndToEnd  Stat   `json:"end_to_end_ms"`
	// Classes are the parts summed by kind of hop (all SBI transports,
	// each NF's processing, all crypto...): the short table.
	Classes []Hop `json:"classes"`
	Hops    []Hop `json:"hops"`
}

// Hop is one row: its statistics over the procedures, 0 where a procedure
// did not pass it, so the means of the part rows sum to the end-to-end mean.
type Hop struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "part" (adds up) or "detail" (inclusive)
	Stat
}

// Stat is a distribution in milliseconds.
type Stat struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// NotAccounted names the time no span covers.
const NotAccounted = "not accounted for"

// Row names of the parts that are not per span.
const (
	RowRAN        = "UE/gNB side (simulator)"
	RowN2Uplink   = "N2 uplink (AMF receive - gNB send)"
	RowN2Downlink = "N2 downlink (gNB receive - AMF send)"
)

// segment is an interval attributed to a row while it is the deepest.
type segment struct {
	start, end time.Time
	depth      int
	row        string
	// rank orders segments of independent work before depth: the later
	// rank wins (breakdown_paging.go). Zero for every segment of a
	// procedure the simulator started.
	rank time.Time
}

// Compute builds the breakdown of every procedure name among spans.
func Compute(spans []Span) []Breakdown {
	ix := index(spans)
	perProc := map[string][]map[string]time.Duration{}
	e2e := map[string][]time.Duration{}
	for i := range spans {
		p := &spans[i]
		if p.Str(KeyHop) != HopProcedure {
			continue
		}
		name := p.Str(KeyProcedure)
		perProc[name] = append(perProc[name], ix.procedure(p))
		e2e[name] = append(e2e[name], p.Duration())
	}
	var out []Breakdown
	for name, rows := range perProc {
		out = append(out, summarize(name, rows, e2e[name]))
	}
	slices.SortFunc(out, func(a, b Breakdown) int { return strings.Compare(a.Procedure, b.Procedure) })
	return out
}

// spanIndex holds the spans by trace with each span's depth and each
// trace's RAN UE NGAP ID.
type spanIndex struct {
	spans   []Span
	depth   []int
	traceUE map[string]int64 // trace → RAN UE NGAP ID of its N2 spans
	byUE    map[int64][]int  // RAN UE NGAP ID → spans of the AMF's traces and N2 instants
	paging  pagingIndex      // breakdown_paging.go: the join by SUPI and SEID
}

func index(spans []Span) *spanIndex {
	ix := &spanIndex{spans: spans, depth: make([]int, len(spans)), traceUE: map[string]int64{}, byUE: map[int64][]int{}}
	byID := make(map[[2]string]int, len(spans))
	for i, s := range spans {
		byID[[2]string{s.TraceID, s.SpanID}] = i
		if ue, ok := s.Int(KeyRANUE); ok && s.Str(KeyHop) != HopProcedure {
			if _, seen := ix.traceUE[s.TraceID]; !seen {
				ix.traceUE[s.TraceID] = ue
			}
		}
	}
	for i, s := range spans {
		d, cur := 0, s
		for cur.ParentID != "" && d < 64 {
			j, ok := byID[[2]string{cur.TraceID, cur.ParentID}]
			if !ok {
				break
			}
			d, cur = d+1, spans[j]
		}
		ix.depth[i] = d
		if ue, ok := ix.traceUE[s.TraceID]; ok && s.Str(KeyHop) != HopProcedure {
			ix.byUE[ue] = append(ix.byUE[ue], i)
		}
	}
	ix.paging = indexPaging(spans)
	return ix
}

// procedure attributes the time of procedure span p to rows.
func (ix *spanIndex) procedure(p *Span) map[string]time.Duration {
	cands := ix.candidates(p)
	offset := ix.crossDepth(p, cands)
	rank := ix.traceRanks(p, cands)
	var segs []segment
	var ranSend, ranRecv, amfRecv, amfSend []*Span
	for _, i := range cands {
		s := &ix.spans[i]
		if s.End.Before(p.Start) || s.Start.After(p.End) {
			continue
		}
		switch s.Str(KeyHop) {
		case HopRANSend:
			ranSend = append(ranSend, s)
			continue
		case HopRANRecv:
			ranRecv = append(ranRecv, s)
			continue
		case HopAMFSend:
			amfSend = append(amfSend, s)
			continue
		case HopAMFRecv:
			if _, ok := s.Int(KeyMessage); ok {
				amfRecv = append(amfRecv, s)
			}
		}
		segs = append(segs, segment{start: s.Start, end: s.End, depth: 1 + ix.depth[i] + offset[s.TraceID], row: rowOf(s), rank: rank[s.TraceID]})
	}
	segs = append(segs, transit(ranSend, amfRecv, RowN2Uplink)...)
	segs = append(segs, transit(amfSend, ranRecv, RowN2Downlink)...)
	segs = append(segs, ranSide(p, ranSend, ranRecv)...)
	segs = append(segs, ix.userPlane(p, cands)...)
	rankSynthetic(p, segs)
	rows := sweep(p.Start, p.End, segs)
	for _, i := range cands {
		s := &ix.spans[i]
		if s.Start.Before(p.Start) || s.End.After(p.End) {
			continue
		}
		switch s.Str(KeyHop) {
		case HopSBIClient:
			rows["SBI client saw: "+s.Name] += s.Duration()
		case HopSBIServer:
			rows["SBI server spent: "+s.Name] += s.Duration()
		}
	}
	return rows
}

// transit pairs each send with the first unpaired receive of the same
// message key at or after it: the time the message spent on N2.
func transit(sends, recvs []*Span, row string) []segment {
	byStart := func(a, b *Span) int { return a.Start.Compare(b.Start) }
	slices.SortFunc(sends, byStart)
	slices.SortFunc(recvs, byStart)
	used := make([]bool, len(recvs))
	var out []segment
	for _, s := range sends {
		k, _ := s.Int(KeyMessage)
		for j, r := range recvs {
			if kr, _ := r.Int(KeyMessage); used[j] || kr != k || r.Start.Before(s.Start) {
				continue
			}
			used[j] = true
			out = append(out, segment{start: s.Start, end: r.Start, depth: 1, row: row})
			break
		}
	}
	return out
}

// ranSide is the simulator's own time: from the procedure's start to its
// first send, and from each receive to the next send (or the end).
func ranSide(p *Span, sends, recvs []*Span) []segment {
	type ev struct {
		at   time.Time
		send bool
	}
	var evs []ev
	if p.Str(KeyTrigger) != TriggerDownlink {
		// The simulator starts the procedure; a downlink packet's is the
		// user plane's (userPlane).
		evs = append(evs, ev{p.Start, false})
	}
	for _, s := range sends {
		evs = append(evs, ev{s.Start, true})
	}
	for _, r := range recvs {
		evs = append(evs, ev{r.Start, false})
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return a.at.Compare(b.at) })
	var out []segment
	var busy time.Time // since when the simulator has work; zero: waiting
	for _, e := range evs {
		switch {
		case !e.send && busy.IsZero():
			busy = e.at
		case e.send && !busy.IsZero():
			out = append(out, segment{start: busy, end: e.at, depth: 1, row: RowRAN})
			busy = time.Time{}
		}
	}
	if !busy.IsZero() {
		out = append(out, segment{start: busy, end: p.End, depth: 1, row: RowRAN})
	}
	return out
}

// sweep gives each instant of [start, end] to the deepest segment active
// then (the latest started among equals), NotAccounted where none is.
func sweep(start, end time.Time, segs []segment) map[string]time.Duration {
	cuts := []time.Time{start, end}
	for i := range segs {
		segs[i].start = clamp(segs[i].start, start, end)
		segs[i].end = clamp(segs[i].end, start, end)
		cuts = append(cuts, segs[i].start, segs[i].end)
	}
	slices.SortFunc(cuts, func(a, b time.Time) int { return a.Compare(b) })
	cuts = slices.CompactFunc(cuts, func(a, b time.Time) bool { return a.Equal(b) })
	rows := map[string]time.Duration{}
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		best := -1
		for j, s := range segs {
			if s.start.After(a) || !s.end.After(a) {
				continue
			}
			if best < 0 || wins(s, segs[best]) {
				best = j
			}
		}
		row := NotAccounted
		if best >= 0 {
			row = segs[best].row
		}
		rows[row] += b.Sub(a)
	}
	return rows
}

// wins says whether s takes an instant from b: the later rank, then the
// deeper, then the later started.
func wins(s, b segment) bool {
	if c := s.rank.Compare(b.rank); c != 0 {
		return c > 0
	}
	if s.depth != b.depth {
		return s.depth > b.depth
	}
	return s.start.After(b.start)
}

func clamp(t, lo, hi time.Time) time.Time {
	if t.Before(lo) {
		return lo
	}
	if t.After(hi) {
		return hi
	}
	return t
}

// rowOf names the part a span's own time belongs to.
func rowOf(s *Span) string {
	nf := nfName(s.Service)
	switch s.Str(KeyHop) {
	case HopAMFRecv:
		if strings.HasPrefix(s.Name, "N2 ") {
			return "AMF N2 read and decode"
		}
		return "AMF event hand-off"
	case HopQueue:
		return "AMF dispatcher queue"
	case HopStep:
		return "AMF step: " + s.Name
	case HopConsumer:
		return nf + " consumer (encode, discovery, token, decode): " + s.Name
	case HopSBIClient:
		return "SBI transport (client - server): " + s.Name
	case HopSBIServer:
		return nf + " handles: " + s.Name
	case HopCrypto:
		return nf + " crypto: " + s.Name
	case HopStore:
		return nf + " store: " + s.Name
	case HopPFCP:
		return nf + " PFCP: " + s.Name
	case HopUPFC:
		return "UPF-C: " + s.Name
	case HopSMFNF:
		return "SMF paging: " + s.Name
	}
	return nf + ": " + s.Name
}

// nfName shortens a service name: l25gc-udm → UDM.
func nfName(service string) string {
	return strings.ToUpper(strings.TrimPrefix(service, "l25gc-"))
}

func summarize(name string, procs []map[string]time.Duration, e2e []time.Duration) Breakdown {
	b := Breakdown{Procedure: name, Count: len(procs), EndToEnd: stat(e2e)}
	names := map[string]bool{}
	for _, rows := range procs {
		for r := range rows {
			names[r] = true
		}
	}
	b.Hops = rowsOf(procs, names)
	classes := make([]map[string]time.Duration, len(procs))
	classNames := map[string]bool{}
	for i, rows := range procs {
		classes[i] = map[string]time.Duration{}
		for r, d := range rows {
			if c := classOf(r); c != "" {
				classes[i][c] += d
				classNames[c] = true
			}
		}
	}
	b.Classes = rowsOf(classes, classNames)
	return b
}

// rowsOf gives each named row its statistics over procs, in table order.
func rowsOf(procs []map[string]time.Duration, names map[string]bool) []Hop {
	var out []Hop
	for r := range names {
		vals := make([]time.Duration, len(procs))
		for i, rows := range procs {
			vals[i] = rows[r]
		}
		kind := "part"
		if strings.HasPrefix(r, "SBI client saw: ") || strings.HasPrefix(r, "SBI server spent: ") {
			kind = "detail"
		}
		out = append(out, Hop{Name: r, Kind: kind, Stat: stat(vals)})
	}
	slices.SortFunc(out, func(x, y Hop) int {
		return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(y.Mean, x.Mean), strings.Compare(x.Name, y.Name))
	})
	return out
}

// classOf is the kind of hop a part row belongs to; "" for details.
func classOf(row string) string {
	switch {
	case row == RowRAN || row == RowN2Uplink || row == RowN2Downlink || row == NotAccounted || row == "AMF dispatcher queue":
		return row
	case strings.HasPrefix(row, "AMF step: ") || strings.HasPrefix(row, "AMF N2 ") || strings.HasPrefix(row, "AMF event "):
		return "AMF processing (all steps, N2 decode)"
	case strings.HasPrefix(row, "SBI transport"):
		return "SBI transport (all calls, client - server)"
	case strings.HasPrefix(row, "SBI client saw: ") || strings.HasPrefix(row, "SBI server spent: "):
		return ""
	case strings.Contains(row, " handles: "):
		return row[:strings.Index(row, " handles: ")] + " processing (all requests)"
	case strings.Contains(row, " consumer (encode"):
		return row[:strings.Index(row, " consumer (")] + " SBI consumer code (all calls)"
	case strings.Contains(row, " crypto: "):
		return "crypto (all NFs)"
	case strings.Contains(row, " store: "):
		return "store (all NFs)"
	case strings.Contains(row, " PFCP: "):
		return "PFCP N4 round trips"
	case strings.HasPrefix(row, "UPF-C: "):
		return "UPF-C processing (notes, PFCP requests)"
	case strings.HasPrefix(row, "SMF paging: "):
		return "SMF paging (Session Report → N1N2MessageTransfer answered)"
	case row == RowDownlinkToUPFC || row == RowUPFUToUE:
		return "user plane, not traced (kernel, UPF-U, N3)"
	}
	return "other spans"
}

// rank orders rows: parts first, not accounted for last among them, then
// the inclusive details.
func rank(h Hop) int {
	switch {
	case h.Kind == "detail":
		return 2
	case h.Name == NotAccounted:
		return 1
	}
	return 0
}

func stat(ds []time.Duration) Stat {
	if len(ds) == 0 {
		return Stat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Stat{P50: ms(quantile(s, 0.50)), P99: ms(quantile(s, 0.99)), Mean: ms(sum / time.Duration(len(s)))}
}

// quantile of sorted s by the nearest-rank method.
func quantile(s []time.Duration, q float64) time.Duration {
	i := int(float64(len(s))*q+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Write prints b as a table: the parts with their share of the mean, a
// check that they add up, and the inclusive SBI rows.
func (b Breakdown) Write(w io.Writer, title string) {
	fmt.Fprintf(w, "\n%s: %d procedures, end to end p50 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
		title, b.Count, b.EndToEnd.P50, b.EndToEnd.P99, b.EndToEnd.Mean)
	writeRows(w, "by kind of hop", b.Classes, b.EndToEnd)
	writeRows(w, "hop (exclusive time; parts add up to end to end)", b.Hops, b.EndToEnd)
}

func writeRows(w io.Writer, heading string, hops []Hop, e2e Stat) {
	fmt.Fprintf(w, "  %-78s %9s %9s %9s %6s\n", heading, "p50 ms", "p99 ms", "mean ms", "share")
	var sum float64
	detail := false
	for _, h := range hops {
		if h.Kind == "detail" && !detail {
			fmt.Fprintf(w, "  %-78s %9s %9s %9.3f %5.1f%%\n", "sum of the parts (= end to end mean)", "", "", sum, 100*sum/nz(e2e.Mean))
			fmt.Fprintf(w, "  %-78s\n", "SBI calls, inclusive (overlap the parts above):")
			detail = true
		}
		share := ""
		if h.Kind == "part" {
			sum += h.Mean
			share = fmt.Sprintf("%5.1f%%", 100*h.Mean/nz(e2e.Mean))
		}
		fmt.Fprintf(w, "  %-78s %9.3f %9.3f %9.3f %6s\n", trim(h.Name, 78), h.P50, h.P99, h.Mean, share)
	}
	if !detail {
		fmt.Fprintf(w, "  %-78s %9s %9s %9.3f %5.1f%%\n", "sum of the parts (= end to end mean)", "", "", sum, 100*sum/nz(e2e.Mean))
	}
}

func nz(x float64) float64 {
	if x == 0 {
		return 1
	}
	return x
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
