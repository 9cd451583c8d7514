package nasx

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"
)

// The SMF's side of 5GSM (TS 24.501 6.4, 8.3): a decoder of what the UE
// sends, with the 5GSM cause to answer bad input with, and builders of
// what the SMF sends.

// 5GSM causes (TS 24.501 9.11.4.2, annex B).
const (
	GSMCauseInsufficientResources         uint8  = 26
	GSMCauseMissingOrUnknownDNN           uint8  = 27
	GSMCauseUnknownPDUSessionType         uint8  = 28
	GSMCauseUserAuthenticationFailed      uint8  = 29
	GSMCauseRequestRejectedUnspecified    uint8  = 31
	GSMCauseServiceOptionNotSupported     uint8  = 32
	GSMCauseServiceOptionNotSubscribed    uint8  = 33
	GSMCauseRegularDeactivation           uint8  = 36
	GSMCauseNetworkFailure                uint8  = 38
	GSMCauseInvalidPDUSessionIdentity     uint8  = 43
	GSMCauseSemanticErrorsInPacketFilters uint8  = 44
	GSMCausePDUSessionTypeIPv4OnlyAllowed uint8  = 50
	GSMCausePDUSessionDoesNotExist        uint8  = 54
	GSMCauseNotSupportedSSCMode           uint8  = 68
	GSMCauseInvalidPTI                    uint8  = 81
	GSMCauseInvalidMandatoryInformation   uint8  = 96
	GSMCauseMessageTypeNonExistent        uint8  = 97
	GSMCauseMessageNotCompatibleWithState uint8  = 101
	GSMCauseProtocolErrorUnspecified      uint8  = 111
	gsmHeaderOctets                              = 4 // EPD, PSI, PTI, message type (TS 24.501 9.1.1)
	pcoConfigurationProtocolPPP                  = 0x80
	pcoDNSServerIPv4                      uint16 = 0x000D // TS 24.008 10.5.6.3
)

// PDU session types (TS 24.501 9.11.4.11) and SSC modes (9.11.4.16).
const (
	PDUSessionTypeIPv4   uint8 = nasMessage.PDUSessionTypeIPv4
	PDUSessionTypeIPv6   uint8 = nasMessage.PDUSessionTypeIPv6
	PDUSessionTypeIPv4v6 uint8 = nasMessage.PDUSessionTypeIPv4IPv6
	SSCMode1             uint8 = 1
)

// GSMError is a 5GSM message the SMF cannot act on, with the cause to
// answer it with and the identities it carried (0 when unreadable).
type GSMError struct {
	Cause        uint8
	PDUSessionID uint8
	PTI          uint8
	Err          error
}

func (e *GSMError) Error() string { return fmt.Sprintf("5GSM (cause #%d): %v", e.Cause, e.Err) }
func (e *GSMError) Unwrap() error { return e.Err }

// GSM is what the SMF reads of a 5GSM message from the UE.
type GSM struct {
	Type         uint8
	PDUSessionID uint8
	PTI          uint8
	// PDU Session Establishment Request (TS 24.501 8.3.1): 0 when the UE
	// left the IE out.
	PDUSessionType uint8
	SSCMode        uint8
	// WantsDNSv4 says the UE asked for DNS server addresses in its
	// extended PCO (TS 24.008 10.5.6.3, container 000DH).
	WantsDNSv4 bool
	// Cause of a release or modification request (0: none).
	Cause uint8
	// QoS rules and flow descriptions a modification request asks for.
	Rules []QoSRule
	Flows []QoSFlow
}

