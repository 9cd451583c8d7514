package ngapx

import (
	"errors"
	"fmt"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// ErrMissingIE marks a message without a mandatory IE (TS 38.413 10.3.5:
// abstract syntax error, answered by Error Indication or a failure message).
var ErrMissingIE = errors.New("mandatory IE missing")

// SupportedTA is one TA a gNB serves, with its broadcast PLMNs and slices.
type SupportedTA struct {
	TAC   domain.TAC
	PLMNs []BroadcastPLMN
}

// BroadcastPLMN is a PLMN broadcast in a TA and the slices it supports there.
type BroadcastPLMN struct {
	PLMN    domain.PLMN
	SNSSAIs []domain.SNSSAI
}

// NGSetupRequest is the parsed NG Setup Request (TS 38.413 9.2.6.1).
type NGSetupRequest struct {
	GNBID   []byte // gNB ID bits, left-aligned
	GNBBits uint64
	PLMN    domain.PLMN // of the Global RAN Node ID
	Name    string
	TAs     []SupportedTA
}

// ParseNGSetupRequest reads the IEs of an NG Setup Request.
func ParseNGSetupRequest(pdu *ngapType.NGAPPDU) (NGSetupRequest, error) {
	var out NGSetupRequest
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.NGSetupRequest == nil {
		return out, errors.New("not an NG Setup Request")
	}
	var haveID, haveTAs bool
	for _, ie := range pdu.InitiatingMessage.Value.NGSetupRequest.ProtocolIEs.List {
		v := ie.Value
		switch {
		case v.GlobalRANNodeID != nil:
			if err := out.readNodeID(v.GlobalRANNodeID); err != nil {
				return out, err
			}
			haveID = true
		case v.RANNodeName != nil:
			out.Name = v.RANNodeName.Value
		case v.SupportedTAList != nil:
			tas, err := parseSupportedTAs(v.SupportedTAList)
			if err != nil {
				return out, err
			}
			out.TAs, haveTAs = tas, true
		}
	}
	if !haveID || !haveTAs {
		return out, fmt.Errorf("NG Setup Request: %w (Global RAN Node ID, Supported TA List)", ErrMissingIE)
	}
	return out, nil
}

func (r *NGSetupRequest) readNodeID(n *ngapType.GlobalRANNodeID) error {
	g := n.GlobalGNBID
	if n.Present != ngapType.GlobalRANNodeIDPresentGlobalGNBID || g == nil || g.GNBID.GNBID == nil {
		return errors.New("NG Setup Request: only gNB RAN nodes are supported")
	}
	p, err := domain.PLMNFromNGAP(g.PLMNIdentity)
	if err != nil {
		return err
	}
	r.PLMN = p
	r.GNBID, r.GNBBits = g.GNBID.GNBID.Bytes, g.GNBID.GNBID.BitLength
	return nil
}

// RANConfigurationUpdate is the parsed RAN Configuration Update (TS 38.413
// 9.2.6.4): every IE is optional; TAs is nil when the list is absent.
type RANConfigurationUpdate struct {
	Name string
	TAs  []SupportedTA
}

// ParseRANConfigurationUpdate reads the IEs of a RAN Configuration Update.
func ParseRANConfigurationUpdate(pdu *ngapType.NGAPPDU) (RANConfigurationUpdate, error) {
	var out RANConfigurationUpdate
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.RANConfigurationUpdate == nil {
		return out, errors.New("not a RAN Configuration Update")
	}
	for _, ie := range pdu.InitiatingMessage.Value.RANConfigurationUpdate.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.RANNodeName != nil:
			out.Name = v.RANNodeName.Value
		case v.SupportedTAList != nil:
			tas, err := parseSupportedTAs(v.SupportedTAList)
			if err != nil {
				return out, err
			}
			out.TAs = tas
		}
	}
	return out, nil
}

