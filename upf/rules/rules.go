// Package rules is the user plane's rule model: one PFCP session's packet
// detection, forwarding, QoS enforcement and usage reporting rules (TS
// 29.244 5.2), in the one form the SMF builds, N4 carries (package
// protocol/pfcpx encodes and decodes it), UPF-C keeps and UPF-U applies
// from shared memory (onvm/include/upf_shm.h).
//
// The SMF talks to a UPF through N4; UPF-C talks to UPF-U through Table.
package rules

import (
	"context"
	"fmt"
	"net/netip"
)

// Interface is a PDR's source or a FAR's destination interface (TS 29.244
// 8.2.2, 8.2.24).
type Interface uint8

const (
	Access     Interface = 0 // N3: toward the gNB
	Core       Interface = 1 // N6: toward the data network
	SGiLANN6   Interface = 2
	CPFunction Interface = 3
)

// FTEID is a GTP-U tunnel endpoint (TS 29.244 8.2.3). In a PDR the SMF
// sets Choose and UPF-C allocates TEID and address (CH flag); PDRs with the
// same ChooseID share one allocated F-TEID.
type FTEID struct {
	TEID     uint32
	IPv4     netip.Addr
	Choose   bool
	ChooseID uint8
}

// PDR detects packets (TS 29.244 5.2.1): uplink by the local F-TEID (+QFI,
// +SDF filters), downlink by the UE IP address (+SDF filters). The highest
// precedence (lowest value) matching PDR wins.
type PDR struct {
	ID              uint16
	Precedence      uint32
	Source          Interface
	LocalFTEID      *FTEID     // uplink (Source Access); nil otherwise
	UEIPv4          netip.Addr // the UE's address: source uplink, destination downlink
	NetworkInstance string     // the DNN, or "" for any
	QFI             uint8      // uplink: match this QFI only; 0 = any
	// SDFFilters are flow descriptions (TS 29.244 8.2.5, the IPFilterRule
	// syntax of RFC 6733 4.3, e.g. "permit out 17 from 10.200.0.2 5201 to
	// assigned"); none = every packet of the session matches.
	SDFFilters []string
	// OuterHeaderRemoval strips GTP-U/UDP/IPv4 (TS 29.244 8.2.64 value 0).
	OuterHeaderRemoval bool
	FARID              uint32
	QERIDs             []uint32
	URRIDs             []uint32
}

// ApplyAction is a FAR's action bits (TS 29.244 8.2.26).
type ApplyAction uint16

const (
	ActionDrop    ApplyAction = 1 << 0 // DROP
	ActionForward ApplyAction = 1 << 1 // FORW
	ActionBuffer  ApplyAction = 1 << 2 // BUFF: hold downlink packets (idle UE)
	ActionNotify  ApplyAction = 1 << 3 // NOCP: tell the CP of the first buffered packet
)

// FAR forwards, drops or buffers what its PDRs detect (TS 29.244 5.2.3).
type FAR struct {
	ID              uint32
	Action          ApplyAction
	Destination     Interface
	NetworkInstance string
	// OuterHeader, when set, encapsulates in GTP-U toward the gNB (TS
	// 29.244 8.2.56, GTP-U/UDP/IPv4).
	OuterHeader *OuterHeader
	// SendEndMarker, in an Update FAR that changes OuterHeader, asks the
	// UPF to send GTP-U End Marker (TS 29.281 7.3.2) into the OLD tunnel
	// after the last packet forwarded there (PFCPSMReq-Flags SNDEM, TS
	// 29.244 8.2.58; a handover's path switch, TS 23.502 4.9.1.2.2 step 6).
	// A one-off request: not part of the installed rule, never stored.
	SendEndMarker bool
}

// OuterHeader is the GTP-U tunnel a FAR sends into.
type OuterHeader struct {
	TEID     uint32
	PeerIPv4 netip.Addr
}

// QER gates and rate-limits a QoS flow (TS 29.244 5.2.4); rates in bit/s,
// 0 = no limit for MBR and no guarantee for GBR.
type QER struct {
	ID         uint32
	QFI        uint8 // marked on N3 downlink (PDU Session Container, TS 38.415)
	GateULOpen bool
	GateDLOpen bool
	MBRUL      uint64
	MBRDL      uint64
	GBRUL      uint64
	GBRDL      uint64
	// Weight is the flow's share of what is left of the Session-AMBR once
	// every GBR flow has its GBR (issue 13: shared max-min fairly by
	// weight, package qos); 0 = not given, 1. The SMF sets it from the
	// flow's 5QI (smf.qos.weights); N4 carries it in a vendor-specific IE
	// (protocol/pfcpx), as TS 29.244 has none. 1..MaxWeight.
	Weight uint16
}

