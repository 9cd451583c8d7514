package pfcpx

import (
	"fmt"
	"strings"
)

// IE types (TS 29.244 8.1.2, Table 8.1.2-1) this package reads or writes;
// an Offending IE names one of them.
const (
	IECreatePDR                  uint16 = 1
	IEPDI                        uint16 = 2
	IECreateFAR                  uint16 = 3
	IEForwardingParameters       uint16 = 4
	IECreateURR                  uint16 = 6
	IECreateQER                  uint16 = 7
	IECreatedPDR                 uint16 = 8
	IEUpdatePDR                  uint16 = 9
	IEUpdateFAR                  uint16 = 10
	IEUpdateForwardingParameters uint16 = 11
	IEUpdateURR                  uint16 = 13
	IEUpdateQER                  uint16 = 14
	IERemovePDR                  uint16 = 15
	IERemoveFAR                  uint16 = 16
	IERemoveURR                  uint16 = 17
	IERemoveQER                  uint16 = 18
	IECause                      uint16 = 19
	IESourceInterface            uint16 = 20
	IEFTEID                      uint16 = 21
	IENetworkInstance            uint16 = 22
	IESDFFilter                  uint16 = 23
	IEGateStatus                 uint16 = 25
	IEMBR                        uint16 = 26
	IEGBR                        uint16 = 27
	IEPrecedence                 uint16 = 29
	IEVolumeThreshold            uint16 = 31
	IEReportingTriggers          uint16 = 37
	IEOffendingIE                uint16 = 40
	IEDestinationInterface       uint16 = 42
	IEApplyAction                uint16 = 44
	IEPDRID                      uint16 = 56
	IEFSEID                      uint16 = 57
	IENodeID                     uint16 = 60
	IEMeasurementMethod          uint16 = 62
	IEVolumeMeasurement          uint16 = 66
	IEUsageReportModification    uint16 = 78
	IEUsageReportDeletion        uint16 = 79
	IEURRID                      uint16 = 81
	IEOuterHeaderCreation        uint16 = 84
	IEUEIPAddress                uint16 = 93
	IEOuterHeaderRemoval         uint16 = 95
	IERecoveryTimeStamp          uint16 = 96
	IEFARID                      uint16 = 108
	IEQERID                      uint16 = 109
	IEFailedRuleID               uint16 = 114
	IEQFI                        uint16 = 124
)

// IEName is the IE type's name in TS 29.244 Table 8.1.2-1.
func IEName(t uint16) string {
	if n, ok := ieNames[t]; ok {
		return n
	}
	return fmt.Sprintf("IE type %d", t)
}

var ieNames = map[uint16]string{
	IECreatePDR: "Create PDR", IEPDI: "PDI", IECreateFAR: "Create FAR",
	IEForwardingParameters: "Forwarding Parameters", IECreateURR: "Create URR",
	IECreateQER: "Create QER", IECreatedPDR: "Created PDR", IEUpdatePDR: "Update PDR",
	IEUpdateFAR: "Update FAR", IEUpdateForwardingParameters: "Update Forwarding Parameters",
	IEUpdateURR: "Update URR", IEUpdateQER: "Update QER", IERemovePDR: "Remove PDR",
	IERemoveFAR: "Remove FAR", IERemoveURR: "Remove URR", IERemoveQER: "Remove QER",
	IECause: "Cause", IESourceInterface: "Source Interface", IEFTEID: "F-TEID",
	IENetworkInstance: "Network Instance", IESDFFilter: "SDF Filter",
	IEGateStatus: "Gate Status", IEMBR: "MBR", IEGBR: "GBR", IEPrecedence: "Precedence",
	IEVolumeThreshold: "Volume Threshold", IEReportingTriggers: "Reporting Triggers",
	IEOffendingIE: "Offending IE", IEDestinationInterface: "Destination Interface",
	IEApplyAction: "Apply Action", IEPDRID: "PDR ID", IEFSEID: "F-SEID", IENodeID: "Node ID",
	IEMeasurementMethod: "Measurement Method", IEVolumeMeasurement: "Volume Measurement",
	IEUsageReportModification: "Usage Report", IEUsageReportDeletion: "Usage Report",
	IEURRID: "URR ID", IEOuterHeaderCreation: "Outer Header Creation",
	IEUEIPAddress: "UE IP Address", IEOuterHeaderRemoval: "Outer Header Removal",
	IERecoveryTimeStamp: "Recovery Time Stamp", IEFARID: "FAR ID", IEQERID: "QER ID",
	IEFailedRuleID: "Failed Rule ID", IEQFI: "QFI", IEQERWeight: "QER Weight (L25GC+ vendor-specific)",
}

// NetworkInstance is the Network Instance IE (TS 29.244 8.2.4): an octet
// string, here written as an APN (TS 23.003 9.1: length-prefixed labels,
// as free5GC and Open5GS do). Reading accepts that form and the plain
// string some peers send.
type NetworkInstance struct {
	Name string
}

// MarshalBinary writes the name as APN labels.
func (n *NetworkInstance) MarshalBinary() ([]byte, error) {
	var b []byte
	for _, label := range strings.Split(n.Name, ".") {
		if len(label) == 0 || len(label) > 63 {
			return nil, fmt.Errorf("network instance %q: a label of %d octets (TS 23.003 9.1: 1..63)", n.Name, len(label))
		}
		b = append(b, byte(len(label)))
		b = append(b, label...)
	}
	return b, nil
}

// UnmarshalBinary reads APN labels, or the octets as they are when they
// are not labels.
func (n *NetworkInstance) UnmarshalBinary(b []byte) error {
	if name, ok := apnLabels(b); ok {
		n.Name = name
		return nil
	}
	n.Name = string(b)
	return nil
}

func apnLabels(b []byte) (string, bool) {
	var labels []string
	for len(b) > 0 {
		l := int(b[0])
		if l == 0 || l > 63 || 1+l > len(b) {
			return "", false
		}
		labels = append(labels, string(b[1:1+l]))
		b = b[1+l:]
	}
	return strings.Join(labels, "."), len(labels) > 0
}
