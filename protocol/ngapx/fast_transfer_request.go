package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// PDU Session Resource Setup Request Transfer (TS 38.413 9.3.4.1) by hand:
// Session-AMBR, UL tunnel, PDU session type and QoS flows with a
// non-dynamic 5QI, ARP and, for GBR flows, the four bit rates.

func putSetupRequestTransfer(w *perbits.Writer, t *ngapType.PDUSessionResourceSetupRequestTransfer) bool {
	return putIEs(w, t.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupRequestTransferIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate:
			want, put = ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate, func() bool { return putSessionAMBR(w, v.PDUSessionAggregateMaximumBitRate) }
		case ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation:
			want, put = ngapType.ProtocolIEIDULNGUUPTNLInformation, func() bool { return putUPTNL(w, v.ULNGUUPTNLInformation) }
		case ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType:
			want, put = ngapType.ProtocolIEIDPDUSessionType, func() bool { return putPDUSessionType(w, v.PDUSessionType) }
		case ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList:
			want, put = ngapType.ProtocolIEIDQosFlowSetupRequestList, func() bool { return putFlowSetupList(w, v.QosFlowSetupRequestList) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getSetupRequestTransfer(r *perbits.Reader) *ngapType.PDUSessionResourceSetupRequestTransfer {
	t := &ngapType.PDUSessionResourceSetupRequestTransfer{}
	getIEs(r, &t.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupRequestTransferIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate:
			x.Present, x.PDUSessionAggregateMaximumBitRate = ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate, getSessionAMBR(v)
		case ngapType.ProtocolIEIDULNGUUPTNLInformation:
			u := getUPTNL(v)
			x.Present, x.ULNGUUPTNLInformation = ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation, &u
		case ngapType.ProtocolIEIDPDUSessionType:
			x.Present, x.PDUSessionType = ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType, getPDUSessionType(v)
		case ngapType.ProtocolIEIDQosFlowSetupRequestList:
			x.Present, x.QosFlowSetupRequestList = ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList, getFlowSetupList(v)
		default:
			return false
		}
		return true
	})
	return t
}

// putSessionAMBR writes PDU Session Aggregate Maximum Bit Rate (9.3.1.102).
func putSessionAMBR(w *perbits.Writer, a *ngapType.PDUSessionAggregateMaximumBitRate) bool {
	if a == nil || a.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putBitRate(w, a.PDUSessionAggregateMaximumBitRateDL.Value) && putBitRate(w, a.PDUSessionAggregateMaximumBitRateUL.Value)
}

func getSessionAMBR(r *perbits.Reader) *ngapType.PDUSessionAggregateMaximumBitRate {
	noExt(r)
	noExt(r)
	dl := getBitRate(r)
	return &ngapType.PDUSessionAggregateMaximumBitRate{PDUSessionAggregateMaximumBitRateDL: dl, PDUSessionAggregateMaximumBitRateUL: getBitRate(r)}
}

// putPDUSessionType writes PDU Session Type (9.3.1.52), root values only.
func putPDUSessionType(w *perbits.Writer, p *ngapType.PDUSessionType) bool {
	return p != nil && putRootEnum(w, p.Value, pduTypes)
}

func getPDUSessionType(r *perbits.Reader) *ngapType.PDUSessionType {
	return &ngapType.PDUSessionType{Value: getRootEnum(r, pduTypes)}
}

// putFlowSetupList writes QoS Flow Setup Request List (9.3.1.12 items).
func putFlowSetupList(w *perbits.Writer, l *ngapType.QosFlowSetupRequestList) bool {
	if l == nil || !putFlowCount(w, len(l.List)) {
		return false
	}
	for i := range l.List {
		it := &l.List[i]
		if it.ERABID != nil || it.IEExtensions != nil {
			return false
		}
		w.Bit(false)
		w.Bits(0, 2)
		if !putQFI(w, it.QosFlowIdentifier.Value) || !putFlowParameters(w, &it.QosFlowLevelQosParameters) {
			return false
		}
	}
	return true
}

func getFlowSetupList(r *perbits.Reader) *ngapType.QosFlowSetupRequestList {
	l := &ngapType.QosFlowSetupRequestList{List: make([]ngapType.QosFlowSetupRequestItem, int(r.Constrained(maxQosFlows))+1)}
	for i := range l.List {
		it := &l.List[i]
		noExt(r)
		if r.Bits(2) != 0 {
			r.Fail()
		}
		it.QosFlowIdentifier = getQFI(r)
		it.QosFlowLevelQosParameters = getFlowParameters(r)
	}
	return l
}

// putFlowParameters writes QoS Flow Level QoS Parameters (9.3.1.12).
func putFlowParameters(w *perbits.Writer, p *ngapType.QosFlowLevelQosParameters) bool {
	if p.ReflectiveQosAttribute != nil || p.AdditionalQosFlowInformation != nil || p.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(p.GBRQosInformation != nil)
	w.Bits(0, 3)
	return putNonDynamic5QI(w, &p.QosCharacteristics) && putARP(w, &p.AllocationAndRetentionPriority) &&
		(p.GBRQosInformation == nil || putGBR(w, p.GBRQosInformation))
}

func getFlowParameters(r *perbits.Reader) ngapType.QosFlowLevelQosParameters {
	var p ngapType.QosFlowLevelQosParameters
	noExt(r)
	hasGBR := r.Bit()
	if r.Bits(3) != 0 {
		r.Fail()
	}
	p.QosCharacteristics = getNonDynamic5QI(r)
	p.AllocationAndRetentionPriority = getARP(r)
	if hasGBR {
		p.GBRQosInformation = getGBR(r)
	}
	return p
}

// putNonDynamic5QI writes QoS Characteristics (9.3.1.15) as a standardized
// 5QI with no overrides.
func putNonDynamic5QI(w *perbits.Writer, c *ngapType.QosCharacteristics) bool {
	d := c.NonDynamic5QI
	if c.Present != ngapType.QosCharacteristicsPresentNonDynamic5QI || d == nil || d.PriorityLevelQos != nil ||
		d.AveragingWindow != nil || d.MaximumDataBurstVolume != nil || d.IEExtensions != nil || d.FiveQI.Value < 0 || d.FiveQI.Value > 255 {
		return false
	}
	w.Constrained(uint64(c.Present-1), 3)
	w.Bit(false)
	w.Bits(0, 4)
	w.Bit(false) // FiveQI's extension bit
	w.Constrained(uint64(d.FiveQI.Value), 256)
	return true
}

func getNonDynamic5QI(r *perbits.Reader) ngapType.QosCharacteristics {
	if int(r.Constrained(3))+1 != ngapType.QosCharacteristicsPresentNonDynamic5QI {
		r.Fail()
	}
	noExt(r)
	if r.Bits(4) != 0 {
		r.Fail()
	}
	noExt(r)
	d := &ngapType.NonDynamic5QIDescriptor{FiveQI: ngapType.FiveQI{Value: int64(r.Constrained(256))}}
	return ngapType.QosCharacteristics{Present: ngapType.QosCharacteristicsPresentNonDynamic5QI, NonDynamic5QI: d}
}

// putARP writes Allocation and Retention Priority (9.3.1.19).
func putARP(w *perbits.Writer, a *ngapType.AllocationAndRetentionPriority) bool {
	if a.IEExtensions != nil || a.PriorityLevelARP.Value < 1 || a.PriorityLevelARP.Value > arpLevels ||
		a.PreEmptionCapability.Value > 1 || a.PreEmptionVulnerability.Value > 1 {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	w.Constrained(uint64(a.PriorityLevelARP.Value-1), arpLevels)
	w.Bit(false)
	w.Bits(uint64(a.PreEmptionCapability.Value), 1)
	w.Bit(false)
	w.Bits(uint64(a.PreEmptionVulnerability.Value), 1)
	return true
}

func getARP(r *perbits.Reader) ngapType.AllocationAndRetentionPriority {
	var a ngapType.AllocationAndRetentionPriority
	noExt(r)
	noExt(r)
	a.PriorityLevelARP.Value = int64(r.Constrained(arpLevels)) + 1
	noExt(r)
	a.PreEmptionCapability.Value = aper.Enumerated(r.Bits(1))
	noExt(r)
	a.PreEmptionVulnerability.Value = aper.Enumerated(r.Bits(1))
	return a
}

// putGBR writes GBR QoS Flow Information (9.3.1.20): MFBR and GFBR.
func putGBR(w *perbits.Writer, g *ngapType.GBRQosInformation) bool {
	if g.NotificationControl != nil || g.MaximumPacketLossRateDL != nil || g.MaximumPacketLossRateUL != nil || g.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bits(0, 4)
	return putBitRate(w, g.MaximumFlowBitRateDL.Value) && putBitRate(w, g.MaximumFlowBitRateUL.Value) &&
		putBitRate(w, g.GuaranteedFlowBitRateDL.Value) && putBitRate(w, g.GuaranteedFlowBitRateUL.Value)
}

func getGBR(r *perbits.Reader) *ngapType.GBRQosInformation {
	noExt(r)
	if r.Bits(4) != 0 {
		r.Fail()
	}
	g := &ngapType.GBRQosInformation{}
	g.MaximumFlowBitRateDL = getBitRate(r)
	g.MaximumFlowBitRateUL = getBitRate(r)
	g.GuaranteedFlowBitRateDL = getBitRate(r)
	g.GuaranteedFlowBitRateUL = getBitRate(r)
	return g
}