// DecodeGSM decodes a plain 5GSM message from the UE. It never panics
// (free5gc's decoder can on crafted input); errors are *GSMError with the
// cause of TS 24.501 7.
func DecodeGSM(b []byte) (g GSM, err error) {
	if len(b) < gsmHeaderOctets {
		return g, &GSMError{Cause: GSMCauseInvalidMandatoryInformation, Err: fmt.Errorf("5GSM message of %d octets", len(b))}
	}
	g = GSM{PDUSessionID: b[1], PTI: b[2], Type: b[3]}
	fail := func(cause uint8, format string, a ...any) error {
		return &GSMError{Cause: cause, PDUSessionID: g.PDUSessionID, PTI: g.PTI, Err: fmt.Errorf(format, a...)}
	}
	if b[0] != nasMessage.Epd5GSSessionManagementMessage {
		return g, fail(GSMCauseProtocolErrorUnspecified, "not a 5GSM message (EPD %#x)", b[0])
	}
	if !fromUE(g.Type) {
		return g, fail(GSMCauseMessageTypeNonExistent, "5GSM message type %d is not one a UE sends", g.Type)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fail(GSMCauseInvalidMandatoryInformation, "5GSM message type %d: decoder panic: %v", g.Type, r)
		}
	}()
	m := nas.NewMessage()
	buf := append([]byte(nil), b...)
	if err := m.PlainNasDecode(&buf); err != nil {
		return g, fail(GSMCauseInvalidMandatoryInformation, "5GSM message type %d: %v", g.Type, err)
	}
	if err := g.read(m.GsmMessage); err != nil {
		return g, fail(GSMCauseInvalidMandatoryInformation, "%v", err)
	}
	return g, nil
}

func fromUE(t uint8) bool {
	switch t {
	case nas.MsgTypePDUSessionEstablishmentRequest, nas.MsgTypePDUSessionModificationRequest,
		nas.MsgTypePDUSessionModificationComplete, nas.MsgTypePDUSessionModificationCommandReject,
		nas.MsgTypePDUSessionReleaseRequest, nas.MsgTypePDUSessionReleaseComplete, nas.MsgTypeStatus5GSM:
		return true
	}
	return false
}

// read takes the IEs the SMF acts on.
func (g *GSM) read(m *nas.GsmMessage) error {
	switch {
	case m == nil:
		return fmt.Errorf("5GSM message type %d: empty", g.Type)
	case m.PDUSessionEstablishmentRequest != nil:
		r := m.PDUSessionEstablishmentRequest
		if r.PDUSessionType != nil {
			g.PDUSessionType = r.PDUSessionType.GetPDUSessionTypeValue()
		}
		if r.SSCMode != nil {
			g.SSCMode = r.SSCMode.GetSSCMode()
		}
		if r.ExtendedProtocolConfigurationOptions != nil {
			g.WantsDNSv4 = pcoAsks(r.ExtendedProtocolConfigurationOptions.GetExtendedProtocolConfigurationOptionsContents(), pcoDNSServerIPv4)
		}
	case m.PDUSessionReleaseRequest != nil:
		if c := m.PDUSessionReleaseRequest.Cause5GSM; c != nil {
			g.Cause = c.GetCauseValue()
		}
	case m.PDUSessionModificationRequest != nil:
		return g.readModificationRequest(m.PDUSessionModificationRequest)
	}
	return nil
}

func (g *GSM) readModificationRequest(r *nasMessage.PDUSessionModificationRequest) error {
	if r.Cause5GSM != nil {
		g.Cause = r.Cause5GSM.GetCauseValue()
	}
	var err error
	if r.RequestedQosRules != nil {
		if g.Rules, err = ParseQoSRules(r.RequestedQosRules.GetQoSRules()); err != nil {
			return fmt.Errorf("requested QoS rules: %w", err)
		}
	}
	if r.RequestedQosFlowDescriptions != nil {
		if g.Flows, err = ParseQoSFlows(r.RequestedQosFlowDescriptions.GetQoSFlowDescriptions()); err != nil {
			return fmt.Errorf("requested QoS flow descriptions: %w", err)
		}
	}
	return nil
}

// pcoAsks says whether an MS-to-network (extended) PCO value carries the
// container id (TS 24.008 10.5.6.3: one configuration protocol octet,
// then id (2), length (1), contents).
func pcoAsks(pco []byte, id uint16) bool {
	if len(pco) < 1 {
		return false
	}
	for b := pco[1:]; len(b) >= 3; {
		if binary.BigEndian.Uint16(b) == id {
			return true
		}
		n := 3 + int(b[2])
		if n > len(b) {
			return false
		}
		b = b[n:]
	}
	return false
}

