package domain

import (
	"fmt"
	"strconv"

	"github.com/free5gc/openapi/models"
)

// ExtSNSSAI is an S-NSSAI as an NF profile or a slice list entry offers it,
// with the SnssaiExtension of TS 29.571 (ExtSnssai): either every SD of the
// SST (WildcardSD) or SD ranges, besides the S-NSSAI itself.
type ExtSNSSAI struct {
	SNSSAI
	SDRanges   []SDRange
	WildcardSD bool
}

// SDRange is an inclusive range of SD values, 6 hex digits each (TS 29.571 SdRange).
type SDRange struct {
	Start, End string
}

// Match is the one rule for "does this entry serve the requested S-NSSAI".
// The SSTs must be equal. Then the entry serves: every SD of the SST when it
// says WildcardSD; an SD inside one of its SDRanges; otherwise exactly its
// own S-NSSAI (SNSSAI.Equal), unless it left its SD out to list ranges.
// Wildcards exist only where an entry declares
// them (TS 29.571 SnssaiExtension); an entry without an SD is the S-NSSAI
// without an SD, not "any SD" (TS 23.501 5.15.2.1). A requested S-NSSAI
// without an SD has the SD value NoSD (TS 23.003 28.4.2), so a wildcard or a
// range reaching ffffff serves it too.
func (e ExtSNSSAI) Match(requested SNSSAI) bool {
	if e.SST != requested.SST {
		return false
	}
	if e.WildcardSD {
		return true
	}
	sd := sdValue(requested)
	for _, r := range e.SDRanges {
		lo, errLo := strconv.ParseUint(r.Start, 16, 32)
		hi, errHi := strconv.ParseUint(r.End, 16, 32)
		if errLo == nil && errHi == nil && lo <= sd && sd <= hi {
			return true
		}
	}
	if len(e.SDRanges) > 0 && !e.HasSD() {
		return false // the sd left out for the ranges is not "no SD" too
	}
	return e.SNSSAI.Equal(requested)
}

// MatchModelSNSSAI is ExtSNSSAI.Match for the openapi forms, as NF
// profiles (TS 29.510 NFProfile sNssais) and discovery queries carry them;
// an entry or a request that is not valid matches nothing.
func MatchModelSNSSAI(entry models.ExtSnssai, requested models.Snssai) bool {
	e, err := ExtSNSSAIFromModel(entry)
	if err != nil {
		return false
	}
	r, err := SNSSAIFromModel(requested)
	return err == nil && e.Match(r)
}

// sdValue is the 24-bit SD of s, NoSD when it has none.
func sdValue(s SNSSAI) uint64 {
	c := s.canonical()
	if c.SD == "" {
		c.SD = NoSD
	}
	v, err := strconv.ParseUint(c.SD, 16, 32)
	if err != nil {
		return 1 << 24 // not an SD: inside no range
	}
	return v
}

// Validate says why e is not a valid entry, or nil: the S-NSSAI and the
// ranges (6 hex digits each, start not after end). A wildcard next to an
// SD or ranges is let through: it covers them anyway, and a peer's profile
// that says both still serves its SST.
func (e ExtSNSSAI) Validate() error {
	if err := e.SNSSAI.Validate(); err != nil {
		return err
	}
	for _, r := range e.SDRanges {
		if CheckSD(r.Start) != nil || CheckSD(r.End) != nil || r.Start == "" || r.End == "" {
			return fmt.Errorf("S-NSSAI %s: SD range %s..%s: want 6 hex digits each", e.SNSSAI, r.Start, r.End)
		}
		lo, _ := strconv.ParseUint(r.Start, 16, 32)
		hi, _ := strconv.ParseUint(r.End, 16, 32)
		if lo > hi {
			return fmt.Errorf("S-NSSAI %s: SD range %s..%s starts after its end", e.SNSSAI, r.Start, r.End)
		}
	}
	return nil
}

// ToModel gives the openapi ExtSnssai.
func (e ExtSNSSAI) ToModel() models.ExtSnssai {
	m := e.SNSSAI.ToModel()
	out := models.ExtSnssai{Sst: m.Sst, Sd: m.Sd, WildcardSd: e.WildcardSD}
	for _, r := range e.SDRanges {
		out.SdRanges = append(out.SdRanges, models.SdRange{Start: r.Start, End: r.End})
	}
	return out
}

// ExtSNSSAIFromModel checks an openapi ExtSnssai and returns it.
func ExtSNSSAIFromModel(m models.ExtSnssai) (ExtSNSSAI, error) {
	s, err := NewSNSSAI(int(m.Sst), m.Sd)
	if err != nil {
		return ExtSNSSAI{}, err
	}
	e := ExtSNSSAI{SNSSAI: s, WildcardSD: m.WildcardSd}
	for _, r := range m.SdRanges {
		e.SDRanges = append(e.SDRanges, SDRange{Start: r.Start, End: r.End})
	}
	return e, e.Validate()
}
