// Package nasxtest builds the 5GSM messages an SMF sends, straight from
// free5gc/nas, for the tests of the UE side (protocol/nasx, test/ransim),
// so those tests do not read back what their own code wrote.
package nasxtest

import (
	"net"
	"net/netip"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
)

func gsm(typ uint8, set func(*nas.GsmMessage)) ([]byte, error) {
	m := nas.NewMessage()
	m.GsmMessage = nas.NewGsmMessage()
	m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	m.GsmHeader.SetMessageType(typ)
	set(m.GsmMessage)
	return m.PlainNasEncode()
}

func header(epd *nasType.ExtendedProtocolDiscriminator, id *nasType.PDUSessionID, pti *nasType.PTI,
	mt interface{ SetMessageType(uint8) }, sessionID, ptiValue, typ uint8) {
	epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	id.SetPDUSessionID(sessionID)
	pti.SetPTI(ptiValue)
	mt.SetMessageType(typ)
}

// DefaultRule is the default QoS rule of a session (TS 24.501 6.2.5.1.1):
// match-all, precedence 255, on qfi.
func DefaultRule(qfi uint8) nasType.QoSRule {
	return nasType.QoSRule{Identifier: 1, Operation: nasType.OperationCodeCreateNewQoSRule, DQR: true, Precedence: 255, QFI: qfi,
		PacketFilterList: nasType.PacketFilterList{{Identifier: 1, Direction: nasType.PacketFilterDirectionBidirectional,
			Components: nasType.PacketFilterComponentList{&nasType.PacketFilterMatchAll{}}}}}
}

// RuleToHost is a QoS rule sending uplink traffic to host on qfi.
func RuleToHost(id, precedence, qfi uint8, host netip.Addr) nasType.QoSRule {
	return nasType.QoSRule{Identifier: id, Operation: nasType.OperationCodeCreateNewQoSRule, Precedence: precedence, QFI: qfi,
		PacketFilterList: nasType.PacketFilterList{{Identifier: 1, Direction: nasType.PacketFilterDirectionUplink,
			Components: nasType.PacketFilterComponentList{&nasType.PacketFilterIPv4RemoteAddress{
				Address: net.IP(host.AsSlice()), Mask: net.CIDRMask(32, 32)}}}}}
}

// Flow is a QoS flow description creating qfi with 5QI fiveQI.
func Flow(qfi, fiveQI uint8) nasType.QoSFlowDesc {
	return nasType.QoSFlowDesc{QFI: qfi, OperationCode: nasType.OperationCodeCreateNewQoSFlowDescription,
		Parameters: nasType.QoSFlowParameterList{&nasType.QoSFlow5QI{FiveQI: fiveQI}}}
}

// Accept is PDU Session Establishment Accept (TS 24.501 8.3.2): IPv4,
// SSC mode 1, addr, the default rule and flow on QFI 1 (5QI 9), AMBR
// 100 Mbit/s up and 1 Gbit/s down, slice 1/010203, the DNN.
func Accept(sessionID, pti uint8, addr netip.Addr, dnn string) ([]byte, error) {
	rules := nasType.QoSRules{DefaultRule(1)}
	rb, err := rules.MarshalBinary()
	if err != nil {
		return nil, err
	}
	flows := nasType.QoSFlowDescs{Flow(1, 9)}
	fb, err := flows.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return gsm(nas.MsgTypePDUSessionEstablishmentAccept, func(g *nas.GsmMessage) {
		a := nasMessage.NewPDUSessionEstablishmentAccept(0)
		header(&a.ExtendedProtocolDiscriminator, &a.PDUSessionID, &a.PTI, &a.PDUSESSIONESTABLISHMENTACCEPTMessageIdentity,
			sessionID, pti, nas.MsgTypePDUSessionEstablishmentAccept)
		a.SelectedSSCModeAndSelectedPDUSessionType.SetPDUSessionType(nasMessage.PDUSessionTypeIPv4)
		a.SelectedSSCModeAndSelectedPDUSessionType.SetSSCMode(1)
		a.AuthorizedQosRules.SetLen(uint16(len(rb)))
		a.AuthorizedQosRules.SetQosRule(rb)
		a.SessionAMBR.SetLen(6)
		a.SessionAMBR.SetUnitForSessionAMBRForUplink(6) // 1 Mbit/s
		a.SessionAMBR.SetSessionAMBRForUplink([2]uint8{0, 100})
		a.SessionAMBR.SetUnitForSessionAMBRForDownlink(11) // 1 Gbit/s
		a.SessionAMBR.SetSessionAMBRForDownlink([2]uint8{0, 1})
		a.PDUAddress = nasType.NewPDUAddress(nasMessage.PDUSessionEstablishmentAcceptPDUAddressType)
		a.PDUAddress.SetLen(5)
		a.PDUAddress.SetPDUSessionTypeValue(nasMessage.PDUSessionTypeIPv4)
		v4 := addr.As4()
		a.PDUAddress.SetPDUAddressInformation([12]uint8{v4[0], v4[1], v4[2], v4[3]})
		a.AuthorizedQosFlowDescriptions = nasType.NewAuthorizedQosFlowDescriptions(nasMessage.PDUSessionEstablishmentAcceptAuthorizedQosFlowDescriptionsType)
		a.AuthorizedQosFlowDescriptions.SetLen(uint16(len(fb)))
		a.AuthorizedQosFlowDescriptions.SetQoSFlowDescriptions(fb)
		a.SNSSAI = nasType.NewSNSSAI(nasMessage.PDUSessionEstablishmentAcceptSNSSAIType)
		a.SNSSAI.SetLen(4)
		a.SNSSAI.SetSST(1)
		a.SNSSAI.SetSD([3]uint8{1, 2, 3})
		a.DNN = nasType.NewDNN(nasMessage.PDUSessionEstablishmentAcceptDNNType)
		a.DNN.SetDNN(dnn)
		g.PDUSessionEstablishmentAccept = a
	})
}