// MaxWeight bounds a QER's Weight: the shaper's deficit round robin lends
// a flow 1600 bytes per unit of weight per turn (qos.h QOS_QUANTUM_BYTES),
// so a weight of 100 is already a 160 KB turn; a ratio beyond 100:1 is no
// longer a share but a priority.
const MaxWeight = 100

// URR counts what its PDRs detect (TS 29.244 5.2.2); this user plane
// measures volume and packets, reported on deletion and on query.
type URR struct {
	ID uint32
	// VolumeThreshold in bytes triggers a usage report (0 = none).
	VolumeThreshold uint64
}

// Rules are rules of a session: all of them, or those to create, update
// (replace by ID) in a modification.
type Rules struct {
	PDRs []PDR
	FARs []FAR
	QERs []QER
	URRs []URR
}

// RuleIDs name rules to remove in a modification.
type RuleIDs struct {
	PDRs []uint16
	FARs []uint32
	QERs []uint32
	URRs []uint32
}

// Session is one PFCP session (one PDU session): its F-SEIDs and rules.
type Session struct {
	CPSEID uint64     // the SMF's SEID (F-SEID of the CP function)
	CPAddr netip.Addr // the SMF's N4 address
	UPSEID uint64     // UPF-C's SEID
	Rules
}

// Modification changes a session (TS 29.244 7.5.4): Remove first, then
// Update, then Create.
type Modification struct {
	Create Rules
	Update Rules
	Remove RuleIDs
}

// Usage is what one URR counted (TS 29.244 7.5.8.3 Usage Report).
type Usage struct {
	URRID           uint32
	UplinkBytes     uint64
	DownlinkBytes   uint64
	UplinkPackets   uint64
	DownlinkPackets uint64
}

// Established is the UPF's answer to a session establishment: its SEID
// and the F-TEIDs it chose for PDRs that asked (CH), by PDR ID.
type Established struct {
	UPSEID uint64
	FTEIDs map[uint16]FTEID
}

// CauseError is a UPF's rejection, with the PFCP cause (TS 29.244 8.2.1),
// e.g. 75 No resources available, 73 Rule creation/modification failure, 65 Session context not found.
type CauseError struct {
	Cause  uint8
	Detail string
}

func (e *CauseError) Error() string {
	return fmt.Sprintf("pfcp cause %d: %s", e.Cause, e.Detail)
}

// N4 is what the SMF needs of a UPF (TS 29.244 6.3, 7.5), addressed by the
// UPF's N4 address (an IP:port over UDP, or an X-IO service over shared
// memory). Implemented by protocol/pfcpx's client; Establish sets up the
// PFCP association with that UPF first when there is none.
type N4 interface {
	Establish(ctx context.Context, upf string, s *Session) (*Established, error)
	Modify(ctx context.Context, upf string, upSEID uint64, m *Modification) ([]Usage, error)
	Delete(ctx context.Context, upf string, upSEID uint64) ([]Usage, error)
}

// Report is a UPF's Session Report Request (TS 29.244 7.5.8) about one
// session, sent to the SMF that owns it.
type Report struct {
	CPSEID uint64 // the SMF's SEID of the session
	// DownlinkData, when set, is a Downlink Data Report (Report Type DLDR,
	// TS 29.244 8.2.21): the first packet for an idle UE was buffered
	// (FAR BUFF|NOCP). One per session until the SMF changes that FAR.
	DownlinkData *DownlinkDataReport
	// Usage reports (Report Type USAR), when a URR's threshold was hit.
	Usage []Usage
}

// DownlinkDataReport names what was buffered (TS 29.244 7.5.8.2).
type DownlinkDataReport struct {
	PDRIDs []uint16 // the PDRs that detected the buffered packets
	QFIs   []uint8  // their QoS flows (Downlink Data Service Information), when known
}

// ReportHandler is the SMF's side of a Session Report: it answers with a
// PFCP cause (1 Request accepted; 65 Session context not found when the
// SMF has no such session, so the UPF drops it, TS 29.244 7.5.9).
type ReportHandler func(ctx context.Context, upf string, r *Report) (cause uint8)

// Reporter is an N4 client that delivers the UPFs' Session Reports (the
// PFCP client of protocol/pfcpx); the SMF registers its handler once.
type Reporter interface {
	OnReport(h ReportHandler)
}

// Table is where UPF-C keeps the sessions UPF-U forwards with: the
// shared-memory rule tables (package upf/shm) or a map in tests. Install
// replaces a session whole (UPF-U sees the old rules or the new ones,
// never a mix); Sessions reads back every session, so a restarted UPF-C
// recovers them.
type Table interface {
	Install(s *Session) error
	Remove(upSEID uint64) error
	Usage(upSEID uint64) ([]Usage, error)
	Sessions() ([]Session, error)
}
