package pfcpx

import (
	"testing"

	"github.com/free5gc/pfcp"

	"github.com/l25gc/l25gc/upf/rules"
)

// FuzzDecode: bytes from the network never panic the decoder, and what
// decodes converts to rules or to a cause without panicking either.
func FuzzDecode(f *testing.F) {
	body, err := EstablishmentRequestOf(smfAddr, aSession())
	if err != nil {
		f.Fatal(err)
	}
	report, err := ReportRequestOf(&rules.Report{DownlinkData: &rules.DownlinkDataReport{PDRIDs: []uint16{2}, QFIs: []uint8{9}}})
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range []*Message{
		{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: 5, SequenceNumber: 3}, Body: report},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, SequenceNumber: 1}, Body: body},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_HEARTBEAT_REQUEST, SequenceNumber: 2}, Body: &pfcp.HeartbeatRequest{}},
	} {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		switch body := m.Body.(type) {
		case *SessionEstablishmentRequest:
			_, _ = SessionOf(body)
		case *SessionModificationRequest:
			_, _ = RulesOf(body.CreatePDR, body.CreateFAR, body.CreateQER, body.CreateURR)
		case *SessionEstablishmentResponse:
			_, _ = EstablishedOf(body)
		case *SessionDeletionResponse:
			_ = UsagesOf(body.UsageReport)
		case *SessionReportRequest:
			_, _ = ReportOf(m.Header.SEID, body)
		}
	})
}
