package logging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
)

// supiKeys are the attribute names under which the NFs log subscriber
// identities: SUPIs (TS 23.003 2.2A), IMSIs, and SUCIs, whose null-scheme
// form carries the MSIN in clear (TS 33.501 6.12.2).
var supiKeys = map[string]bool{"supi": true, "supiOrSuci": true, "imsi": true, "ueId": true, "suci": true}

// RedactSUPI wraps h so that attributes named supi, supiOrSuci, imsi,
// ueId or suci, at any depth of groups, keep only what identifies the
// network and the last 4 digits: imsi-208930000000001 is written
// imsi-20893******0001. Logs can then leave the node without listing its
// subscribers, and one UE's lines still read as one UE's.
func RedactSUPI(h slog.Handler) slog.Handler { return redactHandler{next: h} }

type redactHandler struct{ next slog.Handler }

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = redactAttr(a)
	}
	return redactHandler{next: h.next.WithAttrs(red)}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{next: h.next.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch {
	case v.Kind() == slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, g := range group {
			red[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case supiKeys[a.Key]:
		return slog.String(a.Key, RedactIdentity(v.String()))
	}
	return a
}

// RedactIdentity masks a subscriber identity: an IMSI, with or without
// "imsi-", keeps its first 5 digits (MCC and MNC) and its last 4; a
// null-scheme SUCI keeps all but its scheme output, masked the same way;
// anything else becomes a short hash, equal for equal inputs.
func RedactIdentity(id string) string {
	if id == "" {
		return id
	}
	if digits, ok := strings.CutPrefix(id, "imsi-"); ok && allDigits(digits) {
		return "imsi-" + maskDigits(digits)
	}
	if allDigits(id) {
		return maskDigits(id)
	}
	// suci-<type>-<mcc>-<mnc>-<routing>-<scheme>-<key id>-<output> (TS 23.003 2.2B)
	if parts := strings.Split(id, "-"); len(parts) == 8 && parts[0] == "suci" {
		if parts[5] == "0" && allDigits(parts[7]) { // null scheme: the output is the MSIN
			parts[7] = maskTail(parts[7])
		}
		return strings.Join(parts, "-")
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// maskDigits keeps the first 5 (MCC and MNC) and last 4 digits of an
// IMSI, and masks a string too short to be one with maskTail.
func maskDigits(d string) string {
	if len(d) < 11 {
		return maskTail(d)
	}
	return d[:5] + maskTail(d[5:])
}

// maskTail keeps the last 4 digits of a string of 7 or more (an MSIN), and
// the last 2 of a shorter one.
func maskTail(d string) string {
	keep := 4
	if len(d) < 7 {
		keep = min(2, len(d))
	}
	return strings.Repeat("*", len(d)-keep) + d[len(d)-keep:]
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
