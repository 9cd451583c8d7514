package ngapx

// What the handover messages of TS 38.413 8.4 share, on both sides: the
// PDU session lists with their N2 SM transfers (built and read by the SMF
// and the gNB with sm_transfer*.go; opaque octets to the AMF), the Security
// Context (NH, NCC), UE Security Capabilities, the Target ID and User
// Location Information. The messages themselves are in handover_xn.go
// (Path Switch Request, 8.4.4) and handover_n2.go (8.4.1-8.4.3, 8.4.5-8.4.7).

import (
	"errors"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/domain"
)

// SessionTransfer is one PDU session of a handover message and the N2 SM
// transfer it carries for it (TS 38.413 9.3.4).
type SessionTransfer struct {
	ID       int64 // PDU Session ID (9.3.1.50): 0-255
	Transfer []byte
}

// checkSessions: the lists of 9.2.3 hold 1..maxnoofPDUSessions (256)
// items, each with a session ID in range and a transfer.
func checkSessions(what string, list []SessionTransfer, optional bool) error {
	if len(list) == 0 && optional {
		return nil
	}
	if len(list) == 0 || len(list) > 256 {
		return fmt.Errorf("%s: %d PDU sessions, want 1-256", what, len(list))
	}
	for _, s := range list {
		if s.ID < 0 || s.ID > 255 {
			return fmt.Errorf("%s: PDU session ID %d out of 0-255", what, s.ID)
		}
		if len(s.Transfer) == 0 {
			return fmt.Errorf("%s: PDU session %d without its transfer", what, s.ID)
		}
	}
	return nil
}

// SecurityContext is the Security Context IE (TS 38.413 9.3.1.85): the
// Next Hop key NH (TS 33.501 A.10, 32 octets) and its chaining count NCC.
type SecurityContext struct {
	NCC uint8
	NH  []byte
}

func (c SecurityContext) ie() (*ngapType.SecurityContext, error) {
	if len(c.NH) != 32 || c.NCC > 7 {
		return nil, fmt.Errorf("security context: NH of %d octets, NCC %d (want 32, 0-7)", len(c.NH), c.NCC)
	}
	return &ngapType.SecurityContext{NextHopChainingCount: ngapType.NextHopChainingCount{Value: int64(c.NCC)},
		NextHopNH: ngapType.SecurityKey{Value: aper.BitString{Bytes: append([]byte(nil), c.NH...), BitLength: 256}}}, nil
}

func securityContextOf(x *ngapType.SecurityContext) (SecurityContext, error) {
	if x.NextHopNH.Value.BitLength != 256 || len(x.NextHopNH.Value.Bytes) != 32 {
		return SecurityContext{}, errors.New("security context: NH is not 256 bits")
	}
	return SecurityContext{NCC: uint8(x.NextHopChainingCount.Value), NH: append([]byte(nil), x.NextHopNH.Value.Bytes...)}, nil
}

// SecurityCapabilities is UE Security Capabilities (TS 38.413 9.3.1.86):
// the 16-bit algorithm bitmaps, e.g. from nasx.SecurityCapability.NRBits.
type SecurityCapabilities struct {
	NREncryption, NRIntegrity       [2]byte
	EUTRAEncryption, EUTRAIntegrity [2]byte
}

func (c SecurityCapabilities) ie() *ngapType.UESecurityCapabilities {
	return &ngapType.UESecurityCapabilities{
		NRencryptionAlgorithms:             ngapType.NRencryptionAlgorithms{Value: bits16(c.NREncryption)},
		NRintegrityProtectionAlgorithms:    ngapType.NRintegrityProtectionAlgorithms{Value: bits16(c.NRIntegrity)},
		EUTRAencryptionAlgorithms:          ngapType.EUTRAencryptionAlgorithms{Value: bits16(c.EUTRAEncryption)},
		EUTRAintegrityProtectionAlgorithms: ngapType.EUTRAintegrityProtectionAlgorithms{Value: bits16(c.EUTRAIntegrity)}}
}

