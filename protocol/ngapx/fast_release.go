package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// The fast path for UE Context Release (TS 38.413 8.3.2-8.3.3): the
// gNB's request, the AMF's command and the gNB's completion, sent at every
// AN release (TS 23.502 4.2.6) and deregistration. Same contract as
// fast_encode.go.

// causeRoots is the number of root values of each Cause group
// (TS 38.413 9.3.1.2), indexed by Cause.Present.
var causeRoots = [...]uint64{
	ngapType.CausePresentRadioNetwork: 47,
	ngapType.CausePresentTransport:    2,
	ngapType.CausePresentNas:          4,
	ngapType.CausePresentProtocol:     7,
	ngapType.CausePresentMisc:         6,
}

// causeValue is the enumerated value of the group c.Present names, or
// false if it is absent.
func causeValue(c *ngapType.Cause) (aper.Enumerated, bool) {
	switch {
	case c.Present == ngapType.CausePresentRadioNetwork && c.RadioNetwork != nil:
		return c.RadioNetwork.Value, true
	case c.Present == ngapType.CausePresentTransport && c.Transport != nil:
		return c.Transport.Value, true
	case c.Present == ngapType.CausePresentNas && c.Nas != nil:
		return c.Nas.Value, true
	case c.Present == ngapType.CausePresentProtocol && c.Protocol != nil:
		return c.Protocol.Value, true
	case c.Present == ngapType.CausePresentMisc && c.Misc != nil:
		return c.Misc.Value, true
	}
	return 0, false
}

// putCause writes Cause (9.3.1.2): the group (a choice of 6 without an
// extension marker), then its root value.
func putCause(w *perbits.Writer, c *ngapType.Cause) bool {
	if c == nil {
		return false
	}
	v, ok := causeValue(c)
	if !ok {
		return false
	}
	w.Constrained(uint64(c.Present-1), 6)
	return putRootEnum(w, v, causeRoots[c.Present])
}

func getCause(r *perbits.Reader) *ngapType.Cause {
	present := int(r.Constrained(6)) + 1
	if present < ngapType.CausePresentRadioNetwork || present > ngapType.CausePresentMisc {
		r.Fail()
		return nil
	}
	c := causeOf(present, getRootEnum(r, causeRoots[present]))
	return &c
}

// causeOf is the Cause of group (a CausePresent value; anything past
// Protocol is Misc) with value v: the inverse of causeValue.
func causeOf(group int, v aper.Enumerated) ngapType.Cause {
	c := ngapType.Cause{Present: group}
	switch group {
	case ngapType.CausePresentRadioNetwork:
		c.RadioNetwork = &ngapType.CauseRadioNetwork{Value: v}
	case ngapType.CausePresentTransport:
		c.Transport = &ngapType.CauseTransport{Value: v}
	case ngapType.CausePresentNas:
		c.Nas = &ngapType.CauseNas{Value: v}
	case ngapType.CausePresentProtocol:
		c.Protocol = &ngapType.CauseProtocol{Value: v}
	default:
		c.Misc = &ngapType.CauseMisc{Value: v}
	}
	return c
}

// putUENGAPIDs writes UE NGAP IDs (9.3.3.x): the pair or the AMF's ID alone.
func putUENGAPIDs(w *perbits.Writer, u *ngapType.UENGAPIDs) bool {
	if u == nil {
		return false
	}
	switch {
	case u.Present == ngapType.UENGAPIDsPresentUENGAPIDPair && u.UENGAPIDPair != nil && u.UENGAPIDPair.IEExtensions == nil:
		w.Constrained(uint64(u.Present-1), 3)
		w.Bit(false)
		w.Bit(false)
		return putAMFUEID(w, &u.UENGAPIDPair.AMFUENGAPID) && putRANUEID(w, &u.UENGAPIDPair.RANUENGAPID)
	case u.Present == ngapType.UENGAPIDsPresentAMFUENGAPID:
		w.Constrained(uint64(u.Present-1), 3)
		return putAMFUEID(w, u.AMFUENGAPID)
	}
	return false
}

func getUENGAPIDs(r *perbits.Reader) *ngapType.UENGAPIDs {
	switch present := int(r.Constrained(3)) + 1; present {
	case ngapType.UENGAPIDsPresentUENGAPIDPair:
		noExt(r)
		noExt(r)
		p := &ngapType.UENGAPIDPair{AMFUENGAPID: *getAMFUEID(r)}
		p.RANUENGAPID = *getRANUEID(r)
		return &ngapType.UENGAPIDs{Present: present, UENGAPIDPair: p}
	case ngapType.UENGAPIDsPresentAMFUENGAPID:
		return &ngapType.UENGAPIDs{Present: present, AMFUENGAPID: getAMFUEID(r)}
	}
	r.Fail()
	return nil
}

