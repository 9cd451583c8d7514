package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// Hand-written aligned-PER decoders of the IEs of the hot messages, the
// mirror of fast_ies.go: each fills the same Go value ngap.Decoder would.
// They are stricter than the library: an extension bit or an IE extension
// that is set, a value beyond the root range, fails the reader, and the
// caller hands the whole PDU to the library, which decodes it or gives the
// error. Strictness can only cost speed, never a different result.

// noExt reads an extension bit or an iE-Extensions presence bit, which the
// fast path covers only as absent.
func noExt(r *perbits.Reader) {
	if r.Bit() {
		r.Fail()
	}
}

// getLarge reads a constrained whole number of a range above 64K
// (X.691 10.5.7.4) and fails the reader above max.
func getLarge(r *perbits.Reader, lenBits uint, max uint64) int64 {
	n := uint(r.Bits(lenBits)) + 1
	r.Align()
	v := r.Bits(n * 8)
	if v > max {
		r.Fail()
		return 0
	}
	return int64(v)
}

func getAMFUEID(r *perbits.Reader) *ngapType.AMFUENGAPID {
	return &ngapType.AMFUENGAPID{Value: getLarge(r, 3, maxAMFUEID)}
}

func getRANUEID(r *perbits.Reader) *ngapType.RANUENGAPID {
	return &ngapType.RANUENGAPID{Value: getLarge(r, 2, maxRANUEID)}
}

func getBitRate(r *perbits.Reader) ngapType.BitRate {
	noExt(r)
	return ngapType.BitRate{Value: getLarge(r, 3, maxBitRate)}
}

// getOctets reads an OCTET STRING without a size constraint; empty is
// non-nil, as the library returns it.
func getOctets(r *perbits.Reader) aper.OctetString {
	n := r.Length()
	if n == 0 {
		return aper.OctetString{}
	}
	return r.Octets(n)
}

func getFixedOctets(r *perbits.Reader, n int) aper.OctetString {
	if n > 2 {
		return r.Octets(n)
	}
	return r.ShortBits(uint(n) * 8)
}

func getFixedBits(r *perbits.Reader, bits uint) aper.BitString {
	if bits > 16 {
		return aper.BitString{Bytes: r.FixedBits(bits), BitLength: uint64(bits)}
	}
	return aper.BitString{Bytes: r.ShortBits(bits), BitLength: uint64(bits)}
}

func getCriticality(r *perbits.Reader) aper.Enumerated {
	c := r.Constrained(maxCriticality + 1)
	if c > maxCriticality {
		r.Fail()
	}
	return aper.Enumerated(c)
}

func getNASPDU(r *perbits.Reader) *ngapType.NASPDU { return &ngapType.NASPDU{Value: getOctets(r)} }

func getSNSSAI(r *perbits.Reader, ext bool) ngapType.SNSSAI {
	if ext {
		noExt(r)
	}
	hasSD := r.Bit()
	noExt(r)
	s := ngapType.SNSSAI{SST: ngapType.SST{Value: getFixedOctets(r, 1)}}
	if hasSD {
		s.SD = &ngapType.SD{Value: getFixedOctets(r, 3)}
	}
	return s
}

func getGUAMI(r *perbits.Reader) *ngapType.GUAMI {
	noExt(r)
	noExt(r)
	return &ngapType.GUAMI{PLMNIdentity: ngapType.PLMNIdentity{Value: getFixedOctets(r, 3)},
		AMFRegionID: ngapType.AMFRegionID{Value: getFixedBits(r, 8)},
		AMFSetID:    ngapType.AMFSetID{Value: getFixedBits(r, 10)},
		AMFPointer:  ngapType.AMFPointer{Value: getFixedBits(r, 6)}}
}

func getAllowedNSSAI(r *perbits.Reader) *ngapType.AllowedNSSAI {
	n := int(r.Constrained(maxAllowedNS)) + 1
	a := &ngapType.AllowedNSSAI{List: make([]ngapType.AllowedNSSAIItem, n)}
	for i := range a.List {
		noExt(r)
		noExt(r)
		a.List[i].SNSSAI = getSNSSAI(r, true)
	}
	return a
}

func getUEAMBR(r *perbits.Reader) *ngapType.UEAggregateMaximumBitRate {
	noExt(r)
	noExt(r)
	dl := getBitRate(r)
	return &ngapType.UEAggregateMaximumBitRate{UEAggregateMaximumBitRateDL: dl, UEAggregateMaximumBitRateUL: getBitRate(r)}
}

func getAlgorithms(r *perbits.Reader) aper.BitString {
	noExt(r)
	return getFixedBits(r, 16)
}

func getUESecurityCapabilities(r *perbits.Reader) *ngapType.UESecurityCapabilities {
	noExt(r)
	noExt(r)
	c := &ngapType.UESecurityCapabilities{}
	c.NRencryptionAlgorithms.Value = getAlgorithms(r)
	c.NRintegrityProtectionAlgorithms.Value = getAlgorithms(r)
	c.EUTRAencryptionAlgorithms.Value = getAlgorithms(r)
	c.EUTRAintegrityProtectionAlgorithms.Value = getAlgorithms(r)
	return c
}

