package ransim

import "github.com/l25gc/l25gc/protocol/ngapx"

// The transparent containers a gNB puts in N2 handover messages (encoded
// by ngapx): the AMF passes them on unread (TS 38.413 9.3.1.20, 9.3.1.21),
// the other gNB and Wireshark read them. Their RRC containers hold the smallest valid RRC
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
// Transparent Container (TS 38.413 9.3.1.29) with the RRC container above
// and the UE's history: the source cell, stayed in for a second.
func sourceToTargetContainer(source, target ngapx.Cell) ([]byte, error) {
	return ngapx.SourceToTargetContainer(handoverPreparationInformation, target, source, 1)
}

// targetToSourceContainer is the Target NG-RAN Node to Source NG-RAN Node
// Transparent Container (TS 38.413 9.3.1.30): the RRC Handover Command.
func targetToSourceContainer() ([]byte, error) {
	return ngapx.TargetToSourceContainer(rrcHandoverCommand)
}