// putUEContextReleaseRequest: TS 38.413 9.2.3.4.
func putUEContextReleaseRequest(w *perbits.Writer, m *ngapType.UEContextReleaseRequest) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseRequestIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.UEContextReleaseRequestIEsPresentPDUSessionResourceListCxtRelReq:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceListCxtRelReq, func() bool {
				l := v.PDUSessionResourceListCxtRelReq
				return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceItemCxtRelReq) bool {
					return it.IEExtensions == nil && putSessionID(w, it.PDUSessionID.Value)
				})
			}
		case ngapType.UEContextReleaseRequestIEsPresentCause:
			want, put = ngapType.ProtocolIEIDCause, func() bool { return putCause(w, v.Cause) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getUEContextReleaseRequest(r *perbits.Reader) *ngapType.UEContextReleaseRequest {
	m := &ngapType.UEContextReleaseRequest{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseRequestIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDPDUSessionResourceListCxtRelReq:
			list := &ngapType.PDUSessionResourceListCxtRelReq{List: getSessionList(v, func(it *ngapType.PDUSessionResourceItemCxtRelReq) {
				it.PDUSessionID.Value = getSessionID(v)
			})}
			x.Present, x.PDUSessionResourceListCxtRelReq = ngapType.UEContextReleaseRequestIEsPresentPDUSessionResourceListCxtRelReq, list
		case ngapType.ProtocolIEIDCause:
			x.Present, x.Cause = ngapType.UEContextReleaseRequestIEsPresentCause, getCause(v)
		default:
			return false
		}
		return true
	})
	return m
}

// putUEContextReleaseCommand: TS 38.413 9.2.3.5.
func putUEContextReleaseCommand(w *perbits.Writer, m *ngapType.UEContextReleaseCommand) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseCommandIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.UEContextReleaseCommandIEsPresentUENGAPIDs:
			want, put = ngapType.ProtocolIEIDUENGAPIDs, func() bool { return putUENGAPIDs(w, v.UENGAPIDs) }
		case ngapType.UEContextReleaseCommandIEsPresentCause:
			want, put = ngapType.ProtocolIEIDCause, func() bool { return putCause(w, v.Cause) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getUEContextReleaseCommand(r *perbits.Reader) *ngapType.UEContextReleaseCommand {
	m := &ngapType.UEContextReleaseCommand{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseCommandIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDUENGAPIDs:
			x.Present, x.UENGAPIDs = ngapType.UEContextReleaseCommandIEsPresentUENGAPIDs, getUENGAPIDs(v)
		case ngapType.ProtocolIEIDCause:
			x.Present, x.Cause = ngapType.UEContextReleaseCommandIEsPresentCause, getCause(v)
		default:
			return false
		}
		return true
	})
	return m
}

// putUEContextReleaseComplete: TS 38.413 9.2.3.6, with the sessions
// released but without location or paging recommendations.
func putUEContextReleaseComplete(w *perbits.Writer, m *ngapType.UEContextReleaseComplete) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseCompleteIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.UEContextReleaseCompleteIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.UEContextReleaseCompleteIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.UEContextReleaseCompleteIEsPresentPDUSessionResourceListCxtRelCpl:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceListCxtRelCpl, func() bool {
				l := v.PDUSessionResourceListCxtRelCpl
				return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceItemCxtRelCpl) bool {
					return it.IEExtensions == nil && putSessionID(w, it.PDUSessionID.Value)
				})
			}
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getUEContextReleaseComplete(r *perbits.Reader) *ngapType.UEContextReleaseComplete {
	m := &ngapType.UEContextReleaseComplete{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.UEContextReleaseCompleteIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.UEContextReleaseCompleteIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.UEContextReleaseCompleteIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDPDUSessionResourceListCxtRelCpl:
			list := &ngapType.PDUSessionResourceListCxtRelCpl{List: getSessionList(v, func(it *ngapType.PDUSessionResourceItemCxtRelCpl) {
				it.PDUSessionID.Value = getSessionID(v)
			})}
			x.Present, x.PDUSessionResourceListCxtRelCpl = ngapType.UEContextReleaseCompleteIEsPresentPDUSessionResourceListCxtRelCpl, list
		default:
			return false
		}
		return true
	})
	return m
}
