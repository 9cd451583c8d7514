package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// Hand-written aligned PER for the two N2 SM transfers of every PDU
// session establishment (TS 23.502 4.3.2.2.1 steps 11 and 15): PDU Session
// Resource Setup Request Transfer (TS 38.413 9.3.4.1; the SMF writes it,
// the gNB reads it) and Setup Response Transfer (9.3.4.2; the gNB writes,
// the SMF reads), and the release's two (fast_pdu_release.go). marshalTransfer and unmarshalTransfer try these first;
// other transfers and shapes (extensions, Dynamic 5QI, security
// indication, …) stay with free5gc/aper. Same contract as fast_encode.go:
// the library's octets and values exactly (fast_transfer_test.go, fuzzed).

const (
	maxTLABits  = 160 // TransportLayerAddress ::= BIT STRING (SIZE(1..160, ...))
	maxQosFlows = 64  // maxnoofQosFlows
	pduTypes    = 5   // PDUSessionType: ipv4 .. unstructured, extensible
	arpLevels   = 15  // PriorityLevelARP ::= INTEGER (1..15)
)

// marshalTransferFast encodes v if it is a transfer of a covered shape.
func marshalTransferFast(v any) ([]byte, bool) {
	w := perbits.NewWriter(128)
	var ok bool
	switch t := v.(type) {
	case ngapType.PDUSessionResourceSetupRequestTransfer:
		ok = putSetupRequestTransfer(w, &t)
	case ngapType.PDUSessionResourceSetupResponseTransfer:
		ok = putSetupResponseTransfer(w, &t)
	case ngapType.PDUSessionResourceReleaseCommandTransfer:
		ok = putReleaseCommandTransfer(w, &t)
	case ngapType.PDUSessionResourceReleaseResponseTransfer:
		ok = putReleaseResponseTransfer(w, &t)
	}
	if !ok {
		return nil, false
	}
	return w.Bytes(), true
}

// unmarshalTransferFast decodes b into v if v is a covered transfer and b
// one of its covered shapes; v is untouched otherwise.
func unmarshalTransferFast(b []byte, v any) bool {
	r := perbits.NewReader(append([]byte(nil), b...)) // the library's values never share the caller's buffer
	switch t := v.(type) {
	case *ngapType.PDUSessionResourceSetupRequestTransfer:
		return getWhole(r, t, func(r *perbits.Reader) ngapType.PDUSessionResourceSetupRequestTransfer {
			return *getSetupRequestTransfer(r)
		})
	case *ngapType.PDUSessionResourceSetupResponseTransfer:
		return getWhole(r, t, getSetupResponseTransfer)
	case *ngapType.PDUSessionResourceReleaseCommandTransfer:
		return getWhole(r, t, getReleaseCommandTransfer)
	case *ngapType.PDUSessionResourceReleaseResponseTransfer:
		return getWhole(r, t, getReleaseResponseTransfer)
	}
	return false
}

// getWhole stores in *t what get reads from r, only if get read all of r
// without a failure: a partly read transfer leaves *t untouched.
func getWhole[T any](r *perbits.Reader, t *T, get func(r *perbits.Reader) T) bool {
	got := get(r)
	if r.Failed() || !r.Done() {
		return false
	}
	*t = got
	return true
}

// putTLA writes Transport Layer Address (9.3.2.4): its extensible size
// 1..160 as 8 bits, then the bits, octet-aligned.
func putTLA(w *perbits.Writer, a aper.BitString) bool {
	if a.BitLength < 1 || a.BitLength > maxTLABits || len(a.Bytes) != int(a.BitLength+7)/8 {
		return false
	}
	w.Bit(false)
	w.Constrained(a.BitLength-1, maxTLABits)
	w.FixedBits(a.Bytes, uint(a.BitLength))
	return true
}

func getTLA(r *perbits.Reader) aper.BitString {
	noExt(r)
	n := r.Constrained(maxTLABits) + 1
	if n > maxTLABits {
		r.Fail()
		return aper.BitString{}
	}
	return aper.BitString{Bytes: r.FixedBits(uint(n)), BitLength: n}
}

