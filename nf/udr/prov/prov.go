// Package prov is L25GC+'s subscriber provisioning API, served by the UDR
// and used by `l25gc subscriber` and `l25gc bench`: the JSON shapes, their
// translation to free5GC's subscriber layout (store.Subscriber), and a client.
//
// The API (our own; not a 3GPP service), under /l25gc-prov/v1:
//
//	POST   /subscribers            body Subscriber         → 201 Subscriber (409 if the IMSI exists)
//	PUT    /subscribers/{imsi}     body Subscriber         → 200 Subscriber (create or replace)
//	GET    /subscribers/{imsi}                             → 200 Subscriber (404 USER_NOT_FOUND)
//	DELETE /subscribers/{imsi}                             → 204 (404 USER_NOT_FOUND)
//	GET    /subscribers?offset=&limit=                     → 200 Page, in IMSI order
//	POST   /subscribers:bulk       body Range              → 200 BulkResult; IMSIs already stored are left alone
//
// Errors are ProblemDetails (TS 29.500 5.2.7.2). Omitted fields of a
// Subscriber take the node's defaults: S-NSSAIs and DNNs from the config,
// SQN 000000000000, AMF 8000. Given OP, the UDR stores OPc = E_K(OP) xor OP
// as free5GC's web console does (so any free5GC UDM reads it) and remembers
// OP only to show it back.
package prov

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/l25gc/l25gc/domain"
)

// BasePath is where the UDR serves the provisioning API.
const BasePath = "/l25gc-prov/v1"

// Subscriber is one subscriber as the provisioning API sees it. Keys are hex.
type Subscriber struct {
	IMSI    string   `json:"imsi"`
	K       string   `json:"k"`
	OPc     string   `json:"opc,omitempty"`
	OP      string   `json:"op,omitempty"`
	SQN     string   `json:"sqn,omitempty"`
	AMF     string   `json:"amf,omitempty"`
	SNSSAIs []SNSSAI `json:"snssais,omitempty"`
	DNNs    []string `json:"dnns,omitempty"`
	AMBR    *AMBR    `json:"ambr,omitempty"`
	// Session is the QoS of every subscribed DNN's PDU sessions.
	Session *SessionQoS `json:"session,omitempty"`
	// QosFlows are QoS flows beyond the default one: the PCF makes each a
	// PCC rule with its QoS data.
	QosFlows []QosFlow `json:"qosFlows,omitempty"`
}

// QosFlow is traffic of a subscriber's sessions that gets its own QoS:
// packets matching Filter get the 5QI, MBR and (for a GBR 5QI) GBR.
type QosFlow struct {
	// Filter is a TS 29.512 FlowDescription, an IPFilterRule (RFC 6733
	// 4.3) such as "permit out ip from 10.200.0.2 to assigned", or just a
	// data network address or prefix ("10.200.0.2", "10.200.0.0/24").
	Filter     string `json:"filter"`
	Precedence int    `json:"precedence,omitempty"` // 1-255, lower first; 0 = 128 + its index
	FiveQI     int    `json:"5qi"`
	MBR        *AMBR  `json:"mbr,omitempty"`
	GBR        *AMBR  `json:"gbr,omitempty"`
	// DNN and SNSSAI narrow it to one DNN or slice; empty: all subscribed.
	DNN    string  `json:"dnn,omitempty"`
	SNSSAI *SNSSAI `json:"snssai,omitempty"`
}

// rates parses an uplink/downlink pair named name; a nil pair is none.
func rates(name string, r *AMBR) ([2]domain.BitRate, error) {
	var out [2]domain.BitRate
	if r == nil {
		return out, nil
	}
	var err error
	if out[0], err = domain.ParseBitRate(r.Uplink); err != nil {
		return out, fmt.Errorf("%s.uplink: %w", name, err)
	}
	if out[1], err = domain.ParseBitRate(r.Downlink); err != nil {
		return out, fmt.Errorf("%s.downlink: %w", name, err)
	}
	return out, nil
}

// maxFilterLen bounds a filter: an IPFilterRule with a few ports.
const maxFilterLen = 256

// Validate names the field of f that is wrong.
func (f QosFlow) Validate() error {
	if f.Filter == "" || len(f.Filter) > maxFilterLen {
		return fmt.Errorf("filter: want an IP filter rule or a data network address, 1 to %d characters", maxFilterLen)
	}
	if f.Precedence < 0 || f.Precedence > 255 {
		return fmt.Errorf("precedence %d: want 1 to 255", f.Precedence)
	}
	if err := domain.Check5QI(f.FiveQI); err != nil {
		return fmt.Errorf("5qi: %w", err)
	}
	mbr, err := rates("mbr", f.MBR)
	if err != nil {
		return err
	}
	gbr, err := rates("gbr", f.GBR)
	if err != nil {
		return err
	}
	if domain.IsGBR5QI(f.FiveQI) && f.GBR == nil {
		return fmt.Errorf("gbr: 5QI %d is a GBR 5QI and needs a guaranteed bit rate (TS 23.501 5.7.2.5)", f.FiveQI)
	}
	if f.MBR != nil && f.GBR != nil && (gbr[0] > mbr[0] || gbr[1] > mbr[1]) {
		return fmt.Errorf("gbr: above the mbr (TS 23.501 5.7.2.5: MFBR >= GFBR)")
	}
	if f.DNN != "" {
		if _, err := domain.ParseDNN(f.DNN); err != nil {
			return fmt.Errorf("dnn: %w", err)
		}
	}
	if f.SNSSAI != nil {
		if err := f.SNSSAI.Validate(); err != nil {
			return fmt.Errorf("snssai: %w", err)
		}
	}
	return nil
}

