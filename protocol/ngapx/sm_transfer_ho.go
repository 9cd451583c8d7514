package ngapx

import (
	"fmt"

	"github.com/free5gc/ngap/ngapType"
)

// The N2 SM transfers of the mobility procedures: Xn handover's Path
// Switch Request (TS 23.502 4.9.1.2) and N2 handover (TS 23.502 4.9.1.3).
// The SMF builds and parses them; the simulator's gNBs use the same
// codecs for their side. The AMF carries them opaquely.

// PathSwitchRequest is what the target gNB tells the SMF in Path Switch
// Request Transfer (TS 38.413 9.3.4.8): its downlink tunnel and the QoS
// flows it accepted.
type PathSwitchRequest struct {
	DL   Tunnel
	QFIs []uint8
}

// BuildPathSwitchRequestTransfer encodes the target gNB's transfer.
func BuildPathSwitchRequestTransfer(p PathSwitchRequest) ([]byte, error) {
	if len(p.QFIs) == 0 {
		return nil, fmt.Errorf("path switch request transfer: at least one accepted QoS flow is needed")
	}
	dl, err := upTNL(p.DL)
	if err != nil {
		return nil, err
	}
	t := ngapType.PathSwitchRequestTransfer{DLNGUUPTNLInformation: *dl}
	for _, q := range p.QFIs {
		t.QosFlowAcceptedList.List = append(t.QosFlowAcceptedList.List,
			ngapType.QosFlowAcceptedItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}})
	}
	return marshalTransfer(t, "Path Switch Request Transfer")
}

// ParsePathSwitchRequestTransfer reads the target gNB's tunnel and flows;
// a transfer without an IPv4 GTP tunnel or without accepted flows is an
// error (the SMF answers Path Switch Request Setup Failed).
func ParsePathSwitchRequestTransfer(b []byte) (PathSwitchRequest, error) {
	var t ngapType.PathSwitchRequestTransfer
	var out PathSwitchRequest
	if err := unmarshalTransfer(b, &t, "Path Switch Request Transfer"); err != nil {
		return out, err
	}
	dl, err := tunnelOf(&t.DLNGUUPTNLInformation)
	if err != nil {
		return out, fmt.Errorf("Path Switch Request Transfer: DL NG-U UP TNL information: %w", err)
	}
	out.DL = dl
	out.QFIs = qfisOfAccepted(t.QosFlowAcceptedList.List)
	if len(out.QFIs) == 0 {
		return out, fmt.Errorf("Path Switch Request Transfer: no accepted QoS flow")
	}
	return out, nil
}

func qfisOfAccepted(l []ngapType.QosFlowAcceptedItem) []uint8 {
	var out []uint8
	for _, it := range l {
		out = append(out, uint8(it.QosFlowIdentifier.Value))
	}
	return out
}

// BuildPathSwitchRequestAcknowledgeTransfer encodes Path Switch Request
// Acknowledge Transfer (TS 38.413 9.3.4.9); ul is the UPF's uplink tunnel
// when it changed, nil when the gNB keeps the one it has.
func BuildPathSwitchRequestAcknowledgeTransfer(ul *Tunnel) ([]byte, error) {
	var t ngapType.PathSwitchRequestAcknowledgeTransfer
	if ul != nil {
		u, err := upTNL(*ul)
		if err != nil {
			return nil, err
		}
		t.ULNGUUPTNLInformation = u
	}
	return marshalTransfer(t, "Path Switch Request Acknowledge Transfer")
}

// ParsePathSwitchRequestAcknowledgeTransfer reads the uplink tunnel, nil
// when the transfer carries none.
func ParsePathSwitchRequestAcknowledgeTransfer(b []byte) (*Tunnel, error) {
	var t ngapType.PathSwitchRequestAcknowledgeTransfer
	if err := unmarshalTransfer(b, &t, "Path Switch Request Acknowledge Transfer"); err != nil {
		return nil, err
	}
	if t.ULNGUUPTNLInformation == nil {
		return nil, nil
	}
	ul, err := tunnelOf(t.ULNGUUPTNLInformation)
	if err != nil {
		return nil, fmt.Errorf("Path Switch Request Acknowledge Transfer: UL NG-U UP TNL information: %w", err)
	}
	return &ul, nil
}