func securityCapabilitiesOf(x *ngapType.UESecurityCapabilities) SecurityCapabilities {
	return SecurityCapabilities{NREncryption: two(x.NRencryptionAlgorithms.Value), NRIntegrity: two(x.NRintegrityProtectionAlgorithms.Value),
		EUTRAEncryption: two(x.EUTRAencryptionAlgorithms.Value), EUTRAIntegrity: two(x.EUTRAintegrityProtectionAlgorithms.Value)}
}

func two(b aper.BitString) (out [2]byte) {
	copy(out[:], b.Bytes)
	return out
}

// GlobalGNBID names a gNB (TS 38.413 9.3.1.6): its PLMN and gNB ID of
// 22-32 bits, right-aligned in ID.
type GlobalGNBID struct {
	PLMN domain.PLMN
	ID   uint32
	Bits uint8
}

func (g GlobalGNBID) String() string {
	return fmt.Sprintf("%s%s-%0*x/%d", g.PLMN.MCC, g.PLMN.MNC, (g.Bits+3)/4, g.ID, g.Bits)
}

func (g GlobalGNBID) ie() (ngapType.GlobalRANNodeID, error) {
	plmn, err := g.PLMN.ToNGAP()
	if err != nil {
		return ngapType.GlobalRANNodeID{}, err
	}
	if g.Bits < 22 || g.Bits > 32 || (g.Bits < 32 && g.ID>>g.Bits != 0) {
		return ngapType.GlobalRANNodeID{}, fmt.Errorf("gNB ID %#x of %d bits", g.ID, g.Bits)
	}
	n := (int(g.Bits) + 7) / 8
	v := uint64(g.ID) << (uint(n)*8 - uint(g.Bits)) // left-aligned in n octets
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(v >> (8 * uint(n-1-i)))
	}
	return ngapType.GlobalRANNodeID{Present: ngapType.GlobalRANNodeIDPresentGlobalGNBID,
		GlobalGNBID: &ngapType.GlobalGNBID{PLMNIdentity: plmn, GNBID: ngapType.GNBID{Present: ngapType.GNBIDPresentGNBID,
			GNBID: &aper.BitString{Bytes: b, BitLength: uint64(g.Bits)}}}}, nil
}

// GlobalGNBIDOf reads a Global RAN Node ID naming a gNB (ng-eNBs and N3IWFs
// are not served here).
func GlobalGNBIDOf(x *ngapType.GlobalRANNodeID) (GlobalGNBID, error) {
	if x == nil || x.Present != ngapType.GlobalRANNodeIDPresentGlobalGNBID || x.GlobalGNBID == nil || x.GlobalGNBID.GNBID.GNBID == nil {
		return GlobalGNBID{}, errors.New("Global RAN Node ID: not a gNB")
	}
	plmn, err := domain.PLMNFromNGAP(x.GlobalGNBID.PLMNIdentity)
	if err != nil {
		return GlobalGNBID{}, err
	}
	id, bits, err := gnbIDBits(x.GlobalGNBID.GNBID.GNBID.Bytes, x.GlobalGNBID.GNBID.GNBID.BitLength)
	if err != nil {
		return GlobalGNBID{}, err
	}
	return GlobalGNBID{PLMN: plmn, ID: id, Bits: bits}, nil
}

// gnbIDBits turns a left-aligned gNB ID bit string into its value.
func gnbIDBits(b []byte, bits uint64) (uint32, uint8, error) {
	if bits < 22 || bits > 32 || uint64(len(b)) != (bits+7)/8 {
		return 0, 0, fmt.Errorf("gNB ID of %d bits in %d octets", bits, len(b))
	}
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return uint32(v >> (uint64(len(b))*8 - bits)), uint8(bits), nil
}

// GlobalGNBID gives the Global gNB ID an NG Setup Request announced.
func (r NGSetupRequest) GlobalGNBID() (GlobalGNBID, error) {
	id, bits, err := gnbIDBits(r.GNBID, r.GNBBits)
	if err != nil {
		return GlobalGNBID{}, err
	}
	return GlobalGNBID{PLMN: r.PLMN, ID: id, Bits: bits}, nil
}

// Target is the Target ID of Handover Required (TS 38.413 9.3.1.25): the
// target gNB and the TAI it selected for the UE.
type Target struct {
	GNB GlobalGNBID
	TAI domain.TAI
}