// SessionQoS is what a subscriber's PDU sessions get on each DNN: the
// session AMBR (TS 23.501 5.7.2.6) and the default QoS flow's 5QI and ARP
// priority (5.7.2.7; TS 29.505 DnnConfiguration 5gQosProfile, sessionAmbr).
// The UDR stores it both in the subscription data (smData) and in the
// PCF's policy data (policyData.ues.smData).
type SessionQoS struct {
	AMBR        AMBR `json:"ambr"`
	FiveQI      int  `json:"5qi"`
	ARPPriority int  `json:"arpPriority"`
}

// SNSSAI is a slice, {"sst": 1, "sd": "010203"} in JSON; its rules are the
// domain package's (TS 23.003 28.4.2).
type SNSSAI = domain.SNSSAI

// AMBR is the subscribed UE aggregate maximum bit rate, e.g. "1 Gbps"
// (TS 29.571 5.5.2 BitRate).
type AMBR struct {
	Uplink   string `json:"uplink"`
	Downlink string `json:"downlink"`
}

// Range is Count subscribers with consecutive IMSIs from IMSI, sharing the
// other fields.
type Range struct {
	Subscriber
	Count int `json:"count"`
}

// BulkResult says what a bulk add did. A failed bulk request answers a
// ProblemDetails that carries these members too (RFC 7807 3.2 extension
// members): what was added before the failure stays added.
type BulkResult struct {
	Requested int `json:"requested"`
	Added     int `json:"added"`
	Existing  int `json:"existing"`
}

// Page is one page of a listing.
type Page struct {
	Total       int          `json:"total"`
	Offset      int          `json:"offset"`
	Subscribers []Subscriber `json:"subscribers"`
}

// Defaults fill what a request leaves out.
type Defaults struct {
	SNSSAIs []SNSSAI
	DNNs    []string
	AMBR    AMBR
	Session SessionQoS
}

// DefaultSession is the session QoS of a subscriber provisioned without
// one: 1 Gbps up, 2 Gbps down (free5GC's sample values), 5QI 9 with ARP 8
// (TS 23.501 5.7.4: 5QI 9 is the default bearer of internet access).
var DefaultSession = SessionQoS{AMBR: AMBR{Uplink: "1 Gbps", Downlink: "2 Gbps"}, FiveQI: 9, ARPPriority: 8}

// Default values of a subscriber's SQN and AMF (TS 33.102 6.3.2: AMF
// separation bit set for 5G, TS 33.501 6.1.3.2 / Annex A.2 of 33.102).
const (
	DefaultSQN = "000000000000"
	DefaultAMF = "8000"
)

// WithDefaults returns s completed by d, keys in lower case.
func (s Subscriber) WithDefaults(d Defaults) Subscriber {
	s.K, s.OPc, s.OP = strings.ToLower(s.K), strings.ToLower(s.OPc), strings.ToLower(s.OP)
	s.SQN, s.AMF = strings.ToLower(s.SQN), strings.ToLower(s.AMF)
	if s.SQN == "" {
		s.SQN = DefaultSQN
	}
	if s.AMF == "" {
		s.AMF = DefaultAMF
	}
	if len(s.SNSSAIs) == 0 {
		s.SNSSAIs = append([]SNSSAI(nil), d.SNSSAIs...)
	}
	if len(s.DNNs) == 0 {
		s.DNNs = append([]string(nil), d.DNNs...)
	}
	if s.AMBR == nil && d.AMBR.Uplink != "" {
		a := d.AMBR
		s.AMBR = &a
	}
	s.Session = s.Session.withDefaults(d.Session)
	return s
}

// withDefaults fills the fields q leaves out from d, then DefaultSession.
func (q *SessionQoS) withDefaults(d SessionQoS) *SessionQoS {
	out := SessionQoS{}
	if q != nil {
		out = *q
	}
	for _, def := range []SessionQoS{d, DefaultSession} {
		if out.AMBR.Uplink == "" {
			out.AMBR.Uplink = def.AMBR.Uplink
		}
		if out.AMBR.Downlink == "" {
			out.AMBR.Downlink = def.AMBR.Downlink
		}
		if out.FiveQI == 0 {
			out.FiveQI = def.FiveQI
		}
		if out.ARPPriority == 0 {
			out.ARPPriority = def.ARPPriority
		}
	}
	return &out
}

