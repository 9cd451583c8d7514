package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// The fast path for PDU Session Resource Release (TS 38.413 8.2.2; the
// N2 side of TS 23.502 4.3.4.2): the AMF's command, the gNB's response,
// and the two transfers inside them (9.3.4.12, 9.3.4.21). Same contract as
// fast_encode.go.

// putPDUSessionResourceReleaseCommand: TS 38.413 9.2.1.3.
func putPDUSessionResourceReleaseCommand(w *perbits.Writer, m *ngapType.PDUSessionResourceReleaseCommand) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceReleaseCommandIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PDUSessionResourceReleaseCommandIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.PDUSessionResourceReleaseCommandIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.PDUSessionResourceReleaseCommandIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		case ngapType.PDUSessionResourceReleaseCommandIEsPresentPDUSessionResourceToReleaseListRelCmd:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceToReleaseListRelCmd, func() bool {
				l := v.PDUSessionResourceToReleaseListRelCmd
				return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceToReleaseItemRelCmd) bool {
					return it.IEExtensions == nil && putSessionTransfer(w, it.PDUSessionID.Value, it.PDUSessionResourceReleaseCommandTransfer)
				})
			}
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getPDUSessionResourceReleaseCommand(r *perbits.Reader) *ngapType.PDUSessionResourceReleaseCommand {
	m := &ngapType.PDUSessionResourceReleaseCommand{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceReleaseCommandIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.PDUSessionResourceReleaseCommandIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.PDUSessionResourceReleaseCommandIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.PDUSessionResourceReleaseCommandIEsPresentNASPDU, getNASPDU(v)
		case ngapType.ProtocolIEIDPDUSessionResourceToReleaseListRelCmd:
			list := &ngapType.PDUSessionResourceToReleaseListRelCmd{List: getSessionList(v, func(it *ngapType.PDUSessionResourceToReleaseItemRelCmd) {
				it.PDUSessionID.Value, it.PDUSessionResourceReleaseCommandTransfer = getSessionTransfer(v)
			})}
			x.Present, x.PDUSessionResourceToReleaseListRelCmd = ngapType.PDUSessionResourceReleaseCommandIEsPresentPDUSessionResourceToReleaseListRelCmd, list
		default:
			return false
		}
		return true
	})
	return m
}

// putPDUSessionResourceReleaseResponse: TS 38.413 9.2.1.4.
func putPDUSessionResourceReleaseResponse(w *perbits.Writer, m *ngapType.PDUSessionResourceReleaseResponse) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceReleaseResponseIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PDUSessionResourceReleaseResponseIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.PDUSessionResourceReleaseResponseIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.PDUSessionResourceReleaseResponseIEsPresentPDUSessionResourceReleasedListRelRes:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceReleasedListRelRes, func() bool {
				l := v.PDUSessionResourceReleasedListRelRes
				return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceReleasedItemRelRes) bool {
					return it.IEExtensions == nil && putSessionTransfer(w, it.PDUSessionID.Value, it.PDUSessionResourceReleaseResponseTransfer)
				})
			}
		case ngapType.PDUSessionResourceReleaseResponseIEsPresentUserLocationInformation:
			want, put = ngapType.ProtocolIEIDUserLocationInformation, func() bool { return putUserLocation(w, v.UserLocationInformation) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

func getPDUSessionResourceReleaseResponse(r *perbits.Reader) *ngapType.PDUSessionResourceReleaseResponse {
	m := &ngapType.PDUSessionResourceReleaseResponse{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceReleaseResponseIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.PDUSessionResourceReleaseResponseIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.PDUSessionResourceReleaseResponseIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDPDUSessionResourceReleasedListRelRes:
			list := &ngapType.PDUSessionResourceReleasedListRelRes{List: getSessionList(v, func(it *ngapType.PDUSessionResourceReleasedItemRelRes) {
				it.PDUSessionID.Value, it.PDUSessionResourceReleaseResponseTransfer = getSessionTransfer(v)
			})}
			x.Present, x.PDUSessionResourceReleasedListRelRes = ngapType.PDUSessionResourceReleaseResponseIEsPresentPDUSessionResourceReleasedListRelRes, list
		case ngapType.ProtocolIEIDUserLocationInformation:
			x.Present, x.UserLocationInformation = ngapType.PDUSessionResourceReleaseResponseIEsPresentUserLocationInformation, getUserLocation(v)
		default:
			return false
		}
		return true
	})
	return m
}

// putReleaseCommandTransfer writes PDU Session Resource Release Command
// Transfer (9.3.4.12): the cause.
func putReleaseCommandTransfer(w *perbits.Writer, t *ngapType.PDUSessionResourceReleaseCommandTransfer) bool {
	if t.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putCause(w, &t.Cause)
}

func getReleaseCommandTransfer(r *perbits.Reader) ngapType.PDUSessionResourceReleaseCommandTransfer {
	noExt(r)
	noExt(r)
	var t ngapType.PDUSessionResourceReleaseCommandTransfer
	if c := getCause(r); c != nil {
		t.Cause = *c
	}
	return t
}

// putReleaseResponseTransfer writes PDU Session Resource Release Response
// Transfer (9.3.4.21), empty but for its extension bits.
func putReleaseResponseTransfer(w *perbits.Writer, t *ngapType.PDUSessionResourceReleaseResponseTransfer) bool {
	if t.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return true
}

func getReleaseResponseTransfer(r *perbits.Reader) ngapType.PDUSessionResourceReleaseResponseTransfer {
	noExt(r)
	noExt(r)
	return ngapType.PDUSessionResourceReleaseResponseTransfer{}
}
