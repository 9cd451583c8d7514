package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// The fast path for the messages on a lone paging's way (TS 23.502
// 4.2.3.3: Paging, then the Service Request's Initial Context Setup with
// sessions): Paging (TS 38.413 9.2.4.1) and the sessions set up in Initial
// Context Setup Response (9.2.2.2). Same contract as fast_encode.go.

const (
	maxPagingTAIs = 16 // maxnoofTAIforPaging
	pagingDRXs    = 4  // PagingDRX: v32 .. v256, extensible
	pagingLevels  = 8  // PagingPriority: 8 levels, extensible
)

// putPaging: TS 38.413 9.2.4.1.
func putPaging(w *perbits.Writer, m *ngapType.Paging) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.PagingIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PagingIEsPresentUEPagingIdentity:
			want, put = ngapType.ProtocolIEIDUEPagingIdentity, func() bool { return putPagingIdentity(w, v.UEPagingIdentity) }
		case ngapType.PagingIEsPresentPagingDRX:
			want, put = ngapType.ProtocolIEIDPagingDRX, func() bool { return v.PagingDRX != nil && putRootEnum(w, v.PagingDRX.Value, pagingDRXs) }
		case ngapType.PagingIEsPresentTAIListForPaging:
			want, put = ngapType.ProtocolIEIDTAIListForPaging, func() bool { return putPagingTAIs(w, v.TAIListForPaging) }
		case ngapType.PagingIEsPresentPagingPriority:
			want, put = ngapType.ProtocolIEIDPagingPriority, func() bool { return v.PagingPriority != nil && putRootEnum(w, v.PagingPriority.Value, pagingLevels) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getPaging(r *perbits.Reader) *ngapType.Paging {
	m := &ngapType.Paging{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.PagingIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDUEPagingIdentity:
			x.Present, x.UEPagingIdentity = ngapType.PagingIEsPresentUEPagingIdentity, getPagingIdentity(v)
		case ngapType.ProtocolIEIDPagingDRX:
			x.Present, x.PagingDRX = ngapType.PagingIEsPresentPagingDRX, &ngapType.PagingDRX{Value: getRootEnum(v, pagingDRXs)}
		case ngapType.ProtocolIEIDTAIListForPaging:
			x.Present, x.TAIListForPaging = ngapType.PagingIEsPresentTAIListForPaging, getPagingTAIs(v)
		case ngapType.ProtocolIEIDPagingPriority:
			x.Present, x.PagingPriority = ngapType.PagingIEsPresentPagingPriority, &ngapType.PagingPriority{Value: getRootEnum(v, pagingLevels)}
		default:
			return false
		}
		return true
	})
	return m
}

// putRootEnum writes an extensible ENUMERATED of n root values with a root value.
func putRootEnum(w *perbits.Writer, v aper.Enumerated, n uint64) bool {
	if uint64(v) >= n {
		return false
	}
	w.Bit(false)
	w.Constrained(uint64(v), n)
	return true
}

func getRootEnum(r *perbits.Reader, n uint64) aper.Enumerated {
	noExt(r)
	v := r.Constrained(n)
	if v >= n {
		r.Fail()
	}
	return aper.Enumerated(v)
}

// putPagingIdentity writes UE Paging Identity (9.3.3.18): the 5G-S-TMSI.
func putPagingIdentity(w *perbits.Writer, p *ngapType.UEPagingIdentity) bool {
	if p == nil || p.Present != ngapType.UEPagingIdentityPresentFiveGSTMSI {
		return false
	}
	w.Constrained(uint64(p.Present-1), 2)
	return putFiveGSTMSI(w, p.FiveGSTMSI)
}

func getPagingIdentity(r *perbits.Reader) *ngapType.UEPagingIdentity {
	if int(r.Constrained(2))+1 != ngapType.UEPagingIdentityPresentFiveGSTMSI {
		r.Fail()
	}
	return &ngapType.UEPagingIdentity{Present: ngapType.UEPagingIdentityPresentFiveGSTMSI, FiveGSTMSI: getFiveGSTMSI(r)}
}

// putPagingTAIs writes TAI List for Paging (9.3.3.21): 1..16 TAIs.
func putPagingTAIs(w *perbits.Writer, l *ngapType.TAIListForPaging) bool {
	if l == nil || len(l.List) < 1 || len(l.List) > maxPagingTAIs {
		return false
	}
	w.Constrained(uint64(len(l.List)-1), maxPagingTAIs)
	for i := range l.List {
		it := &l.List[i]
		if it.IEExtensions != nil || it.TAI.IEExtensions != nil {
			return false
		}
		w.Bit(false)
		w.Bit(false)
		w.Bit(false) // TAI
		w.Bit(false)
		if !putFixedOctets(w, it.TAI.PLMNIdentity.Value, 3) || !putFixedOctets(w, it.TAI.TAC.Value, 3) {
			return false
		}
	}
	return true
}

func getPagingTAIs(r *perbits.Reader) *ngapType.TAIListForPaging {
	l := &ngapType.TAIListForPaging{List: make([]ngapType.TAIListForPagingItem, int(r.Constrained(maxPagingTAIs))+1)}
	for i := range l.List {
		noExt(r)
		noExt(r)
		noExt(r)
		noExt(r)
		l.List[i].TAI.PLMNIdentity.Value = getFixedOctets(r, 3)
		l.List[i].TAI.TAC.Value = getFixedOctets(r, 3)
	}
	return l
}

// putSetupListCxtRes writes PDU Session Resource Setup List Cxt Res
// (9.2.2.2): per session its ID and the gNB's response transfer.
func putSetupListCxtRes(w *perbits.Writer, l *ngapType.PDUSessionResourceSetupListCxtRes) bool {
	return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceSetupItemCxtRes) bool {
		return it.IEExtensions == nil && putSessionTransfer(w, it.PDUSessionID.Value, it.PDUSessionResourceSetupResponseTransfer)
	})
}

func getSetupListCxtRes(r *perbits.Reader) *ngapType.PDUSessionResourceSetupListCxtRes {
	return &ngapType.PDUSessionResourceSetupListCxtRes{List: getSessionList(r, func(it *ngapType.PDUSessionResourceSetupItemCxtRes) {
		it.PDUSessionID.Value, it.PDUSessionResourceSetupResponseTransfer = getSessionTransfer(r)
	})}
}
