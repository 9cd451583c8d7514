package ngapx

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// FuzzFastDecode: whatever arrives, the fast decoder never panics, and
// when it takes a PDU the library decodes it too, to the same value; the
// fast encoder then writes that value as the library does.
func FuzzFastDecode(f *testing.F) {
	for _, s := range hotSamples(f) {
		f.Add(s.bytes)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := decodeFast(b)
		if !ok {
			return
		}
		want, err := ngap.Decoder(b)
		if err != nil {
			t.Fatalf("fast path decodes what the library refuses (%v): %x", err, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded values differ for %x", b)
		}
		fastSum, ok := summarizeFast(got)
		anySum, err := summarizeAny(want)
		if !ok || err != nil || !reflect.DeepEqual(fastSum, anySum) {
			t.Fatalf("summaries differ for %x: fast %+v, reflective %+v (%v)", b, fastSum, anySum, err)
		}
		lib, libErr := ngap.Encoder(*want)
		if fast, ok := encodeFast(got); ok && (libErr != nil || !bytes.Equal(fast, lib)) {
			t.Fatalf("re-encoding differs: fast %x, library %x (%v)", fast, lib, libErr)
		}
	})
}

// FuzzFastEncode builds random messages of the hot shapes (IDs anywhere
// in and just past their ranges, any criticality, NAS-PDUs of any length,
// optional IEs present or not, 1-20 sessions or slices) and checks the
// fast encoder against the library, then decodes the octets back both ways.
func FuzzFastEncode(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(bytes.Repeat([]byte{0x7f, 0x80}, 40))
	for k := byte(0); k < 15; k++ {
		f.Add(append([]byte{k}, bytes.Repeat([]byte{k * 37}, 48)...))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		src := &fuzzSource{b: seed}
		pdu := src.message(t)
		if pdu == nil {
			return
		}
		lib, libErr := ngap.Encoder(*pdu)
		fast, ok := encodeFast(pdu)
		if !ok {
			return
		}
		if libErr != nil || !bytes.Equal(fast, lib) {
			t.Fatalf("fast %x, library %x (%v)", fast, lib, libErr)
		}
		want, err := ngap.Decoder(lib)
		got, ok := decodeFast(lib)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("decoding %x: fast and library differ (%v)", lib, err)
		}
	})
}

// fuzzSource hands out the fuzzer's octets as the values of a message;
// past the end it hands out zeros.
type fuzzSource struct{ b []byte }

func (s *fuzzSource) u8() uint8 {
	if len(s.b) == 0 {
		return 0
	}
	v := s.b[0]
	s.b = s.b[1:]
	return v
}

func (s *fuzzSource) u64() uint64 {
	var x [8]byte
	for i := range x {
		x[i] = s.u8()
	}
	return binary.BigEndian.Uint64(x[:])
}

// id is an integer of up to bits+1 bits: in range, and sometimes just past it.
func (s *fuzzSource) id(bits uint) int64 { return int64(s.u64() & (1<<(bits+1) - 1)) }

func (s *fuzzSource) crit() aper.Enumerated { return aper.Enumerated(s.u8() % 4) }

func (s *fuzzSource) flag() bool { return s.u8()&1 == 1 }

// octets is n (from the input, up to ~17K) octets of a pattern.
func (s *fuzzSource) octets() []byte {
	n := int(s.u8())
	if s.u8()%8 == 0 {
		n = n<<6 | int(s.u8()&0x3f)
	}
	return bytes.Repeat([]byte{s.u8()}, n)
}

func (s *fuzzSource) snssai() models.Snssai {
	m := models.Snssai{Sst: int32(s.u8())}
	if s.flag() {
		m.Sd = "0a0b0c"
	}
	return m
}

func (s *fuzzSource) cell() Cell {
	return Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: domain.TAC(s.u8())}, CellID: s.u64() & (1<<36 - 1)}
}