func (t Target) ie() (*ngapType.TargetID, error) {
	node, err := t.GNB.ie()
	if err != nil {
		return nil, err
	}
	tai, err := t.TAI.ToNGAP()
	if err != nil {
		return nil, err
	}
	return &ngapType.TargetID{Present: ngapType.TargetIDPresentTargetRANNodeID,
		TargetRANNodeID: &ngapType.TargetRANNodeID{GlobalRANNodeID: node, SelectedTAI: tai}}, nil
}

func targetOf(x *ngapType.TargetID) (Target, error) {
	if x.Present != ngapType.TargetIDPresentTargetRANNodeID || x.TargetRANNodeID == nil {
		return Target{}, errors.New("Target ID: not an NG-RAN node (handover to E-UTRAN is not served)")
	}
	g, err := GlobalGNBIDOf(&x.TargetRANNodeID.GlobalRANNodeID)
	if err != nil {
		return Target{}, err
	}
	tai, err := domain.TAIFromNGAP(x.TargetRANNodeID.SelectedTAI)
	if err != nil {
		return Target{}, err
	}
	return Target{GNB: g, TAI: tai}, nil
}

// cellOf reads the NR User Location Information back into a Cell.
func cellOf(x *ngapType.UserLocationInformation) (Cell, error) {
	nr := x.UserLocationInformationNR
	if x.Present != ngapType.UserLocationInformationPresentUserLocationInformationNR || nr == nil {
		return Cell{}, errors.New("User Location Information: only NR is supported")
	}
	tai, err := domain.TAIFromNGAP(nr.TAI)
	if err != nil {
		return Cell{}, err
	}
	b := nr.NRCGI.NRCellIdentity.Value
	if b.BitLength != 36 || len(b.Bytes) != 5 {
		return Cell{}, errors.New("User Location Information: NR Cell Identity is not 36 bits")
	}
	var v uint64
	for _, x := range b.Bytes {
		v = v<<8 | uint64(x)
	}
	return Cell{TAI: tai, CellID: v >> 4}, nil
}

// DRBCount is one DRB of a RAN Status Transfer (TS 38.413 9.3.4.x RAN
// Status Transfer Transparent Container, 18-bit PDCP SNs): the COUNT of
// the next uplink SDU the source expects and of the next downlink SDU it
// would have sent.
type DRBCount struct {
	DRB             int64 // DRB ID 1-32
	ULPDCPSN, ULHFN int64 // 0..2^18-1, 0..2^14-1
	DLPDCPSN, DLHFN int64
}

// RANStatusContainer builds the RAN Status Transfer Transparent Container
// a source gNB sends (TS 38.413 9.3.4.x), 18-bit PDCP SN form.
func RANStatusContainer(drbs []DRBCount) (ngapType.RANStatusTransferTransparentContainer, error) {
	var c ngapType.RANStatusTransferTransparentContainer
	if len(drbs) == 0 || len(drbs) > 32 {
		return c, fmt.Errorf("RAN status: %d DRBs, want 1-32", len(drbs))
	}
	for _, d := range drbs {
		if d.DRB < 1 || d.DRB > 32 || d.ULPDCPSN>>18 != 0 || d.DLPDCPSN>>18 != 0 || d.ULHFN>>14 != 0 || d.DLHFN>>14 != 0 ||
			d.ULPDCPSN < 0 || d.DLPDCPSN < 0 || d.ULHFN < 0 || d.DLHFN < 0 {
			return c, fmt.Errorf("RAN status: DRB %d out of range", d.DRB)
		}
		c.DRBsSubjectToStatusTransferList.List = append(c.DRBsSubjectToStatusTransferList.List, ngapType.DRBsSubjectToStatusTransferItem{
			DRBID: ngapType.DRBID{Value: d.DRB},
			DRBStatusUL: ngapType.DRBStatusUL{Present: ngapType.DRBStatusULPresentDRBStatusUL18, DRBStatusUL18: &ngapType.DRBStatusUL18{
				ULCOUNTValue: ngapType.COUNTValueForPDCPSN18{PDCPSN18: d.ULPDCPSN, HFNPDCPSN18: d.ULHFN}}},
			DRBStatusDL: ngapType.DRBStatusDL{Present: ngapType.DRBStatusDLPresentDRBStatusDL18, DRBStatusDL18: &ngapType.DRBStatusDL18{
				DLCOUNTValue: ngapType.COUNTValueForPDCPSN18{PDCPSN18: d.DLPDCPSN, HFNPDCPSN18: d.DLHFN}}},
		})
	}
	return c, nil
}

