package pfcpx

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/config"
)

// establishmentWith is aSession's establishment request changed by edit.
func establishmentWith(t *testing.T, edit func(*SessionEstablishmentRequest)) []byte {
	t.Helper()
	body, err := EstablishmentRequestOf(smfAddr, aSession())
	if err != nil {
		t.Fatal(err)
	}
	edit(body)
	b, err := Encode(&Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, SequenceNumber: 1}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every IE TS 29.244 7.5.2 makes mandatory, left out, is refused with
// cause 66 naming it in the Offending IE; an incorrect one with 69.
func TestEstablishmentIEsChecked(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*SessionEstablishmentRequest)
		cause uint8
		ie    uint16
	}{
		{"no Node ID", func(r *SessionEstablishmentRequest) { r.NodeID = nil }, CauseMandatoryIEMissing, IENodeID},
		{"no CP F-SEID", func(r *SessionEstablishmentRequest) { r.CPFSEID = nil }, CauseMandatoryIEMissing, IEFSEID},
		{"no Create PDR", func(r *SessionEstablishmentRequest) { r.CreatePDR = nil }, CauseMandatoryIEMissing, IECreatePDR},
		{"no Create FAR", func(r *SessionEstablishmentRequest) { r.CreateFAR = nil }, CauseMandatoryIEMissing, IECreateFAR},
		{"PDR without ID", func(r *SessionEstablishmentRequest) { r.CreatePDR[1].PDRID = nil }, CauseMandatoryIEMissing, IEPDRID},
		{"PDR without precedence", func(r *SessionEstablishmentRequest) { r.CreatePDR[0].Precedence = nil }, CauseMandatoryIEMissing, IEPrecedence},
		{"PDR without PDI", func(r *SessionEstablishmentRequest) { r.CreatePDR[0].PDI = nil }, CauseMandatoryIEMissing, IEPDI},
		{"PDI without source interface", func(r *SessionEstablishmentRequest) { r.CreatePDR[0].PDI.SourceInterface = nil }, CauseMandatoryIEMissing, IESourceInterface},
		{"PDR without FAR ID", func(r *SessionEstablishmentRequest) { r.CreatePDR[0].FARID = nil }, CauseConditionalIEMissing, IEFARID},
		{"FAR without ID", func(r *SessionEstablishmentRequest) { r.CreateFAR[0].FARID = nil }, CauseMandatoryIEMissing, IEFARID},
		{"FAR without apply action", func(r *SessionEstablishmentRequest) { r.CreateFAR[0].ApplyAction = nil }, CauseMandatoryIEMissing, IEApplyAction},
		{"forwarding FAR without parameters", func(r *SessionEstablishmentRequest) { r.CreateFAR[0].ForwardingParameters = nil }, CauseConditionalIEMissing, IEForwardingParameters},
		{"QER without gate status", func(r *SessionEstablishmentRequest) { r.CreateQER[0].GateStatus = nil }, CauseMandatoryIEMissing, IEGateStatus},
		{"QER without ID", func(r *SessionEstablishmentRequest) { r.CreateQER[1].QERID = nil }, CauseMandatoryIEMissing, IEQERID},
		{"URR without measurement method", func(r *SessionEstablishmentRequest) { r.CreateURR[0].MeasurementMethod = nil }, CauseMandatoryIEMissing, IEMeasurementMethod},
		{"URR without reporting triggers", func(r *SessionEstablishmentRequest) { r.CreateURR[0].ReportingTriggers = nil }, CauseMandatoryIEMissing, IEReportingTriggers},
		{"drop and forward at once", func(r *SessionEstablishmentRequest) { r.CreateFAR[0].ApplyAction.Drop = true }, CauseMandatoryIEIncorrect, IEApplyAction},
		{"outer header removal of IPv6", func(r *SessionEstablishmentRequest) {
			r.CreatePDR[0].OuterHeaderRemoval.OuterHeaderRemovalDescription = pfcpType.OuterHeaderRemovalGtpUUdpIpv6
		}, CauseMandatoryIEIncorrect, IEOuterHeaderRemoval},
		{"source interface 9", func(r *SessionEstablishmentRequest) { r.CreatePDR[0].PDI.SourceInterface.InterfaceValue = 9 }, CauseMandatoryIEIncorrect, IESourceInterface},
		{"F-TEID to choose in IPv6 only", func(r *SessionEstablishmentRequest) {
			r.CreatePDR[0].PDI.LocalFTEID = &pfcpType.FTEID{Ch: true, V6: true}
		}, CauseInvalidFTEIDAllocation, IEFTEID},
		{"F-TEID without address", func(r *SessionEstablishmentRequest) {
			r.CreatePDR[0].PDI.LocalFTEID = &pfcpType.FTEID{V6: true, Teid: 1, Ipv6Address: net.ParseIP("::1")}
		}, CauseMandatoryIEIncorrect, IEFTEID},
		{"QER weight 0", func(r *SessionEstablishmentRequest) { r.CreateQER[1].Weight[0].Data = []byte{0, 0} }, CauseMandatoryIEIncorrect, IEQERWeight},
		{"QER weight 101", func(r *SessionEstablishmentRequest) { r.CreateQER[1].Weight[0].Data = []byte{0, 101} }, CauseMandatoryIEIncorrect, IEQERWeight},
		{"QER weight of one octet", func(r *SessionEstablishmentRequest) { r.CreateQER[1].Weight[0].Data = []byte{3} }, CauseMandatoryIEIncorrect, IEQERWeight},
		{"two QFIs", func(r *SessionEstablishmentRequest) {
			r.CreatePDR[0].PDI.QFI = []*pfcpType.QFI{{QFI: 1}, {QFI: 2}}
		}, CauseServiceNotSupported, IEQFI},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(establishmentWith(t, c.edit))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err = SessionOf(m.Body.(*SessionEstablishmentRequest))
			var e *Error
			if !errors.As(err, &e) || e.Cause != c.cause || e.OffendingIE != c.ie {
				t.Fatalf("got %v, want cause %d (%s) with offending IE %d (%s)", err, c.cause, CauseName(c.cause), c.ie, IEName(c.ie))
			}
		})
	}
}