// Validate names the field of q that is wrong.
func (q SessionQoS) Validate() error {
	if _, err := domain.ParseBitRate(q.AMBR.Uplink); err != nil {
		return fmt.Errorf("session.ambr.uplink: %w", err)
	}
	if _, err := domain.ParseBitRate(q.AMBR.Downlink); err != nil {
		return fmt.Errorf("session.ambr.downlink: %w", err)
	}
	if err := domain.CheckDefault5QI(q.FiveQI); err != nil {
		return fmt.Errorf("session.5qi: %w", err)
	}
	if err := domain.CheckARPPriority(q.ARPPriority); err != nil {
		return fmt.Errorf("session.arpPriority: %w", err)
	}
	return nil
}

// Validate says what is wrong with a completed subscriber, naming the field.
func (s Subscriber) Validate() error {
	if err := domain.CheckIMSI(s.IMSI); err != nil {
		return fmt.Errorf("imsi: %w", err)
	}
	if !isHex(s.K, 16) {
		return fmt.Errorf("k: must be 32 hex digits")
	}
	switch {
	case s.OPc != "" && s.OP != "":
		return fmt.Errorf("opc, op: give one of them, not both")
	case s.OPc == "" && s.OP == "":
		return fmt.Errorf("opc: opc or op is needed")
	case s.OPc != "" && !isHex(s.OPc, 16):
		return fmt.Errorf("opc: must be 32 hex digits")
	case s.OP != "" && !isHex(s.OP, 16):
		return fmt.Errorf("op: must be 32 hex digits")
	}
	if !isHex(s.SQN, 6) {
		return fmt.Errorf("sqn: must be 12 hex digits")
	}
	if !isHex(s.AMF, 2) {
		return fmt.Errorf("amf: must be 4 hex digits")
	}
	if len(s.SNSSAIs) == 0 {
		return fmt.Errorf("snssais: at least one S-NSSAI is needed")
	}
	for _, n := range s.SNSSAIs {
		if err := n.Validate(); err != nil {
			return fmt.Errorf("snssais: %w", err)
		}
	}
	for _, d := range s.DNNs {
		if _, err := domain.ParseDNN(d); err != nil {
			return fmt.Errorf("dnns: %w", err)
		}
	}
	if s.AMBR != nil {
		if _, err := domain.ParseBitRate(s.AMBR.Uplink); err != nil {
			return fmt.Errorf("ambr.uplink: %w", err)
		}
		if _, err := domain.ParseBitRate(s.AMBR.Downlink); err != nil {
			return fmt.Errorf("ambr.downlink: %w", err)
		}
	}
	if s.Session != nil {
		if err := s.Session.Validate(); err != nil {
			return err
		}
	}
	for i, f := range s.QosFlows {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("qosFlows[%d].%w", i, err)
		}
	}
	return nil
}

// MaxRangeCount bounds one range: 10 million subscribers.
const MaxRangeCount = 10_000_000

// IMSIs expands the range into its IMSIs, keeping the first IMSI's length.
func (r Range) IMSIs() ([]string, error) {
	first, err := r.check()
	if err != nil {
		return nil, err
	}
	out := make([]string, r.Count)
	for i := range out {
		out[i] = imsiAt(first, i, len(r.IMSI))
	}
	return out, nil
}

// Split cuts the range into consecutive ranges of at most size
// subscribers, in IMSI order: the batches of a bulk request.
func (r Range) Split(size int) ([]Range, error) {
	first, err := r.check()
	if err != nil {
		return nil, err
	}
	if size < 1 {
		return nil, fmt.Errorf("batch size %d: must be 1 or more", size)
	}
	out := make([]Range, 0, (r.Count+size-1)/size)
	for done := 0; done < r.Count; done += size {
		part := r
		part.IMSI, part.Count = imsiAt(first, done, len(r.IMSI)), min(size, r.Count-done)
		out = append(out, part)
	}
	return out, nil
}

// check validates the count and the first IMSI, and that the last IMSI has
// as many digits as the first; it returns the first IMSI as a number.
func (r Range) check() (uint64, error) {
	if r.Count < 1 || r.Count > MaxRangeCount {
		return 0, fmt.Errorf("count %d: must be 1 to %d", r.Count, MaxRangeCount)
	}
	if err := domain.CheckIMSI(r.IMSI); err != nil {
		return 0, fmt.Errorf("imsi: %w", err)
	}
	first, _ := strconv.ParseUint(r.IMSI, 10, 64)
	if last := strconv.FormatUint(first+uint64(r.Count)-1, 10); len(last) > len(r.IMSI) {
		return 0, fmt.Errorf("imsi %s + count %d overflows %d digits", r.IMSI, r.Count, len(r.IMSI))
	}
	return first, nil
}

func imsiAt(first uint64, offset, width int) string {
	return fmt.Sprintf("%0*d", width, first+uint64(offset))
}

// isHex says whether s is exactly n bytes in hex.
func isHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