// dnsPCO is a network-to-MS extended PCO value with the DNS servers.
func dnsPCO(servers []netip.Addr) []byte {
	out := []byte{pcoConfigurationProtocolPPP}
	for _, s := range servers {
		if s.Is4() {
			out = binary.BigEndian.AppendUint16(out, pcoDNSServerIPv4)
			out = append(out, 4)
			out = append(out, s.AsSlice()...)
		}
	}
	return out
}

// newGsm starts a 5GSM message of type t (TS 24.501 9.1.1).
func newGsm(t uint8) *nas.Message {
	m := nas.NewMessage()
	m.GsmMessage = nas.NewGsmMessage()
	m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	m.GsmHeader.SetMessageType(t)
	return m
}

// gsmHeader fills the four header IEs every 5GSM message struct has.
func gsmHeader(epd *nasType.ExtendedProtocolDiscriminator, psi *nasType.PDUSessionID, pti *nasType.PTI, id interface{ SetMessageType(uint8) }, t, psiV, ptiV uint8) {
	epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	psi.SetPDUSessionID(psiV)
	pti.SetPTI(ptiV)
	id.SetMessageType(t)
}

func encodeGsm(m *nas.Message, name string) ([]byte, error) {
	b, err := m.PlainNasEncode()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	return b, nil
}

// EstablishmentAccept is what PDU Session Establishment Accept carries
// (TS 24.501 8.3.2).
type EstablishmentAccept struct {
	PDUSessionID uint8
	PTI          uint8
	UEIPv4       netip.Addr
	Rules        []QoSRule
	Flows        []QoSFlow
	AMBRDown     uint64 // bit/s
	AMBRUp       uint64
	SNSSAI       models.Snssai
	DNN          string
	DNS          []netip.Addr // sent when non-empty (the UE asked)
	Cause        uint8        // e.g. #50 when the UE asked IPv4v6; 0: left out
}

// BuildPDUSessionEstablishmentAccept builds the Accept: SSC mode 1, PDU
// session type IPv4 with the UE's address.
func BuildPDUSessionEstablishmentAccept(p EstablishmentAccept) ([]byte, error) {
	const t = nas.MsgTypePDUSessionEstablishmentAccept
	m := newGsm(t)
	a := nasMessage.NewPDUSessionEstablishmentAccept(0)
	gsmHeader(&a.ExtendedProtocolDiscriminator, &a.PDUSessionID, &a.PTI, &a.PDUSESSIONESTABLISHMENTACCEPTMessageIdentity, t, p.PDUSessionID, p.PTI)
	a.SelectedSSCModeAndSelectedPDUSessionType.SetSSCMode(SSCMode1)
	a.SelectedSSCModeAndSelectedPDUSessionType.SetPDUSessionType(PDUSessionTypeIPv4)
	rules, err := EncodeQoSRules(p.Rules)
	if err != nil {
		return nil, err
	}
	a.AuthorizedQosRules.SetLen(uint16(len(rules)))
	a.AuthorizedQosRules.SetQosRule(rules)
	setAMBR(&a.SessionAMBR, p.AMBRDown, p.AMBRUp)
	if p.Cause != 0 {
		a.Cause5GSM = nasType.NewCause5GSM(nasMessage.PDUSessionEstablishmentAcceptCause5GSMType)
		a.Cause5GSM.SetCauseValue(p.Cause)
	}
	if !p.UEIPv4.Is4() {
		return nil, fmt.Errorf("PDU address %v is not IPv4", p.UEIPv4)
	}
	a.PDUAddress = nasType.NewPDUAddress(nasMessage.PDUSessionEstablishmentAcceptPDUAddressType)
	a.PDUAddress.SetLen(5) // type octet + IPv4 (TS 24.501 9.11.4.10)
	a.PDUAddress.SetPDUSessionTypeValue(PDUSessionTypeIPv4)
	var addr [12]byte
	copy(addr[:], p.UEIPv4.AsSlice())
	a.PDUAddress.SetPDUAddressInformation(addr)
	if err := setAcceptSNSSAI(a, p.SNSSAI); err != nil {
		return nil, err
	}
	if err := setAcceptFlows(a, p.Flows); err != nil {
		return nil, err
	}
	if len(p.DNS) > 0 {
		pco := dnsPCO(p.DNS)
		a.ExtendedProtocolConfigurationOptions = nasType.NewExtendedProtocolConfigurationOptions(nasMessage.PDUSessionEstablishmentAcceptExtendedProtocolConfigurationOptionsType)
		a.ExtendedProtocolConfigurationOptions.SetLen(uint16(len(pco)))
		a.ExtendedProtocolConfigurationOptions.SetExtendedProtocolConfigurationOptionsContents(pco)
	}
	a.DNN = nasType.NewDNN(nasMessage.PDUSessionEstablishmentAcceptDNNType)
	a.DNN.SetDNN(p.DNN)
	if p.DNN == "" || a.DNN.GetLen() == 0 {
		return nil, fmt.Errorf("DNN %q cannot be encoded (TS 23.003 9.1)", p.DNN)
	}
	m.PDUSessionEstablishmentAccept = a
	return encodeGsm(m, "PDU Session Establishment Accept")
}

