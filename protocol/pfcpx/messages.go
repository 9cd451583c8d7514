package pfcpx

import "github.com/free5gc/pfcp/pfcpType"

// The session messages' IEs (TS 29.244 7.5) as this user plane uses them.
// Field tags are IE types; an IE the struct does not list is skipped when
// read (TS 29.244 7.2.2.4.1: unknown optional IEs are ignored).

// SessionEstablishmentRequest is TS 29.244 7.5.2.
type SessionEstablishmentRequest struct {
	NodeID    *pfcpType.NodeID  `tlv:"60"`
	CPFSEID   *pfcpType.FSEID   `tlv:"57"`
	CreatePDR []*PDRIE          `tlv:"1"`
	CreateFAR []*CreateFAR      `tlv:"3"`
	CreateURR []*URRIE          `tlv:"6"`
	CreateQER []*QERIE          `tlv:"7"`
	PDNType   *pfcpType.PDNType `tlv:"113"`
}

// PDRIE is Create PDR (7.5.2.2) and Update PDR (7.5.4.2): the same IEs.
type PDRIE struct {
	PDRID              *pfcpType.PacketDetectionRuleID `tlv:"56"`
	Precedence         *pfcpType.Precedence            `tlv:"29"`
	PDI                *PDI                            `tlv:"2"`
	OuterHeaderRemoval *pfcpType.OuterHeaderRemoval    `tlv:"95"`
	FARID              *pfcpType.FARID                 `tlv:"108"`
	URRID              []*pfcpType.URRID               `tlv:"81"`
	QERID              []*pfcpType.QERID               `tlv:"109"`
}

// PDI is the packet detection information (7.5.2.2-2); it may hold
// several SDF Filters and QFIs.
type PDI struct {
	SourceInterface *pfcpType.SourceInterface `tlv:"20"`
	LocalFTEID      *pfcpType.FTEID           `tlv:"21"`
	NetworkInstance *NetworkInstance          `tlv:"22"`
	UEIPAddress     *pfcpType.UEIPAddress     `tlv:"93"`
	SDFFilter       []*pfcpType.SDFFilter     `tlv:"23"`
	QFI             []*pfcpType.QFI           `tlv:"124"`
}

// CreateFAR is 7.5.2.3.
type CreateFAR struct {
	FARID                *pfcpType.FARID       `tlv:"108"`
	ApplyAction          *pfcpType.ApplyAction `tlv:"44"`
	ForwardingParameters *ForwardingParameters `tlv:"4"`
}

// UpdateFAR is 7.5.4.3.
type UpdateFAR struct {
	FARID                      *pfcpType.FARID       `tlv:"108"`
	ApplyAction                *pfcpType.ApplyAction `tlv:"44"`
	UpdateForwardingParameters *ForwardingParameters `tlv:"11"`
}

// ForwardingParameters is 7.5.2.3-2 (and Update Forwarding Parameters,
// 7.5.4.3-2, for the IEs used here).
type ForwardingParameters struct {
	DestinationInterface *pfcpType.DestinationInterface `tlv:"42"`
	NetworkInstance      *NetworkInstance               `tlv:"22"`
	OuterHeaderCreation  *pfcpType.OuterHeaderCreation  `tlv:"84"`
	// PFCPSMReqFlags (Update Forwarding Parameters only, TS 29.244
	// 7.5.4.3-2): SNDEM asks for End Marker into the old tunnel.
	PFCPSMReqFlags *pfcpType.PFCPSMReqFlags `tlv:"49"`
}

// QERIE is Create QER (7.5.2.5) and Update QER (7.5.4.5).
type QERIE struct {
	QERID             *pfcpType.QERID      `tlv:"109"`
	GateStatus        *pfcpType.GateStatus `tlv:"25"`
	MaximumBitrate    *pfcpType.MBR        `tlv:"26"`
	GuaranteedBitrate *pfcpType.GBR        `tlv:"27"`
	QFI               *pfcpType.QFI        `tlv:"124"`
	// Weight is L25GC+'s vendor-specific QER weight (vendor.go); a slice,
	// so another enterprise's IE of the same type is read and passed over.
	Weight []*VendorIE `tlv:"32769"`
}

