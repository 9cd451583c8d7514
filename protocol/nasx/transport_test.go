package nasx

import (
	"bytes"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"
)

// A UE's PDU Session Establishment Request in UL NAS Transport, and the
// AMF's DL NAS Transport sending it back with #90 (TS 24.501 5.4.5.2.5),
// decode back with every IE the clause names.
func TestNASTransportRoundTrip(t *testing.T) {
	sm, err := BuildPDUSessionEstablishmentRequest(5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sm[0] != 0x2e || sm[1] != 5 || sm[2] != 1 || sm[3] != nas.MsgTypePDUSessionEstablishmentRequest {
		t.Fatalf("5GSM header % x: want EPD 0x2e, PDU session 5, PTI 1, type 0xc1", sm[:4])
	}
	ul, err := BuildULNASTransport(ULNASTransport{PayloadType: PayloadN1SMInformation, Payload: sm, PDUSessionID: 5,
		RequestType: RequestInitial, SNSSAI: &models.Snssai{Sst: 1, Sd: "010203"}, DNN: "internet"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(ul)
	if err != nil {
		t.Fatal(err)
	}
	u := m.ULNASTransport
	if u == nil || u.GetPayloadContainerType() != PayloadN1SMInformation || !bytes.Equal(u.GetPayloadContainerContents(), sm) ||
		u.PduSessionID2Value == nil || u.GetPduSessionID2Value() != 5 || u.RequestType == nil || u.GetRequestTypeValue() != RequestInitial ||
		u.SNSSAI == nil || u.SNSSAI.GetSST() != 1 || u.SNSSAI.GetSD() != [3]byte{1, 2, 3} || u.DNN == nil || u.DNN.GetDNN() != "internet" {
		t.Fatalf("UL NAS Transport decoded as %+v", u)
	}

	dl, err := BuildDLNASTransport(DLNASTransport{PayloadType: PayloadN1SMInformation, Payload: sm, PDUSessionID: 5, Cause: CausePayloadNotForwarded})
	if err != nil {
		t.Fatal(err)
	}
	m, err = Decode(dl)
	if err != nil {
		t.Fatal(err)
	}
	d := m.DLNASTransport
	if d == nil || d.GetPayloadContainerType() != PayloadN1SMInformation || !bytes.Equal(d.GetPayloadContainerContents(), sm) ||
		d.PduSessionID2Value == nil || d.GetPduSessionID2Value() != 5 || d.Cause5GMM == nil || d.Cause5GMM.GetCauseValue() != 90 {
		t.Fatalf("DL NAS Transport decoded as %+v", d)
	}
}

func TestNASTransportNeedsAPayload(t *testing.T) {
	if _, err := BuildDLNASTransport(DLNASTransport{PayloadType: PayloadN1SMInformation}); err == nil {
		t.Fatal("an empty payload container was built")
	}
}