// BuildPathSwitchRequestSetupFailedTransfer encodes the SMF's refusal of
// a session's switch (TS 38.413 9.3.4.10).
func BuildPathSwitchRequestSetupFailedTransfer(cause ngapType.Cause) ([]byte, error) {
	return marshalTransfer(ngapType.PathSwitchRequestSetupFailedTransfer{Cause: cause}, "Path Switch Request Setup Failed Transfer")
}

// ParsePathSwitchRequestSetupFailedTransfer reads the cause.
func ParsePathSwitchRequestSetupFailedTransfer(b []byte) (ngapType.Cause, error) {
	var t ngapType.PathSwitchRequestSetupFailedTransfer
	err := unmarshalTransfer(b, &t, "Path Switch Request Setup Failed Transfer")
	return t.Cause, err
}

// BuildHandoverRequiredTransfer encodes the source gNB's Handover
// Required Transfer (TS 38.413 9.3.4.14): whether a direct forwarding
// path to the target exists.
func BuildHandoverRequiredTransfer(directForwarding bool) ([]byte, error) {
	var t ngapType.HandoverRequiredTransfer
	if directForwarding {
		t.DirectForwardingPathAvailability = &ngapType.DirectForwardingPathAvailability{
			Value: ngapType.DirectForwardingPathAvailabilityPresentDirectPathAvailable}
	}
	return marshalTransfer(t, "Handover Required Transfer")
}

// ParseHandoverRequiredTransfer reads whether direct forwarding is
// available.
func ParseHandoverRequiredTransfer(b []byte) (directForwarding bool, err error) {
	var t ngapType.HandoverRequiredTransfer
	if err := unmarshalTransfer(b, &t, "Handover Required Transfer"); err != nil {
		return false, err
	}
	return t.DirectForwardingPathAvailability != nil, nil
}

// HandoverRequestAck is what the target gNB tells the SMF in Handover
// Request Acknowledge Transfer (TS 38.413 9.3.4.11): its downlink tunnel,
// where it takes forwarded data (optional), and the QoS flows it set up
// (ForwardQFIs: those it accepts forwarded data for) and failed.
type HandoverRequestAck struct {
	DL           Tunnel
	DLForwarding *Tunnel
	QFIs         []uint8
	ForwardQFIs  []uint8
	FailedQFIs   []uint8
}

// BuildHandoverRequestAcknowledgeTransfer encodes the target gNB's
// transfer; failed flows carry cause radio network "unspecified".
func BuildHandoverRequestAcknowledgeTransfer(a HandoverRequestAck) ([]byte, error) {
	if len(a.QFIs) == 0 {
		return nil, fmt.Errorf("handover request acknowledge transfer: at least one QoS flow is needed")
	}
	dl, err := upTNL(a.DL)
	if err != nil {
		return nil, err
	}
	t := ngapType.HandoverRequestAcknowledgeTransfer{DLNGUUPTNLInformation: *dl}
	if a.DLForwarding != nil {
		if t.DLForwardingUPTNLInformation, err = upTNL(*a.DLForwarding); err != nil {
			return nil, err
		}
	}
	t.QosFlowSetupResponseList.List = flowsWithForwarding(a.QFIs, a.ForwardQFIs)
	if len(a.FailedQFIs) > 0 {
		t.QosFlowFailedToSetupList = flowsWithCause(a.FailedQFIs, CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	}
	return marshalTransfer(t, "Handover Request Acknowledge Transfer")
}

func flowsWithForwarding(qfis, forward []uint8) []ngapType.QosFlowItemWithDataForwarding {
	var out []ngapType.QosFlowItemWithDataForwarding
	for _, q := range qfis {
		it := ngapType.QosFlowItemWithDataForwarding{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}}
		if containsQFI(forward, q) {
			it.DataForwardingAccepted = &ngapType.DataForwardingAccepted{Value: ngapType.DataForwardingAcceptedPresentDataForwardingAccepted}
		}
		out = append(out, it)
	}
	return out
}

func flowsWithCause(qfis []uint8, cause ngapType.Cause) *ngapType.QosFlowListWithCause {
	l := &ngapType.QosFlowListWithCause{}
	for _, q := range qfis {
		l.List = append(l.List, ngapType.QosFlowWithCauseItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}, Cause: cause})
	}
	return l
}

func containsQFI(l []uint8, q uint8) bool {
	for _, x := range l {
		if x == q {
			return true
		}
	}
	return false
}

