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

// putSessionTransfers writes the list shape both messages share: per
// session its ID and a transfer (RelCmd 9.2.1.3, RelRes 9.2.1.4).
func putSessionTransfers(w *perbits.Writer, n int, at func(i int) (id int64, transfer []byte, ext bool)) bool {
	if !putSessionCount(w, n) {
		return false
	}
	for i := 0; i < n; i++ {
		id, transfer, ext := at(i)
		if ext || id < 0 || id > 255 {
			return false
		}
		w.Bit(false)
		w.Bit(false)
		w.Constrained(uint64(id), 256)
		if !putOctets(w, transfer) {
			return false
		}
	}
	return true
}

// getSessionTransfers reads that shape, calling add for each session.
func getSessionTransfers(r *perbits.Reader, add func(id int64, transfer aper.OctetString)) {
	n := getSessionCount(r)
	for i := 0; i < n && !r.Failed(); i++ {
		noExt(r)
		noExt(r)
		id := int64(r.Constrained(256))
		add(id, getOctets(r))
	}
}

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
				return l != nil && putSessionTransfers(w, len(l.List), func(i int) (int64, []byte, bool) {
					return l.List[i].PDUSessionID.Value, l.List[i].PDUSessionResourceReleaseCommandTransfer, l.List[i].IEExtensions != nil
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
			list := &ngapType.PDUSessionResourceToReleaseListRelCmd{}
			getSessionTransfers(v, func(id int64, t aper.OctetString) {
				list.List = append(list.List, ngapType.PDUSessionResourceToReleaseItemRelCmd{PDUSessionID: ngapType.PDUSessionID{Value: id},
					PDUSessionResourceReleaseCommandTransfer: t})
			})
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
				return l != nil && putSessionTransfers(w, len(l.List), func(i int) (int64, []byte, bool) {
					return l.List[i].PDUSessionID.Value, l.List[i].PDUSessionResourceReleaseResponseTransfer, l.List[i].IEExtensions != nil
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
			list := &ngapType.PDUSessionResourceReleasedListRelRes{}
			getSessionTransfers(v, func(id int64, t aper.OctetString) {
				list.List = append(list.List, ngapType.PDUSessionResourceReleasedItemRelRes{PDUSessionID: ngapType.PDUSessionID{Value: id},
					PDUSessionResourceReleaseResponseTransfer: t})
			})
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