// Reject is PDU Session Establishment Reject with a 5GSM cause (TS 24.501 8.3.3).
func Reject(sessionID, pti, cause uint8) ([]byte, error) {
	return gsm(nas.MsgTypePDUSessionEstablishmentReject, func(g *nas.GsmMessage) {
		r := nasMessage.NewPDUSessionEstablishmentReject(0)
		header(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONESTABLISHMENTREJECTMessageIdentity,
			sessionID, pti, nas.MsgTypePDUSessionEstablishmentReject)
		r.Cause5GSM.SetCauseValue(cause)
		g.PDUSessionEstablishmentReject = r
	})
}

// ReleaseCommand is PDU Session Release Command (TS 24.501 8.3.14).
func ReleaseCommand(sessionID, pti, cause uint8) ([]byte, error) {
	return gsm(nas.MsgTypePDUSessionReleaseCommand, func(g *nas.GsmMessage) {
		r := nasMessage.NewPDUSessionReleaseCommand(0)
		header(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONRELEASECOMMANDMessageIdentity,
			sessionID, pti, nas.MsgTypePDUSessionReleaseCommand)
		r.Cause5GSM.SetCauseValue(cause)
		g.PDUSessionReleaseCommand = r
	})
}

// ModificationCommand is PDU Session Modification Command (TS 24.501
// 8.3.9) adding rules and flows; network-requested, so PTI 0 (6.4.2.2).
func ModificationCommand(sessionID uint8, rules nasType.QoSRules, flows nasType.QoSFlowDescs) ([]byte, error) {
	rb, err := rules.MarshalBinary()
	if err != nil {
		return nil, err
	}
	fb, err := flows.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return gsm(nas.MsgTypePDUSessionModificationCommand, func(g *nas.GsmMessage) {
		c := nasMessage.NewPDUSessionModificationCommand(0)
		header(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, &c.PDUSESSIONMODIFICATIONCOMMANDMessageIdentity,
			sessionID, 0, nas.MsgTypePDUSessionModificationCommand)
		if len(rules) > 0 {
			c.AuthorizedQosRules = nasType.NewAuthorizedQosRules(nasMessage.PDUSessionModificationCommandAuthorizedQosRulesType)
			c.AuthorizedQosRules.SetLen(uint16(len(rb)))
			c.AuthorizedQosRules.SetQosRule(rb)
		}
		if len(flows) > 0 {
			c.AuthorizedQosFlowDescriptions = nasType.NewAuthorizedQosFlowDescriptions(nasMessage.PDUSessionModificationCommandAuthorizedQosFlowDescriptionsType)
			c.AuthorizedQosFlowDescriptions.SetLen(uint16(len(fb)))
			c.AuthorizedQosFlowDescriptions.SetQoSFlowDescriptions(fb)
		}
		g.PDUSessionModificationCommand = c
	})
}