// URRIE is Create URR (7.5.2.4) and Update URR (7.5.4.4).
type URRIE struct {
	URRID             *pfcpType.URRID             `tlv:"81"`
	MeasurementMethod *pfcpType.MeasurementMethod `tlv:"62"`
	ReportingTriggers *pfcpType.ReportingTriggers `tlv:"37"`
	VolumeThreshold   *pfcpType.VolumeThreshold   `tlv:"31"`
}

// SessionEstablishmentResponse is 7.5.3.
type SessionEstablishmentResponse struct {
	NodeID       *pfcpType.NodeID       `tlv:"60"`
	Cause        *pfcpType.Cause        `tlv:"19"`
	OffendingIE  *pfcpType.OffendingIE  `tlv:"40"`
	UPFSEID      *pfcpType.FSEID        `tlv:"57"`
	CreatedPDR   []*CreatedPDR          `tlv:"8"`
	FailedRuleID *pfcpType.FailedRuleID `tlv:"114"`
}

// CreatedPDR is 7.5.3.2: the F-TEID UPF-C chose for a PDR.
type CreatedPDR struct {
	PDRID      *pfcpType.PacketDetectionRuleID `tlv:"56"`
	LocalFTEID *pfcpType.FTEID                 `tlv:"21"`
}

// SessionModificationRequest is 7.5.4.
type SessionModificationRequest struct {
	CPFSEID   *pfcpType.FSEID          `tlv:"57"`
	RemovePDR []*RemovePDR             `tlv:"15"`
	RemoveFAR []*RemoveFAR             `tlv:"16"`
	RemoveURR []*RemoveURR             `tlv:"17"`
	RemoveQER []*RemoveQER             `tlv:"18"`
	CreatePDR []*PDRIE                 `tlv:"1"`
	CreateFAR []*CreateFAR             `tlv:"3"`
	CreateURR []*URRIE                 `tlv:"6"`
	CreateQER []*QERIE                 `tlv:"7"`
	UpdatePDR []*PDRIE                 `tlv:"9"`
	UpdateFAR []*UpdateFAR             `tlv:"10"`
	UpdateURR []*URRIE                 `tlv:"13"`
	UpdateQER []*QERIE                 `tlv:"14"`
	QueryURR  []*RemoveURR             `tlv:"77"` // Query URR holds a URR ID, like Remove URR
	SMReqFlag *pfcpType.PFCPSMReqFlags `tlv:"49"`
}

// RemovePDR is 7.5.4.6.
type RemovePDR struct {
	PDRID *pfcpType.PacketDetectionRuleID `tlv:"56"`
}

// RemoveFAR is 7.5.4.7.
type RemoveFAR struct {
	FARID *pfcpType.FARID `tlv:"108"`
}

// RemoveURR is 7.5.4.8.
type RemoveURR struct {
	URRID *pfcpType.URRID `tlv:"81"`
}

// RemoveQER is 7.5.4.9.
type RemoveQER struct {
	QERID *pfcpType.QERID `tlv:"109"`
}

// SessionModificationResponse is 7.5.5.
type SessionModificationResponse struct {
	Cause        *pfcpType.Cause        `tlv:"19"`
	OffendingIE  *pfcpType.OffendingIE  `tlv:"40"`
	CreatedPDR   []*CreatedPDR          `tlv:"8"`
	UsageReport  []*UsageReport         `tlv:"78"`
	FailedRuleID *pfcpType.FailedRuleID `tlv:"114"`
}

// SessionDeletionRequest is 7.5.6: no IEs for this user plane.
type SessionDeletionRequest struct{}

// SessionDeletionResponse is 7.5.7.
type SessionDeletionResponse struct {
	Cause       *pfcpType.Cause       `tlv:"19"`
	OffendingIE *pfcpType.OffendingIE `tlv:"40"`
	UsageReport []*UsageReport        `tlv:"79"`
}

// UsageReport is 7.5.5.2 / 7.5.7.2 (the same IEs here).
type UsageReport struct {
	URRID              *pfcpType.URRID              `tlv:"81"`
	URSEQN             *pfcpType.URSEQN             `tlv:"104"`
	UsageReportTrigger *pfcpType.UsageReportTrigger `tlv:"63"`
	VolumeMeasurement  *pfcpType.VolumeMeasurement  `tlv:"66"`
}
