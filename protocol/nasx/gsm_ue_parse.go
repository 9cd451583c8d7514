package nasx

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"
)

// GSMAtUE is a 5GSM message the network sent a UE (TS 24.501 8.3), read:
// exactly one of the pointers is set, by Type.
type GSMAtUE struct {
	Type      uint8 // nas.MsgTypePDUSession…
	SessionID uint8
	PTI       uint8
	Accept    *GSMAccept       // PDU Session Establishment Accept
	Modify    *GSMModification // PDU Session Modification Command
	// Cause is the 5GSM cause of Establishment Reject, Release Command,
	// Modification Reject, Release Reject and 5GSM Status (9.11.4.2).
	Cause uint8
}

// GSMAccept is PDU Session Establishment Accept (TS 24.501 8.3.2).
type GSMAccept struct {
	SessionType uint8 // selected PDU session type (9.11.4.11)
	SSCMode     uint8 // selected SSC mode (9.11.4.16)
	Address     netip.Addr
	QoSRules    nasType.QoSRules     // authorized QoS rules (9.11.4.13)
	QoSFlows    nasType.QoSFlowDescs // authorized QoS flow descriptions (9.11.4.12)
	AMBR        SessionAMBR
	SNSSAI      *models.Snssai
	DNN         string
	Cause       uint8 // e.g. #50 PDU session type IPv4 only allowed; 0: none
}

// GSMModification is PDU Session Modification Command (TS 24.501 8.3.9):
// only what changes is present.
type GSMModification struct {
	Cause    uint8
	AMBR     *SessionAMBR
	QoSRules nasType.QoSRules
	QoSFlows nasType.QoSFlowDescs
}

// SessionAMBR is a Session-AMBR (TS 24.501 9.11.4.14) in bit/s.
type SessionAMBR struct {
	UplinkBps, DownlinkBps uint64
}

// ParseGSMAtUE decodes a 5GSM message a UE receives. It never panics on
// what the network sends: free5gc's decoder can, so this boundary recovers.
func ParseGSMAtUE(b []byte) (out *GSMAtUE, err error) {
	if len(b) < 4 || b[0] != nasMessage.Epd5GSSessionManagementMessage {
		return nil, errors.New("5GSM: not a 5GSM message (short or another EPD)")
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("5GSM message type %d: decoder panic: %v", b[3], r)
		}
	}()
	m := nas.NewMessage()
	buf := append([]byte(nil), b...)
	if err := m.PlainNasDecode(&buf); err != nil {
		return nil, fmt.Errorf("5GSM message type %d: %w", b[3], err)
	}
	out = &GSMAtUE{Type: b[3], SessionID: b[1], PTI: b[2]}
	return out, out.read(m.GsmMessage)
}

func (g *GSMAtUE) read(m *nas.GsmMessage) (err error) {
	switch g.Type {
	case nas.MsgTypePDUSessionEstablishmentAccept:
		g.Accept, err = readAccept(m.PDUSessionEstablishmentAccept)
	case nas.MsgTypePDUSessionEstablishmentReject:
		g.Cause = m.PDUSessionEstablishmentReject.Cause5GSM.GetCauseValue()
	case nas.MsgTypePDUSessionReleaseCommand:
		g.Cause = m.PDUSessionReleaseCommand.Cause5GSM.GetCauseValue()
	case nas.MsgTypePDUSessionReleaseReject:
		g.Cause = m.PDUSessionReleaseReject.Cause5GSM.GetCauseValue()
	case nas.MsgTypePDUSessionModificationReject:
		g.Cause = m.PDUSessionModificationReject.Cause5GSM.GetCauseValue()
	case nas.MsgTypePDUSessionModificationCommand:
		g.Modify, err = readModification(m.PDUSessionModificationCommand)
	case nas.MsgTypeStatus5GSM:
		g.Cause = m.Status5GSM.Cause5GSM.GetCauseValue()
	default:
		return fmt.Errorf("5GSM message type %d is not one a UE receives", g.Type)
	}
	return err
}

