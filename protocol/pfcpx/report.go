package pfcpx

import (
	"fmt"

	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// Session Report (TS 29.244 7.5.8, 7.5.9): the UP function tells the CP
// function of a session's event; here a Downlink Data Report (the first
// downlink packet buffered for an idle UE, TS 23.502 4.2.3.3 step 2a) and
// usage reports.

// IE types of the Session Report messages (TS 29.244 Table 8.1.2-1).
const (
	IEReportType                     uint16 = 39
	IEDownlinkDataServiceInformation uint16 = 45
	IEPFCPSMReqFlags                 uint16 = 49
	IEUsageReportReport              uint16 = 80
	IEDownlinkDataReport             uint16 = 83
)

func init() {
	ieNames[IEReportType] = "Report Type"
	ieNames[IEDownlinkDataServiceInformation] = "Downlink Data Service Information"
	ieNames[IEPFCPSMReqFlags] = "PFCPSMReq-Flags"
	ieNames[IEUsageReportReport] = "Usage Report"
	ieNames[IEDownlinkDataReport] = "Downlink Data Report"
}

// SessionReportRequest is 7.5.8.
type SessionReportRequest struct {
	ReportType         *pfcpType.ReportType `tlv:"39"`
	DownlinkDataReport *DownlinkDataReport  `tlv:"83"`
	UsageReport        []*UsageReport       `tlv:"80"`
}

// DownlinkDataReport is 7.5.8.2: the PDRs that detected the buffered
// packets, with a Downlink Data Service Information per QoS flow when the
// UP function knows it.
type DownlinkDataReport struct {
	PDRID                          []*pfcpType.PacketDetectionRuleID          `tlv:"56"`
	DownlinkDataServiceInformation []*pfcpType.DownlinkDataServiceInformation `tlv:"45"`
}

// SessionReportResponse is 7.5.9 (the IEs this user plane uses).
type SessionReportResponse struct {
	Cause       *pfcpType.Cause       `tlv:"19"`
	OffendingIE *pfcpType.OffendingIE `tlv:"40"`
}

// ReportRequestOf is r as a Session Report Request: Report Type DLDR with
// the Downlink Data Report, USAR with the usage reports (TS 29.244
// 8.2.21). A report of nothing is an error.
func ReportRequestOf(r *rules.Report) (*SessionReportRequest, error) {
	req := &SessionReportRequest{ReportType: &pfcpType.ReportType{}}
	if d := r.DownlinkData; d != nil {
		if len(d.PDRIDs) == 0 {
			return nil, fmt.Errorf("downlink data report of session %#x names no PDR (TS 29.244 7.5.8.2: PDR ID is mandatory)", r.CPSEID)
		}
		req.ReportType.Dldr = true
		req.DownlinkDataReport = &DownlinkDataReport{}
		for _, id := range d.PDRIDs {
			req.DownlinkDataReport.PDRID = append(req.DownlinkDataReport.PDRID, &pfcpType.PacketDetectionRuleID{RuleId: id})
		}
		for _, q := range d.QFIs {
			if q > 63 {
				return nil, fmt.Errorf("downlink data report of session %#x: QFI %d does not fit 6 bits", r.CPSEID, q)
			}
			req.DownlinkDataReport.DownlinkDataServiceInformation = append(req.DownlinkDataReport.DownlinkDataServiceInformation,
				&pfcpType.DownlinkDataServiceInformation{Qfii: true, Qfi: q})
		}
	}
	if len(r.Usage) > 0 {
		req.ReportType.Usar = true
		req.UsageReport = UsageReportsOf(r.Usage, pfcpType.UsageReportTrigger{Volth: true}, 0)
	}
	if !req.ReportType.Dldr && !req.ReportType.Usar {
		return nil, fmt.Errorf("session report of session %#x reports nothing", r.CPSEID)
	}
	return req, nil
}

// ReportOf reads a Session Report Request about the session cpSEID (the
// header's SEID). A missing Report Type is cause 66, a Report Type that
// announces a report the request does not carry cause 69 naming it.
func ReportOf(cpSEID uint64, req *SessionReportRequest) (*rules.Report, error) {
	const where = "Session Report Request"
	if req.ReportType == nil {
		return nil, missing(IEReportType, where)
	}
	r := &rules.Report{CPSEID: cpSEID}
	if req.ReportType.Dldr {
		d, err := downlinkDataOf(req.DownlinkDataReport)
		if err != nil {
			return nil, err
		}
		r.DownlinkData = d
	}
	if req.ReportType.Usar {
		if len(req.UsageReport) == 0 {
			return nil, &Error{Cause: CauseConditionalIEMissing, OffendingIE: IEUsageReportReport, Detail: "Report Type USAR without a Usage Report"}
		}
		r.Usage = UsagesOf(req.UsageReport)
	}
	return r, nil
}

func downlinkDataOf(ie *DownlinkDataReport) (*rules.DownlinkDataReport, error) {
	if ie == nil {
		return nil, &Error{Cause: CauseConditionalIEMissing, OffendingIE: IEDownlinkDataReport, Detail: "Report Type DLDR without a Downlink Data Report"}
	}
	if len(ie.PDRID) == 0 {
		return nil, missing(IEPDRID, "Downlink Data Report")
	}
	d := &rules.DownlinkDataReport{}
	for _, p := range ie.PDRID {
		d.PDRIDs = append(d.PDRIDs, p.RuleId)
	}
	for _, s := range ie.DownlinkDataServiceInformation {
		if s.Qfii {
			d.QFIs = append(d.QFIs, s.Qfi)
		}
	}
	return d, nil
}

// ReportResponseOf is the Session Report Response with cause.
func ReportResponseOf(cause uint8) *SessionReportResponse {
	return &SessionReportResponse{Cause: &pfcpType.Cause{CauseValue: cause}}
}