// putUPTNL writes UP Transport Layer Information (9.3.2.2): a GTP tunnel.
func putUPTNL(w *perbits.Writer, u *ngapType.UPTransportLayerInformation) bool {
	if u == nil || u.Present != ngapType.UPTransportLayerInformationPresentGTPTunnel || u.GTPTunnel == nil || u.GTPTunnel.IEExtensions != nil {
		return false
	}
	w.Constrained(uint64(u.Present-1), 2)
	w.Bit(false)
	w.Bit(false)
	return putTLA(w, u.GTPTunnel.TransportLayerAddress.Value) && putFixedOctets(w, u.GTPTunnel.GTPTEID.Value, 4)
}

func getUPTNL(r *perbits.Reader) ngapType.UPTransportLayerInformation {
	if int(r.Constrained(2))+1 != ngapType.UPTransportLayerInformationPresentGTPTunnel {
		r.Fail()
		return ngapType.UPTransportLayerInformation{}
	}
	noExt(r)
	noExt(r)
	g := &ngapType.GTPTunnel{}
	g.TransportLayerAddress.Value = getTLA(r)
	g.GTPTEID.Value = getFixedOctets(r, 4)
	return ngapType.UPTransportLayerInformation{Present: ngapType.UPTransportLayerInformationPresentGTPTunnel, GTPTunnel: g}
}

// putQFI writes QoS Flow Identifier (9.3.1.51): 0..63, extensible.
func putQFI(w *perbits.Writer, q int64) bool {
	if q < 0 || q >= maxQosFlows {
		return false
	}
	w.Bit(false)
	w.Constrained(uint64(q), maxQosFlows)
	return true
}

func getQFI(r *perbits.Reader) ngapType.QosFlowIdentifier {
	noExt(r)
	return ngapType.QosFlowIdentifier{Value: int64(r.Constrained(maxQosFlows))}
}

func putFlowCount(w *perbits.Writer, n int) bool {
	if n < 1 || n > maxQosFlows {
		return false
	}
	w.Constrained(uint64(n-1), maxQosFlows)
	return true
}

// putSetupResponseTransfer: TS 38.413 9.3.4.2, the DL tunnel and the
// flows it carries.
func putSetupResponseTransfer(w *perbits.Writer, t *ngapType.PDUSessionResourceSetupResponseTransfer) bool {
	dl := &t.DLQosFlowPerTNLInformation
	if t.AdditionalDLQosFlowPerTNLInformation != nil || t.SecurityResult != nil || t.QosFlowFailedToSetupList != nil ||
		t.IEExtensions != nil || dl.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bits(0, 4) // no optional IE
	w.Bit(false) // DL QoS Flow per TNL Information
	w.Bit(false)
	if !putUPTNL(w, &dl.UPTransportLayerInformation) || !putFlowCount(w, len(dl.AssociatedQosFlowList.List)) {
		return false
	}
	for i := range dl.AssociatedQosFlowList.List {
		it := &dl.AssociatedQosFlowList.List[i]
		if it.QosFlowMappingIndication != nil || it.IEExtensions != nil {
			return false
		}
		w.Bit(false)
		w.Bits(0, 2)
		if !putQFI(w, it.QosFlowIdentifier.Value) {
			return false
		}
	}
	return true
}

func getSetupResponseTransfer(r *perbits.Reader) ngapType.PDUSessionResourceSetupResponseTransfer {
	var t ngapType.PDUSessionResourceSetupResponseTransfer
	noExt(r)
	if r.Bits(4) != 0 {
		r.Fail()
	}
	noExt(r)
	noExt(r)
	dl := &t.DLQosFlowPerTNLInformation
	dl.UPTransportLayerInformation = getUPTNL(r)
	dl.AssociatedQosFlowList.List = make([]ngapType.AssociatedQosFlowItem, int(r.Constrained(maxQosFlows))+1)
	for i := range dl.AssociatedQosFlowList.List {
		noExt(r)
		if r.Bits(2) != 0 {
			r.Fail()
		}
		dl.AssociatedQosFlowList.List[i].QosFlowIdentifier = getQFI(r)
	}
	return t
}
