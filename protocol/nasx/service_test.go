package nasx

import (
	"reflect"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
)

func psis(ids ...uint8) *PSISet { s := PSIs(ids...); return &s }

func TestPSISetOctetsFollowTheIEBitOrder(t *testing.T) {
	// TS 24.501 figure 9.11.3.44.1: octet 3 bit 2 is PSI 1, octet 4 bit 8 is PSI 15.
	if got := PSIs(1, 15).octets(); !reflect.DeepEqual(got, []byte{0x02, 0x80}) {
		t.Fatalf("PSI 1 and 15 encode as % x, want 02 80", got)
	}
	if got := PSIs(0, 16, 5).IDs(); !reflect.DeepEqual(got, []uint8{5}) {
		t.Fatalf("PSI 0 and 16 are not PSIs: got %v", got)
	}
	if s, err := parsePSISet("x", []byte{0xFF, 0x00}); err != nil || s.Has(0) || !s.Has(7) {
		t.Fatalf("spare PSI 0 bit read as member: %v %v", s.IDs(), err)
	}
	if _, err := parsePSISet("x", []byte{0x02}); CauseOf(err) != CauseInvalidMandatoryInfo {
		t.Fatalf("1-octet bitmap: %v, want #96", err)
	}
}

func TestServiceRequestRoundTrip(t *testing.T) {
	in := ServiceRequest{ServiceType: ServiceTypeMobileTerminated, NgKSI: 1,
		STMSI:            STMSI{SetID: 1, Pointer: 2, TMSI: 0xDEADBEEF},
		UplinkDataStatus: psis(1), PDUSessionStatus: psis(1, 2, 15), AllowedPDUSessionStatus: psis(2)}
	b, err := BuildServiceRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil || m.ServiceRequest == nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := ParseServiceRequest(m.ServiceRequest)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestServiceRequestCleartextCarriesOnlyCleartextIEs(t *testing.T) {
	full := ServiceRequest{ServiceType: ServiceTypeData, NgKSI: 2, STMSI: STMSI{TMSI: 9}, PDUSessionStatus: psis(1)}
	inner, _ := BuildServiceRequest(full)
	clear := full
	clear.Cleartext, clear.Container = true, inner
	b, err := BuildServiceRequest(clear)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := Decode(b)
	out, err := ParseServiceRequest(m.ServiceRequest)
	if err != nil || out.PDUSessionStatus != nil || !reflect.DeepEqual(out.Container, inner) || out.STMSI.TMSI != 9 {
		t.Fatalf("cleartext request %+v, %v: want only the 5G-S-TMSI and the container (TS 24.501 4.4.6)", out, err)
	}
}

func TestServiceRequestWithoutSTMSIIsInvalid(t *testing.T) {
	b, _ := BuildServiceRequest(ServiceRequest{STMSI: STMSI{TMSI: 1}})
	b[6] = 0xF2 // identity type 5G-GUTI inside the 5G-S-TMSI IE
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseServiceRequest(m.ServiceRequest); CauseOf(err) != CauseInvalidMandatoryInfo {
		t.Fatalf("got %v, want #96", err)
	}
}

func TestServiceAcceptRoundTrip(t *testing.T) {
	in := ServiceAccept{PDUSessionStatus: psis(1, 3), ReactivationResult: psis(3),
		ReactivationErrors: map[uint8]uint8{3: CauseCongestion}}
	b, err := BuildServiceAccept(in)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil || m.GmmHeader.GetMessageType() != nas.MsgTypeServiceAccept {
		t.Fatalf("decode: %v", err)
	}
	out, err := ParseServiceAccept(m.ServiceAccept)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: got %+v, %v; want %+v", out, err, in)
	}
	empty, _ := BuildServiceAccept(ServiceAccept{})
	if len(empty) != 3 {
		t.Fatalf("Service Accept with no IEs is % x, want the 3-octet header", empty)
	}
}

func TestServiceRejectRoundTrip(t *testing.T) {
	for _, in := range []ServiceReject{
		{Cause: CauseUEIdentityCannotBeDerived},
		{Cause: CauseImplicitlyDeregistered, PDUSessionStatus: psis()},
		{Cause: CauseCongestion, T3346: 4 * time.Minute},
	} {
		b, err := BuildServiceRejectWith(in)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ParseServiceReject(m.ServiceReject)
		if err != nil || !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip: got %+v, %v; want %+v", out, err, in)
		}
	}
	old, _ := BuildServiceReject(CauseCongestion)
	same, _ := BuildServiceRejectWith(ServiceReject{Cause: CauseCongestion})
	if !reflect.DeepEqual(old, same) {
		t.Fatal("BuildServiceReject and BuildServiceRejectWith disagree")
	}
}

func TestServiceAcceptRejectsOddErrorCauseList(t *testing.T) {
	a := nasMessage.NewServiceAccept(0)
	a.PDUSessionReactivationResultErrorCause = nasType.NewPDUSessionReactivationResultErrorCause(nasMessage.ServiceAcceptPDUSessionReactivationResultErrorCauseType)
	a.PDUSessionReactivationResultErrorCause.Buffer = []byte{1}
	if _, err := ParseServiceAccept(a); CauseOf(err) != CauseInvalidMandatoryInfo {
		t.Fatalf("got %v, want #96", err)
	}
}

func TestGPRSTimer2DurationInvertsGPRSTimer2(t *testing.T) {
	for _, d := range []time.Duration{0, 2 * time.Second, 60 * time.Second, 10 * time.Minute, 30 * time.Minute, 42 * time.Minute} {
		if got := GPRSTimer2Duration(GPRSTimer2(d)); got != d {
			t.Errorf("%v -> %#x -> %v", d, GPRSTimer2(d), got)
		}
	}
}

// FuzzServiceMessages: the Service Request the AMF reads and the Service
// Accept/Reject the UE reads never panic their parsers.
func FuzzServiceMessages(f *testing.F) {
	for _, p := range []ServiceRequest{{STMSI: STMSI{TMSI: 1}, PDUSessionStatus: psis(1), UplinkDataStatus: psis(1)},
		{Cleartext: true, Container: []byte{0x7e, 0x00, 0x4c}}} {
		b, _ := BuildServiceRequest(p)
		f.Add(b)
	}
	acc, _ := BuildServiceAccept(ServiceAccept{PDUSessionStatus: psis(1), ReactivationResult: psis(2), ReactivationErrors: map[uint8]uint8{2: 22}})
	rej, _ := BuildServiceRejectWith(ServiceReject{Cause: 22, PDUSessionStatus: psis(1), T3346: time.Minute})
	f.Add(acc)
	f.Add(rej)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		switch {
		case m.ServiceRequest != nil:
			_, _ = ParseServiceRequest(m.ServiceRequest)
		case m.ServiceAccept != nil:
			_, _ = ParseServiceAccept(m.ServiceAccept)
		case m.ServiceReject != nil:
			_, _ = ParseServiceReject(m.ServiceReject)
		}
	})
}

func TestRegistrationRequestFollowOn(t *testing.T) {
	for _, no := range []bool{false, true} {
		b, err := BuildRegistrationRequest(RegistrationRequest{Type: nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, NgKSI: 1,
			Identity: EncodeSTMSI(STMSI{TMSI: 1}), NoFollowOn: no})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.RegistrationRequest.NgksiAndRegistrationType5GS.GetFOR() == 1; got == no {
			t.Fatalf("NoFollowOn %v: FOR %v", no, got)
		}
	}
}