func setAMBR(s *nasType.SessionAMBR, down, up uint64) {
	v := EncodeSessionAMBR(down, up)
	s.SetLen(6)
	s.SetUnitForSessionAMBRForDownlink(v[0])
	s.SetSessionAMBRForDownlink([2]byte{v[1], v[2]})
	s.SetUnitForSessionAMBRForUplink(v[3])
	s.SetSessionAMBRForUplink([2]byte{v[4], v[5]})
}

func setAcceptSNSSAI(a *nasMessage.PDUSessionEstablishmentAccept, s models.Snssai) error {
	v, err := nssaiOctets([]models.Snssai{s})
	if err != nil {
		return err
	}
	a.SNSSAI = nasType.NewSNSSAI(nasMessage.PDUSessionEstablishmentAcceptSNSSAIType)
	a.SNSSAI.SetLen(v[0])
	copy(a.SNSSAI.Octet[:], v[1:])
	return nil
}

func setAcceptFlows(a *nasMessage.PDUSessionEstablishmentAccept, flows []QoSFlow) error {
	if len(flows) == 0 {
		return nil
	}
	b, err := EncodeQoSFlows(flows)
	if err != nil {
		return err
	}
	a.AuthorizedQosFlowDescriptions = nasType.NewAuthorizedQosFlowDescriptions(nasMessage.PDUSessionEstablishmentAcceptAuthorizedQosFlowDescriptionsType)
	a.AuthorizedQosFlowDescriptions.SetLen(uint16(len(b)))
	a.AuthorizedQosFlowDescriptions.SetQoSFlowDescriptions(b)
	return nil
}

// BuildPDUSessionEstablishmentReject builds the Reject (TS 24.501 8.3.3).
func BuildPDUSessionEstablishmentReject(psi, pti, cause uint8) ([]byte, error) {
	const t = nas.MsgTypePDUSessionEstablishmentReject
	m := newGsm(t)
	r := nasMessage.NewPDUSessionEstablishmentReject(0)
	gsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONESTABLISHMENTREJECTMessageIdentity, t, psi, pti)
	r.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionEstablishmentReject = r
	return encodeGsm(m, "PDU Session Establishment Reject")
}

// ModificationCommand is what PDU Session Modification Command carries
// (TS 24.501 8.3.9): a new Session-AMBR, and rules and flow descriptions
// to create, modify or delete.
type ModificationCommand struct {
	PDUSessionID uint8
	PTI          uint8 // 0 for a network-requested modification
	// AMBR, when set, is the session's new Session-AMBR (IEI 0x2A, TS
	// 24.501 9.11.4.14; 8.3.9.3: present when the network changes it).
	AMBR  *SessionAMBR
	Rules []QoSRule
	Flows []QoSFlow
}