// DRBCounts reads the 18-bit PDCP SN DRBs of a RAN Status Transfer
// Transparent Container (12-bit ones are skipped: the simulator uses 18).
func DRBCounts(c ngapType.RANStatusTransferTransparentContainer) []DRBCount {
	var out []DRBCount
	for _, it := range c.DRBsSubjectToStatusTransferList.List {
		ul, dl := it.DRBStatusUL.DRBStatusUL18, it.DRBStatusDL.DRBStatusDL18
		if ul == nil || dl == nil {
			continue
		}
		out = append(out, DRBCount{DRB: it.DRBID.Value, ULPDCPSN: ul.ULCOUNTValue.PDCPSN18, ULHFN: ul.ULCOUNTValue.HFNPDCPSN18,
			DLPDCPSN: dl.DLCOUNTValue.PDCPSN18, DLHFN: dl.DLCOUNTValue.HFNPDCPSN18})
	}
	return out
}

// handoverRecover turns a panic of a reader on crafted input into an error.
func handoverRecover(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %s: %v", ErrTransferSyntax, what, r)
	}
}

// missing reports the mandatory IEs a message lacked (TS 38.413 10.3.5).
func missing(what string, names ...string) error {
	return fmt.Errorf("%s: %w (%v)", what, ErrMissingIE, names)
}

// SourceToTargetContainer builds the Source NG-RAN Node to Target NG-RAN
// Node Transparent Container (TS 38.413 9.3.1.29) a source gNB puts in
// Handover Required: the RRC Handover Preparation Information (TS 38.331,
// opaque here), the target cell and the UE's history (the source cell,
// stayed for stayed seconds).
func SourceToTargetContainer(rrc []byte, target, source Cell, stayed int64) ([]byte, error) {
	tc, err := target.cgi()
	if err != nil {
		return nil, err
	}
	sc, err := source.cgi()
	if err != nil {
		return nil, err
	}
	c := ngapType.SourceNGRANNodeToTargetNGRANNodeTransparentContainer{RRCContainer: ngapType.RRCContainer{Value: rrc}, TargetCellID: tc,
		UEHistoryInformation: ngapType.UEHistoryInformation{List: []ngapType.LastVisitedCellItem{{LastVisitedCellInformation: ngapType.LastVisitedCellInformation{
			Present: ngapType.LastVisitedCellInformationPresentNGRANCell, NGRANCell: &ngapType.LastVisitedNGRANCellInformation{
				GlobalCellID: sc, CellType: ngapType.CellType{CellSize: ngapType.CellSize{Value: ngapType.CellSizePresentSmall}},
				TimeUEStayedInCell: ngapType.TimeUEStayedInCell{Value: min(max(stayed, 0), 4095)}}}}}}}
	return marshalTransfer(c, "Source NG-RAN Node to Target NG-RAN Node Transparent Container")
}

// TargetToSourceContainer builds the Target NG-RAN Node to Source NG-RAN
// Node Transparent Container (TS 38.413 9.3.1.30): the RRC Handover
// Command for the UE (TS 38.331, opaque here).
func TargetToSourceContainer(rrc []byte) ([]byte, error) {
	return marshalTransfer(ngapType.TargetNGRANNodeToSourceNGRANNodeTransparentContainer{RRCContainer: ngapType.RRCContainer{Value: rrc}},
		"Target NG-RAN Node to Source NG-RAN Node Transparent Container")
}

func (c Cell) cgi() (ngapType.NGRANCGI, error) {
	uli, err := c.userLocation()
	if err != nil {
		return ngapType.NGRANCGI{}, err
	}
	nr := uli.UserLocationInformationNR.NRCGI
	return ngapType.NGRANCGI{Present: ngapType.NGRANCGIPresentNRCGI, NRCGI: &nr}, nil
}
