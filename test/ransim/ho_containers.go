package ransim

import (
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The transparent containers a gNB puts in N2 handover messages: the AMF
// passes them on unread (TS 38.413 9.3.1.20, 9.3.1.21), the other gNB and
// Wireshark read them. Their RRC containers hold the smallest valid RRC
// messages (TS 38.331, UPER): the simulated UE has no radio configuration
// worth handing over.

// handoverPreparationInformation is TS 38.331 HandoverPreparationInformation:
// criticalExtensions c1 (1 bit 0), handoverPreparationInformation (2 bits
// 00), no optional IEs (4 bits), an empty ue-CapabilityRAT-List (4-bit
// length 0); 11 bits, padded.
var handoverPreparationInformation = []byte{0x00, 0x00}

// rrcHandoverCommand is TS 38.331 HandoverCommand: criticalExtensions c1
// (0), handoverCommand (00), no nonCriticalExtension (0), then the
// handoverCommandMessage octet string, length 1, holding RRCReconfiguration
// with transaction 0, rrcReconfiguration and no optional IEs (one octet 0).
var rrcHandoverCommand = []byte{0x00, 0x10, 0x00}

// sourceToTargetContainer is the Source NG-RAN Node to Target NG-RAN Node
// Transparent Container (TS 38.413 9.3.1.29): the RRC container, the
// target cell, and the UE's history of one cell, the source's.
func sourceToTargetContainer(source, target ngapx.Cell) ([]byte, error) {
	tcell, err := nrCGI(target)
	if err != nil {
		return nil, err
	}
	scell, err := nrCGI(source)
	if err != nil {
		return nil, err
	}
	c := ngapType.SourceNGRANNodeToTargetNGRANNodeTransparentContainer{
		RRCContainer: ngapType.RRCContainer{Value: handoverPreparationInformation},
		TargetCellID: tcell,
		UEHistoryInformation: ngapType.UEHistoryInformation{List: []ngapType.LastVisitedCellItem{{
			LastVisitedCellInformation: ngapType.LastVisitedCellInformation{
				Present: ngapType.LastVisitedCellInformationPresentNGRANCell,
				NGRANCell: &ngapType.LastVisitedNGRANCellInformation{GlobalCellID: scell,
					CellType:           ngapType.CellType{CellSize: ngapType.CellSize{Value: ngapType.CellSizePresentSmall}},
					TimeUEStayedInCell: ngapType.TimeUEStayedInCell{Value: 1}}}}}},
	}
	return encodeContainer(c, "Source to Target Transparent Container")
}

// targetToSourceContainer is the Target NG-RAN Node to Source NG-RAN Node
// Transparent Container (TS 38.413 9.3.1.30): the RRC Handover Command.
func targetToSourceContainer() ([]byte, error) {
	c := ngapType.TargetNGRANNodeToSourceNGRANNodeTransparentContainer{
		RRCContainer: ngapType.RRCContainer{Value: rrcHandoverCommand}}
	return encodeContainer(c, "Target to Source Transparent Container")
}

func nrCGI(c ngapx.Cell) (ngapType.NGRANCGI, error) {
	tai, err := c.TAI.ToNGAP()
	if err != nil {
		return ngapType.NGRANCGI{}, err
	}
	nci := c.CellID << 4 // 36 bits, left-aligned in 5 octets
	return ngapType.NGRANCGI{Present: ngapType.NGRANCGIPresentNRCGI, NRCGI: &ngapType.NRCGI{PLMNIdentity: tai.PLMNIdentity,
		NRCellIdentity: ngapType.NRCellIdentity{Value: aper.BitString{
			Bytes: []byte{byte(nci >> 32), byte(nci >> 24), byte(nci >> 16), byte(nci >> 8), byte(nci)}, BitLength: 36}}}}, nil
}

func encodeContainer(v any, name string) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("encode %s: %v", name, r)
		}
	}()
	b, err = aper.MarshalWithParams(v, "valueExt")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	return b, nil
}