func parseSupportedTAs(l *ngapType.SupportedTAList) ([]SupportedTA, error) {
	var out []SupportedTA
	for _, item := range l.List {
		tac, err := domain.TACFromNGAP(item.TAC)
		if err != nil {
			return nil, err
		}
		ta := SupportedTA{TAC: tac}
		for _, bp := range item.BroadcastPLMNList.List {
			plmn, err := domain.PLMNFromNGAP(bp.PLMNIdentity)
			if err != nil {
				return nil, err
			}
			p := BroadcastPLMN{PLMN: plmn}
			for _, s := range bp.TAISliceSupportList.List {
				sn, err := domain.SNSSAIFromNGAP(s.SNSSAI)
				if err != nil {
					return nil, err
				}
				p.SNSSAIs = append(p.SNSSAIs, sn)
			}
			ta.PLMNs = append(ta.PLMNs, p)
		}
		out = append(out, ta)
	}
	return out, nil
}

// InitialUEMessage is the parsed Initial UE Message (TS 38.413 9.2.5.1).
type InitialUEMessage struct {
	RANUEID int64
	NASPDU  []byte
	TAI     domain.TAI
	STMSI   *nasx.STMSI
}

// ParseInitialUEMessage reads the IEs of an Initial UE Message.
func ParseInitialUEMessage(pdu *ngapType.NGAPPDU) (InitialUEMessage, error) {
	out := InitialUEMessage{RANUEID: -1}
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.InitialUEMessage == nil {
		return out, errors.New("not an Initial UE Message")
	}
	var haveULI bool
	for _, ie := range pdu.InitiatingMessage.Value.InitialUEMessage.ProtocolIEs.List {
		v := ie.Value
		switch {
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.NASPDU != nil:
			out.NASPDU = v.NASPDU.Value
		case v.UserLocationInformation != nil:
			nr := v.UserLocationInformation.UserLocationInformationNR
			if nr == nil {
				return out, errors.New("Initial UE Message: only NR user location is supported")
			}
			tai, err := domain.TAIFromNGAP(nr.TAI)
			if err != nil {
				return out, err
			}
			out.TAI, haveULI = tai, true
		case v.FiveGSTMSI != nil:
			s, err := DecodeFiveGSTMSI(*v.FiveGSTMSI)
			if err != nil {
				return out, err
			}
			out.STMSI = &s
		}
	}
	if out.RANUEID < 0 || out.NASPDU == nil || !haveULI {
		return out, fmt.Errorf("Initial UE Message: %w (RAN UE NGAP ID, NAS-PDU, User Location Information)", ErrMissingIE)
	}
	return out, nil
}

// ResetAll says whether an NG Reset resets the whole NG interface; otherwise
// it returns the listed UE-associated connections (TS 38.413 9.2.6.11).
func ResetAll(pdu *ngapType.NGAPPDU) (all bool, part []ngapType.UEAssociatedLogicalNGConnectionItem, err error) {
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.NGReset == nil {
		return false, nil, errors.New("not an NG Reset")
	}
	for _, ie := range pdu.InitiatingMessage.Value.NGReset.ProtocolIEs.List {
		if rt := ie.Value.ResetType; rt != nil {
			if rt.Present == ngapType.ResetTypePresentNGInterface {
				return true, nil, nil
			}
			if rt.PartOfNGInterface != nil {
				return false, rt.PartOfNGInterface.List, nil
			}
		}
	}
	return false, nil, fmt.Errorf("NG Reset: %w (Reset Type)", ErrMissingIE)
}

// ParseUERadioCapability reads the UE Radio Capability of a UE Radio
// Capability Info Indication (TS 38.413 9.2.13.1); nil when the gNB sent
// only the capability for paging.
func ParseUERadioCapability(pdu *ngapType.NGAPPDU) ([]byte, error) {
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.UERadioCapabilityInfoIndication == nil {
		return nil, errors.New("not a UE Radio Capability Info Indication")
	}
	for _, ie := range pdu.InitiatingMessage.Value.UERadioCapabilityInfoIndication.ProtocolIEs.List {
		if c := ie.Value.UERadioCapability; c != nil {
			return c.Value, nil
		}
	}
	return nil, nil
}