// Bytes that are not a PFCP message become a DecodeError with the cause
// to answer with when the header can be read; nothing panics.
func TestDecodeRefusesMalformed(t *testing.T) {
	good := establishmentWith(t, func(*SessionEstablishmentRequest) {})
	withLen := func(b []byte, n int) []byte {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint16(b[2:], uint16(n))
		return b
	}
	// A Node ID of type FQDN and no name: free5gc/pfcp panics on it.
	fqdnNoName := []byte{0x20, 5, 0, 0, 0, 0, 1, 0, 0, 60, 0, 1, 2}
	binary.BigEndian.PutUint16(fqdnNoName[2:], uint16(len(fqdnNoName)-4))
	// An IE whose length runs past the message.
	truncatedIE := append(append([]byte(nil), good[:16]...), 0, 60, 0, 40, 0)
	binary.BigEndian.PutUint16(truncatedIE[2:], uint16(len(truncatedIE)-4))
	for _, c := range []struct {
		name     string
		b        []byte
		headerOK bool
		cause    uint8
		ie       uint16
	}{
		{"empty", nil, false, CauseInvalidLength, 0},
		{"short header", good[:5], false, CauseInvalidLength, 0},
		{"session header cut", good[:12], false, CauseInvalidLength, 0},
		{"length too long", withLen(good, len(good)), true, CauseInvalidLength, 0},
		{"length too short", withLen(good, len(good)-10), true, CauseInvalidLength, 0},
		{"S flag off on a session message", append([]byte{0x20}, good[1:]...), false, CauseMandatoryIEIncorrect, 0},
		{"FQDN Node ID without a name", fqdnNoName, true, CauseMandatoryIEIncorrect, IENodeID},
		{"IE past the end", truncatedIE, true, CauseInvalidLength, 0},
		{"unknown message type", []byte{0x20, 20, 0, 4, 0, 0, 1, 0}, true, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.b)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a DecodeError", err)
			}
			if de.HeaderOK != c.headerOK || de.Err.Cause != c.cause || de.Err.OffendingIE != c.ie {
				t.Fatalf("got header ok %v, %v; want header ok %v, cause %d, offending IE %d", de.HeaderOK, de.Err, c.headerOK, c.cause, c.ie)
			}
		})
	}
}

// Network Instance: written as APN labels, read in that form or plain.
func TestNetworkInstance(t *testing.T) {
	b, err := (&NetworkInstance{Name: "internet.mnc093.mcc208"}).MarshalBinary()
	if err != nil || string(b) != "\x08internet\x06mnc093\x06mcc208" {
		t.Fatalf("%q %v", b, err)
	}
	for in, want := range map[string]string{"\x08internet": "internet", "internet": "internet", "\x05ims": "\x05ims"} {
		var n NetworkInstance
		if err := n.UnmarshalBinary([]byte(in)); err != nil || n.Name != want {
			t.Errorf("%q read as %q (%v), want %q", in, n.Name, err, want)
		}
	}
	if _, err := (&NetworkInstance{Name: "a..b"}).MarshalBinary(); err == nil {
		t.Error("an empty label encoded")
	}
}

// N4 addresses name their transport.
func TestParseAddr(t *testing.T) {
	for in, want := range map[string]string{"udp:127.0.0.1:8805": "udp 127.0.0.1:8805", "127.0.0.1:8805": "udp 127.0.0.1:8805", "xio:127.0.0.1:8805": "xio 127.0.0.1:8805", "xio:upf": "xio upf"} {
		network, addr, err := ParseAddr(in)
		if err != nil || network+" "+addr.String() != want {
			t.Errorf("%q: %s %v %v, want %s", in, network, addr, err, want)
		}
	}
	for _, bad := range []string{"xio:", "udp:localhost:8805", "udp:127.0.0.1", ""} {
		if _, _, err := ParseAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// An SMF reaches the node's UPF-C over X-IO when the node's SBI runs
// over X-IO, over UDP otherwise, with the node's timers and address.
func TestAddrFollowsTheSBITransport(t *testing.T) {
	cfg := config.Default()
	for transport, want := range map[string]string{"xio": "xio:127.0.0.1:8805", "xio-socket": "xio:127.0.0.1:8805", "tcp": "udp:127.0.0.1:8805"} {
		cfg.SBI.Transport = transport
		if got := Addr(cfg); got != want {
			t.Errorf("sbi.transport %s: N4 at %q, want %q", transport, got, want)
		}
	}
	cc := ClientConfigFor(cfg, nil)
	if cc.NodeID.String() != "127.0.0.1" || cc.T1 != 3*time.Second || cc.N1 != 3 {
		t.Fatalf("client config %+v", cc)
	}
}