// BuildPDUSessionModificationCommand builds the Modification Command.
func BuildPDUSessionModificationCommand(p ModificationCommand) ([]byte, error) {
	const t = nas.MsgTypePDUSessionModificationCommand
	m := newGsm(t)
	c := nasMessage.NewPDUSessionModificationCommand(0)
	gsmHeader(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, &c.PDUSESSIONMODIFICATIONCOMMANDMessageIdentity, t, p.PDUSessionID, p.PTI)
	if p.AMBR != nil {
		if p.AMBR.UplinkBps == 0 || p.AMBR.DownlinkBps == 0 {
			return nil, fmt.Errorf("Session-AMBR %d/%d bit/s: both directions must be set (TS 24.501 9.11.4.14)", p.AMBR.UplinkBps, p.AMBR.DownlinkBps)
		}
		c.SessionAMBR = nasType.NewSessionAMBR(nasMessage.PDUSessionModificationCommandSessionAMBRType)
		setAMBR(c.SessionAMBR, p.AMBR.DownlinkBps, p.AMBR.UplinkBps)
	}
	if len(p.Rules) > 0 {
		b, err := EncodeQoSRules(p.Rules)
		if err != nil {
			return nil, err
		}
		c.AuthorizedQosRules = nasType.NewAuthorizedQosRules(nasMessage.PDUSessionModificationCommandAuthorizedQosRulesType)
		c.AuthorizedQosRules.SetLen(uint16(len(b)))
		c.AuthorizedQosRules.SetQosRule(b)
	}
	if len(p.Flows) > 0 {
		b, err := EncodeQoSFlows(p.Flows)
		if err != nil {
			return nil, err
		}
		c.AuthorizedQosFlowDescriptions = nasType.NewAuthorizedQosFlowDescriptions(nasMessage.PDUSessionModificationCommandAuthorizedQosFlowDescriptionsType)
		c.AuthorizedQosFlowDescriptions.SetLen(uint16(len(b)))
		c.AuthorizedQosFlowDescriptions.SetQoSFlowDescriptions(b)
	}
	m.PDUSessionModificationCommand = c
	return encodeGsm(m, "PDU Session Modification Command")
}

// BuildPDUSessionModificationReject builds the Modification Reject (TS
// 24.501 8.3.8).
func BuildPDUSessionModificationReject(psi, pti, cause uint8) ([]byte, error) {
	const t = nas.MsgTypePDUSessionModificationReject
	m := newGsm(t)
	r := nasMessage.NewPDUSessionModificationReject(0)
	gsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONMODIFICATIONREJECTMessageIdentity, t, psi, pti)
	r.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionModificationReject = r
	return encodeGsm(m, "PDU Session Modification Reject")
}

// BuildPDUSessionReleaseCommand builds the Release Command (TS 24.501
// 8.3.14); pti is the UE's for a UE-requested release, 0 otherwise.
func BuildPDUSessionReleaseCommand(psi, pti, cause uint8) ([]byte, error) {
	const t = nas.MsgTypePDUSessionReleaseCommand
	m := newGsm(t)
	c := nasMessage.NewPDUSessionReleaseCommand(0)
	gsmHeader(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, &c.PDUSESSIONRELEASECOMMANDMessageIdentity, t, psi, pti)
	c.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionReleaseCommand = c
	return encodeGsm(m, "PDU Session Release Command")
}

// BuildPDUSessionReleaseReject builds the Release Reject (TS 24.501 8.3.13).
func BuildPDUSessionReleaseReject(psi, pti, cause uint8) ([]byte, error) {
	const t = nas.MsgTypePDUSessionReleaseReject
	m := newGsm(t)
	r := nasMessage.NewPDUSessionReleaseReject(0)
	gsmHeader(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONRELEASEREJECTMessageIdentity, t, psi, pti)
	r.Cause5GSM.SetCauseValue(cause)
	m.PDUSessionReleaseReject = r
	return encodeGsm(m, "PDU Session Release Reject")
}