// message builds one hot message with the same builders the AMF and the
// simulator use, then perturbs the IDs and criticalities the builders fix.
func (s *fuzzSource) message(t *testing.T) *ngapType.NGAPPDU {
	amf, ran := s.id(40), s.id(32)
	var b []byte
	var err error
	switch s.u8() % 15 {
	case 0:
		b, err = BuildDownlinkNASTransport(1, 1, s.octets())
	case 1:
		b, err = BuildUplinkNASTransport(1, 1, s.octets(), s.cell())
	case 2:
		var stmsi *nasx.STMSI
		if s.flag() {
			stmsi = &nasx.STMSI{SetID: uint16(s.u8()) << 2, Pointer: s.u8() & 0x3f, TMSI: uint32(s.u64())}
		}
		b, err = BuildInitialUEMessageWithCause(1, s.octets(), s.cell(), stmsi, aper.Enumerated(s.u8()%12))
	case 3:
		b, err = BuildInitialContextSetupRequest(s.initialContext())
	case 4:
		b, err = BuildInitialContextSetupResponse(1, 1)
	case 12:
		var sessions []SessionResource
		for _, id := range s.sessionIDs() {
			c := s.cause()
			tr, err := BuildPDUSessionResourceReleaseCommandTransfer(c)
			if err != nil {
				return nil
			}
			sessions = append(sessions, SessionResource{ID: int64(id), Transfer: tr})
		}
		var nas []byte
		if s.flag() {
			nas = s.octets()
		}
		b, err = BuildPDUSessionResourceReleaseCommand(SessionResourceRequest{AMFUEID: 1, RANUEID: 1, Sessions: sessions, NASPDU: nas})
	case 13:
		b, err = BuildRANReleaseResponse(1, 1, s.sessionIDs())
	case 9:
		b, err = BuildUEContextReleaseRequestWithSessions(1, 1, s.cause(), s.sessionIDs())
	case 10:
		b, err = BuildUEContextReleaseCommand(1, int64(s.u8())-128, s.cause())
	case 11:
		b, err = BuildRANContextReleaseComplete(1, 1, s.sessionIDs())
	case 7:
		var tais []domain.TAI
		for i := 0; i < 1+int(s.u8()%18); i++ {
			tais = append(tais, s.cell().TAI)
		}
		drx := aper.Enumerated(s.u8() % 6)
		b, err = BuildPaging(Paging{STMSI: nasx.STMSI{SetID: uint16(s.u8()) << 2, TMSI: uint32(s.u64())}, TAIs: tais, DRX: &drx, Priority: int(s.u8() % 10)})
	case 8:
		var results []RANSessionResult
		for i := 0; i < 1+int(s.u8()%20); i++ {
			results = append(results, RANSessionResult{ID: s.u8(), DL: testTunnel, QFIs: []uint8{s.u8() % 70}})
		}
		b, err = BuildRANInitialContextSetupResponse(1, 1, results)
	case 6:
		b, err = BuildUERadioCapabilityInfoIndication(1, 1, s.octets())
	case 5:
		b, err = BuildPDUSessionResourceSetupRequest(SessionResourceRequest{AMFUEID: 1, RANUEID: 1, Sessions: s.sessions()})
	default:
		var results []RANSessionResult
		for i := 0; i < 1+int(s.u8()%20); i++ {
			results = append(results, RANSessionResult{ID: s.u8(), DL: testTunnel, QFIs: []uint8{1}})
		}
		b, err = BuildRANSetupResponse(1, 1, results)
	}
	if err != nil {
		return nil // a shape the builders refuse (e.g. a bad S-NSSAI) is not sent
	}
	pdu, err := ngap.Decoder(b)
	if err != nil {
		return nil // the library cannot read back some of its own (16K multiples)
	}
	s.perturb(pdu, amf, ran)
	return pdu
}

// cause is any group with a value up to two past its root values.
func (s *fuzzSource) cause() ngapType.Cause {
	group := 1 + int(s.u8()%5)
	return causeOf(group, aper.Enumerated(uint64(s.u8())%(causeRoots[group]+2)))
}

func (s *fuzzSource) sessionIDs() []uint8 {
	ids := make([]uint8, int(s.u8()%20))
	for i := range ids {
		ids[i] = s.u8()
	}
	return ids
}

func (s *fuzzSource) initialContext() InitialContext {
	c := InitialContext{AMFUEID: 1, RANUEID: 1, GUAMI: testGUAMI, KgNB: bytes.Repeat([]byte{s.u8()}, 32),
		NREncryption: [2]byte{s.u8(), s.u8()}, NRIntegrity: [2]byte{s.u8(), s.u8()}}
	for i := 0; i < 1+int(s.u8()%9); i++ {
		c.Allowed = append(c.Allowed, s.snssai())
	}
	if s.flag() {
		c.AMBRUL, c.AMBRDL = int64(s.u64()>>21), int64(s.u64()>>21)
	}
	if s.flag() {
		c.NASPDU = s.octets()
	}
	if s.flag() {
		c.Sessions = s.sessions()
	}
	return c
}

func (s *fuzzSource) sessions() []SessionResource {
	var out []SessionResource
	for i := 0; i < 1+int(s.u8()%20); i++ {
		r := SessionResource{ID: int64(s.u8()), SNSSAI: s.snssai(), Transfer: append([]byte{1}, s.octets()...)}
		if s.flag() {
			r.NASPDU = s.octets()
		}
		out = append(out, r)
	}
	return out
}

// perturb sets the UE IDs and, now and then, a criticality the builders
// would not choose.
func (s *fuzzSource) perturb(pdu *ngapType.NGAPPDU, amf, ran int64) {
	v := reflect.ValueOf(pdu).Elem()
	msg, err := messageOf(pdu)
	if err != nil {
		return
	}
	if s.flag() {
		reflect.Indirect(v.Field(pdu.Present)).FieldByName("Criticality").Field(0).SetUint(uint64(s.crit()))
	}
	list := msg.Elem().FieldByName("ProtocolIEs").FieldByName("List")
	for i := 0; i < list.Len(); i++ {
		ie := list.Index(i)
		if s.u8()%8 == 0 {
			ie.FieldByName("Criticality").Field(0).SetUint(uint64(s.crit()))
		}
		val := ie.FieldByName("Value")
		if f := val.FieldByName("AMFUENGAPID"); f.IsValid() && !f.IsNil() {
			f.Elem().Field(0).SetInt(amf)
		}
		if f := val.FieldByName("RANUENGAPID"); f.IsValid() && !f.IsNil() {
			f.Elem().Field(0).SetInt(ran)
		}
	}
}