func getSecurityKey(r *perbits.Reader) *ngapType.SecurityKey {
	return &ngapType.SecurityKey{Value: getFixedBits(r, 256)}
}

// getSessionItem reads the shared shape of PDU Session Resource Setup
// Item SUReq / CxtReq.
func getSessionItem(r *perbits.Reader) (id int64, nas *ngapType.NASPDU, s ngapType.SNSSAI, transfer aper.OctetString) {
	noExt(r)
	hasNAS := r.Bit()
	noExt(r)
	id = int64(r.Constrained(256))
	if hasNAS {
		nas = getNASPDU(r)
	}
	s = getSNSSAI(r, true)
	return id, nas, s, getOctets(r)
}

func getSessionCount(r *perbits.Reader) int { return int(r.Constrained(maxSessions)) + 1 }

// getSessionList reads a list of 1..256 PDU session items, each by get.
func getSessionList[Item any](r *perbits.Reader, get func(it *Item)) []Item {
	list := make([]Item, getSessionCount(r))
	for i := range list {
		get(&list[i])
	}
	return list
}

// getSessionID reads what putSessionID writes.
func getSessionID(r *perbits.Reader) int64 {
	noExt(r)
	noExt(r)
	return int64(r.Constrained(256))
}

// getSessionTransfer reads what putSessionTransfer writes.
func getSessionTransfer(r *perbits.Reader) (int64, aper.OctetString) {
	id := getSessionID(r)
	return id, getOctets(r)
}

func getSetupListSUReq(r *perbits.Reader) *ngapType.PDUSessionResourceSetupListSUReq {
	return &ngapType.PDUSessionResourceSetupListSUReq{List: getSessionList(r, func(it *ngapType.PDUSessionResourceSetupItemSUReq) {
		it.PDUSessionID.Value, it.PDUSessionNASPDU, it.SNSSAI, it.PDUSessionResourceSetupRequestTransfer = getSessionItem(r)
	})}
}

func getSetupListCxtReq(r *perbits.Reader) *ngapType.PDUSessionResourceSetupListCxtReq {
	return &ngapType.PDUSessionResourceSetupListCxtReq{List: getSessionList(r, func(it *ngapType.PDUSessionResourceSetupItemCxtReq) {
		it.PDUSessionID.Value, it.NASPDU, it.SNSSAI, it.PDUSessionResourceSetupRequestTransfer = getSessionItem(r)
	})}
}

func getSetupListSURes(r *perbits.Reader) *ngapType.PDUSessionResourceSetupListSURes {
	return &ngapType.PDUSessionResourceSetupListSURes{List: getSessionList(r, func(it *ngapType.PDUSessionResourceSetupItemSURes) {
		it.PDUSessionID.Value, it.PDUSessionResourceSetupResponseTransfer = getSessionTransfer(r)
	})}
}

func getUserLocation(r *perbits.Reader) *ngapType.UserLocationInformation {
	if int(r.Constrained(4))+1 != ngapType.UserLocationInformationPresentUserLocationInformationNR {
		r.Fail()
		return nil
	}
	noExt(r)
	hasTime := r.Bit()
	noExt(r)
	nr := &ngapType.UserLocationInformationNR{}
	noExt(r) // NR-CGI
	noExt(r)
	nr.NRCGI.PLMNIdentity.Value = getFixedOctets(r, 3)
	nr.NRCGI.NRCellIdentity.Value = getFixedBits(r, 36)
	noExt(r) // TAI
	noExt(r)
	nr.TAI.PLMNIdentity.Value = getFixedOctets(r, 3)
	nr.TAI.TAC.Value = getFixedOctets(r, 3)
	if hasTime {
		nr.TimeStamp = &ngapType.TimeStamp{Value: getFixedOctets(r, 4)}
	}
	return &ngapType.UserLocationInformation{Present: ngapType.UserLocationInformationPresentUserLocationInformationNR,
		UserLocationInformationNR: nr}
}

func getRRCCause(r *perbits.Reader) *ngapType.RRCEstablishmentCause {
	return &ngapType.RRCEstablishmentCause{Value: getRootEnum(r, rrcCauses)}
}

func getFiveGSTMSI(r *perbits.Reader) *ngapType.FiveGSTMSI {
	noExt(r)
	noExt(r)
	s := &ngapType.FiveGSTMSI{}
	s.AMFSetID.Value = getFixedBits(r, 10)
	s.AMFPointer.Value = getFixedBits(r, 6)
	s.FiveGTMSI.Value = getFixedOctets(r, 4)
	return s
}

func getUEContextRequest(r *perbits.Reader) *ngapType.UEContextRequest {
	noExt(r)
	return &ngapType.UEContextRequest{Value: ngapType.UEContextRequestPresentRequested}
}