func readAccept(a *nasMessage.PDUSessionEstablishmentAccept) (*GSMAccept, error) {
	out := &GSMAccept{SessionType: a.SelectedSSCModeAndSelectedPDUSessionType.GetPDUSessionType(),
		SSCMode: a.SelectedSSCModeAndSelectedPDUSessionType.GetSSCMode()}
	if err := out.QoSRules.UnmarshalBinary(a.AuthorizedQosRules.GetQosRule()); err != nil {
		return nil, fmt.Errorf("PDU Session Establishment Accept: authorized QoS rules: %w", err)
	}
	if len(out.QoSRules) == 0 {
		// TS 24.501 6.4.1.3: the accept carries at least the default QoS rule.
		return nil, errors.New("PDU Session Establishment Accept: no QoS rule")
	}
	out.AMBR = readAMBR(&a.SessionAMBR)
	if a.PDUAddress != nil {
		addr, err := readPDUAddress(a.PDUAddress)
		if err != nil {
			return nil, err
		}
		out.Address = addr
	}
	if a.AuthorizedQosFlowDescriptions != nil {
		if err := out.QoSFlows.UnmarshalBinary(a.AuthorizedQosFlowDescriptions.GetQoSFlowDescriptions()); err != nil {
			return nil, fmt.Errorf("PDU Session Establishment Accept: authorized QoS flow descriptions: %w", err)
		}
	}
	if a.SNSSAI != nil {
		n := a.SNSSAI.GetLen()
		s, err := NSSAIModels(append([]byte{n}, a.SNSSAI.Octet[:min(int(n), len(a.SNSSAI.Octet))]...))
		if err != nil || len(s) != 1 {
			return nil, fmt.Errorf("PDU Session Establishment Accept: S-NSSAI: %v", err)
		}
		out.SNSSAI = &s[0]
	}
	if a.DNN != nil {
		out.DNN = a.DNN.GetDNN()
	}
	if a.Cause5GSM != nil {
		out.Cause = a.Cause5GSM.GetCauseValue()
	}
	return out, nil
}

func readModification(c *nasMessage.PDUSessionModificationCommand) (*GSMModification, error) {
	out := &GSMModification{}
	if c.Cause5GSM != nil {
		out.Cause = c.Cause5GSM.GetCauseValue()
	}
	if c.SessionAMBR != nil {
		a := readAMBR(c.SessionAMBR)
		out.AMBR = &a
	}
	if c.AuthorizedQosRules != nil {
		rules, err := readRuleOperations(c.AuthorizedQosRules.GetQosRule())
		if err != nil {
			return nil, fmt.Errorf("PDU Session Modification Command: authorized QoS rules: %w", err)
		}
		out.QoSRules = rules
	}
	if c.AuthorizedQosFlowDescriptions != nil {
		if err := out.QoSFlows.UnmarshalBinary(c.AuthorizedQosFlowDescriptions.GetQoSFlowDescriptions()); err != nil {
			return nil, fmt.Errorf("PDU Session Modification Command: authorized QoS flow descriptions: %w", err)
		}
	}
	return out, nil
}

// readRuleOperations reads a QoS rules IE rule by rule. A "delete
// existing QoS rule" is the identifier, a length of one and the operation
// octet only (TS 24.501 9.11.4.13), which free5gc's parser, expecting a
// precedence and QFI after every rule, refuses; it is read here, the other
// operations by free5gc.
func readRuleOperations(b []byte) (nasType.QoSRules, error) {
	out := nasType.QoSRules{}
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("QoS rule header of %d octets", len(b))
		}
		n := 3 + (int(b[1])<<8 | int(b[2]))
		if n > len(b) {
			return nil, fmt.Errorf("QoS rule %d: length %d past the IE", b[0], n-3)
		}
		if op := nasType.QoSRuleOperationCode(b[3] >> 5); op == nasType.OperationCodeDeleteExistingQoSRule {
			out = append(out, nasType.QoSRule{Identifier: b[0], Operation: op})
		} else {
			var one nasType.QoSRules
			if err := one.UnmarshalBinary(b[:n]); err != nil {
				return nil, fmt.Errorf("QoS rule %d: %w", b[0], err)
			}
			out = append(out, one...)
		}
		b = b[n:]
	}
	return out, nil
}

// readPDUAddress reads an IPv4 PDU address (TS 24.501 9.11.4.10); the
// simulator's UEs ask for IPv4 only.
func readPDUAddress(p *nasType.PDUAddress) (netip.Addr, error) {
	if t := p.GetPDUSessionTypeValue(); t != nasMessage.PDUSessionTypeIPv4 {
		return netip.Addr{}, fmt.Errorf("PDU address of PDU session type %d, want IPv4 (1)", t)
	}
	if p.GetLen() < 5 {
		return netip.Addr{}, fmt.Errorf("IPv4 PDU address of %d octets, want 5", p.GetLen())
	}
	info := p.GetPDUAddressInformation()
	return netip.AddrFrom4([4]byte{info[0], info[1], info[2], info[3]}), nil
}

// readAMBR converts a Session-AMBR IE to bit/s (TS 24.501 9.11.4.14).
func readAMBR(a *nasType.SessionAMBR) SessionAMBR {
	dl, ul := a.GetSessionAMBRForDownlink(), a.GetSessionAMBRForUplink()
	return SessionAMBR{
		DownlinkBps: BitRate(a.GetUnitForSessionAMBRForDownlink(), uint16(dl[0])<<8|uint16(dl[1])),
		UplinkBps:   BitRate(a.GetUnitForSessionAMBRForUplink(), uint16(ul[0])<<8|uint16(ul[1])),
	}
}