// ParseHandoverRequestAcknowledgeTransfer reads the target gNB's tunnels
// and flows; no IPv4 GTP tunnel or no flow set up is an error.
func ParseHandoverRequestAcknowledgeTransfer(b []byte) (HandoverRequestAck, error) {
	var t ngapType.HandoverRequestAcknowledgeTransfer
	var out HandoverRequestAck
	if err := unmarshalTransfer(b, &t, "Handover Request Acknowledge Transfer"); err != nil {
		return out, err
	}
	dl, err := tunnelOf(&t.DLNGUUPTNLInformation)
	if err != nil {
		return out, fmt.Errorf("Handover Request Acknowledge Transfer: DL NG-U UP TNL information: %w", err)
	}
	out.DL = dl
	if t.DLForwardingUPTNLInformation != nil {
		fw, err := tunnelOf(t.DLForwardingUPTNLInformation)
		if err != nil {
			return out, fmt.Errorf("Handover Request Acknowledge Transfer: DL forwarding UP TNL information: %w", err)
		}
		out.DLForwarding = &fw
	}
	for _, it := range t.QosFlowSetupResponseList.List {
		out.QFIs = append(out.QFIs, uint8(it.QosFlowIdentifier.Value))
		if it.DataForwardingAccepted != nil {
			out.ForwardQFIs = append(out.ForwardQFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	if t.QosFlowFailedToSetupList != nil {
		for _, it := range t.QosFlowFailedToSetupList.List {
			out.FailedQFIs = append(out.FailedQFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	if len(out.QFIs) == 0 {
		return out, fmt.Errorf("Handover Request Acknowledge Transfer: no QoS flow set up")
	}
	return out, nil
}

// HandoverCommand is what the SMF tells the source gNB in Handover Command
// Transfer (TS 38.413 9.3.4.13): where to forward downlink data during the
// move (the target gNB itself for direct forwarding, a UPF tunnel for
// indirect; nil for none) and which QoS flows to forward.
type HandoverCommand struct {
	DLForwarding *Tunnel
	ForwardQFIs  []uint8
}

// BuildHandoverCommandTransfer encodes the SMF's transfer.
func BuildHandoverCommandTransfer(c HandoverCommand) ([]byte, error) {
	var t ngapType.HandoverCommandTransfer
	if c.DLForwarding != nil {
		fw, err := upTNL(*c.DLForwarding)
		if err != nil {
			return nil, err
		}
		t.DLForwardingUPTNLInformation = fw
	}
	if len(c.ForwardQFIs) > 0 {
		t.QosFlowToBeForwardedList = &ngapType.QosFlowToBeForwardedList{}
		for _, q := range c.ForwardQFIs {
			t.QosFlowToBeForwardedList.List = append(t.QosFlowToBeForwardedList.List,
				ngapType.QosFlowToBeForwardedItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}})
		}
	}
	return marshalTransfer(t, "Handover Command Transfer")
}

// ParseHandoverCommandTransfer reads the forwarding tunnel and flows.
func ParseHandoverCommandTransfer(b []byte) (HandoverCommand, error) {
	var t ngapType.HandoverCommandTransfer
	var out HandoverCommand
	if err := unmarshalTransfer(b, &t, "Handover Command Transfer"); err != nil {
		return out, err
	}
	if t.DLForwardingUPTNLInformation != nil {
		fw, err := tunnelOf(t.DLForwardingUPTNLInformation)
		if err != nil {
			return out, fmt.Errorf("Handover Command Transfer: DL forwarding UP TNL information: %w", err)
		}
		out.DLForwarding = &fw
	}
	if t.QosFlowToBeForwardedList != nil {
		for _, it := range t.QosFlowToBeForwardedList.List {
			out.ForwardQFIs = append(out.ForwardQFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	return out, nil
}

// BuildHandoverResourceAllocationUnsuccessfulTransfer encodes the target
// gNB's refusal of a session (TS 38.413 9.3.4.15).
func BuildHandoverResourceAllocationUnsuccessfulTransfer(cause ngapType.Cause) ([]byte, error) {
	return marshalTransfer(ngapType.HandoverResourceAllocationUnsuccessfulTransfer{Cause: cause},
		"Handover Resource Allocation Unsuccessful Transfer")
}

// ParseHandoverResourceAllocationUnsuccessfulTransfer reads the cause.
func ParseHandoverResourceAllocationUnsuccessfulTransfer(b []byte) (ngapType.Cause, error) {
	var t ngapType.HandoverResourceAllocationUnsuccessfulTransfer
	err := unmarshalTransfer(b, &t, "Handover Resource Allocation Unsuccessful Transfer")
	return t.Cause, err
}
