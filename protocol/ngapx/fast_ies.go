package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// Hand-written aligned-PER encoders of the IEs the hot messages carry
// (TS 38.413 9.3, ASN.1 in 9.4.5), each the exact bytes free5gc/aper writes
// for the same Go value. Each reports false for a value it does not cover
// (an IE extension, a value out of range, a size other than the fixed one);
// the caller then leaves the whole message to the library, which encodes it
// or gives the error.

// Upper bounds of the INTEGERs of TS 38.413 9.4.5.
const (
	maxAMFUEID     = 1<<40 - 1     // AMF-UE-NGAP-ID ::= INTEGER (0..1099511627775)
	maxRANUEID     = 1<<32 - 1     // RAN-UE-NGAP-ID ::= INTEGER (0..4294967295)
	maxBitRate     = 4000000000000 // BitRate ::= INTEGER (0..4000000000000, ...)
	maxIEs         = 65535         // maxProtocolIEs
	maxCriticality = 2             // Criticality ::= ENUMERATED {reject, ignore, notify}
	rrcCauses      = 10            // RRCEstablishmentCause: 10 root values, extensible
	maxSessions    = 256           // maxnoofPDUSessions
	maxAllowedNS   = 8             // maxnoofAllowedS-NSSAIs
)

// putLarge writes a constrained whole number of a range above 64K
// (X.691 10.5.7.4): its octet count minus one in lenBits bits, then the
// octets, aligned.
func putLarge(w *perbits.Writer, v uint64, lenBits uint) {
	n := uint(1)
	for x := v >> 8; x != 0; x >>= 8 {
		n++
	}
	w.Bits(uint64(n-1), lenBits)
	w.Align()
	w.Bits(v, n*8)
}

// putAMFUEID writes AMF-UE-NGAP-ID (9.3.3.1): 5 octets of range, so a
// 3-bit octet count.
func putAMFUEID(w *perbits.Writer, x *ngapType.AMFUENGAPID) bool {
	if x == nil || x.Value < 0 || x.Value > maxAMFUEID {
		return false
	}
	putLarge(w, uint64(x.Value), 3)
	return true
}

// putRANUEID writes RAN-UE-NGAP-ID (9.3.3.2): 4 octets of range, 2-bit count.
func putRANUEID(w *perbits.Writer, x *ngapType.RANUENGAPID) bool {
	if x == nil || x.Value < 0 || x.Value > maxRANUEID {
		return false
	}
	putLarge(w, uint64(x.Value), 2)
	return true
}

// putBitRate writes BitRate (9.3.1.4): the extension bit, then the value.
func putBitRate(w *perbits.Writer, v int64) bool {
	if v < 0 || v > maxBitRate {
		return false
	}
	w.Bit(false)
	putLarge(w, uint64(v), 3)
	return true
}

// putOctets writes an OCTET STRING without a size constraint (NAS-PDU,
// the SMF's transfers): a length determinant, then the octets.
func putOctets(w *perbits.Writer, b []byte) bool {
	if len(b) > perbits.MaxLength {
		return false
	}
	w.Length(len(b))
	w.Octets(b)
	return true
}

// putFixedOctets writes an OCTET STRING (SIZE(n)) (X.691 17.6-17.7): not
// aligned up to two octets, aligned above.
func putFixedOctets(w *perbits.Writer, b []byte, n int) bool {
	if len(b) != n {
		return false
	}
	if n > 2 {
		w.Octets(b)
	} else {
		w.ShortBits(b, uint(n)*8)
	}
	return true
}

// putFixedBits writes a BIT STRING (SIZE(bits)) (X.691 16.9-16.10).
func putFixedBits(w *perbits.Writer, b aper.BitString, bits uint) bool {
	if b.BitLength != uint64(bits) || len(b.Bytes) != int(bits+7)/8 {
		return false
	}
	if bits > 16 {
		w.FixedBits(b.Bytes, bits)
	} else {
		w.ShortBits(b.Bytes, bits)
	}
	return true
}

// putCriticality writes Criticality (9.3.1.2 of TS 38.413's common types).
func putCriticality(w *perbits.Writer, c aper.Enumerated) bool {
	if c > maxCriticality {
		return false
	}
	w.Constrained(uint64(c), maxCriticality+1)
	return true
}

// putSNSSAI writes S-NSSAI (9.3.1.24), extensible where its use is.
func putSNSSAI(w *perbits.Writer, s *ngapType.SNSSAI, ext bool) bool {
	if s.IEExtensions != nil {
		return false
	}
	if ext {
		w.Bit(false)
	}
	w.Bit(s.SD != nil)
	w.Bit(false) // iE-Extensions
	if !putFixedOctets(w, s.SST.Value, 1) {
		return false
	}
	return s.SD == nil || putFixedOctets(w, s.SD.Value, 3)
}

// putGUAMI writes GUAMI (9.3.3.3).
func putGUAMI(w *perbits.Writer, g *ngapType.GUAMI) bool {
	if g == nil || g.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putFixedOctets(w, g.PLMNIdentity.Value, 3) && putFixedBits(w, g.AMFRegionID.Value, 8) &&
		putFixedBits(w, g.AMFSetID.Value, 10) && putFixedBits(w, g.AMFPointer.Value, 6)
}

// putAllowedNSSAI writes Allowed NSSAI (9.3.1.31): 1..8 items.
func putAllowedNSSAI(w *perbits.Writer, a *ngapType.AllowedNSSAI) bool {
	if a == nil || len(a.List) < 1 || len(a.List) > maxAllowedNS {
		return false
	}
	w.Constrained(uint64(len(a.List)-1), maxAllowedNS)
	for i := range a.List {
		item := &a.List[i]
		if item.IEExtensions != nil {
			return false
		}
		w.Bit(false)
		w.Bit(false)
		if !putSNSSAI(w, &item.SNSSAI, true) {
			return false
		}
	}
	return true
}

// putUEAMBR writes UE Aggregate Maximum Bit Rate (9.3.1.58).
func putUEAMBR(w *perbits.Writer, a *ngapType.UEAggregateMaximumBitRate) bool {
	if a == nil || a.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putBitRate(w, a.UEAggregateMaximumBitRateDL.Value) && putBitRate(w, a.UEAggregateMaximumBitRateUL.Value)
}

// putAlgorithms writes one 16-bit algorithm bitmap (9.3.1.86), whose size
// is extensible.
func putAlgorithms(w *perbits.Writer, b aper.BitString) bool {
	w.Bit(false)
	return putFixedBits(w, b, 16)
}

// putUESecurityCapabilities writes UE Security Capabilities (9.3.1.86).
func putUESecurityCapabilities(w *perbits.Writer, c *ngapType.UESecurityCapabilities) bool {
	if c == nil || c.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putAlgorithms(w, c.NRencryptionAlgorithms.Value) && putAlgorithms(w, c.NRintegrityProtectionAlgorithms.Value) &&
		putAlgorithms(w, c.EUTRAencryptionAlgorithms.Value) && putAlgorithms(w, c.EUTRAintegrityProtectionAlgorithms.Value)
}

// putSessionItem writes the common shape of a PDU Session Resource Setup
// Item SUReq / CxtReq (9.3.1.x): ID, optional NAS-PDU, S-NSSAI, transfer.
func putSessionItem(w *perbits.Writer, id int64, nas *ngapType.NASPDU, s *ngapType.SNSSAI, transfer []byte) bool {
	if id < 0 || id > 255 {
		return false
	}
	w.Bit(false)
	w.Bit(nas != nil)
	w.Bit(false)
	w.Constrained(uint64(id), 256)
	if nas != nil && !putOctets(w, nas.Value) {
		return false
	}
	return putSNSSAI(w, s, true) && putOctets(w, transfer)
}

// putSessionCount writes the size of a list of 1..256 PDU sessions.
func putSessionCount(w *perbits.Writer, n int) bool {
	if n < 1 || n > maxSessions {
		return false
	}
	w.Constrained(uint64(n-1), maxSessions)
	return true
}

// putSessionList writes a list of 1..256 PDU session items, each by put.
func putSessionList[Item any](w *perbits.Writer, list []Item, put func(it *Item) bool) bool {
	if !putSessionCount(w, len(list)) {
		return false
	}
	for i := range list {
		if !put(&list[i]) {
			return false
		}
	}
	return true
}

// putSessionID writes an extensible list item with no extension that
// holds a PDU session ID first: the CxtRelReq and CxtRelCpl items alone
// (9.2.3.4, 9.2.3.6), and the start of putSessionTransfer's.
func putSessionID(w *perbits.Writer, id int64) bool {
	if id < 0 || id > 255 {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	w.Constrained(uint64(id), 256)
	return true
}

// putSessionTransfer writes the item shape of PDU Session Resource Setup
// SURes / CxtRes (9.2.1.2, 9.2.2.2) and of Release RelCmd / RelRes
// (9.2.1.3, 9.2.1.4): ID and a transfer, without extensions.
func putSessionTransfer(w *perbits.Writer, id int64, transfer []byte) bool {
	return putSessionID(w, id) && putOctets(w, transfer)
}

func putSetupListSUReq(w *perbits.Writer, l *ngapType.PDUSessionResourceSetupListSUReq) bool {
	return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceSetupItemSUReq) bool {
		return it.IEExtensions == nil && putSessionItem(w, it.PDUSessionID.Value, it.PDUSessionNASPDU, &it.SNSSAI, it.PDUSessionResourceSetupRequestTransfer)
	})
}

func putSetupListCxtReq(w *perbits.Writer, l *ngapType.PDUSessionResourceSetupListCxtReq) bool {
	return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceSetupItemCxtReq) bool {
		return it.IEExtensions == nil && putSessionItem(w, it.PDUSessionID.Value, it.NASPDU, &it.SNSSAI, it.PDUSessionResourceSetupRequestTransfer)
	})
}

func putSetupListSURes(w *perbits.Writer, l *ngapType.PDUSessionResourceSetupListSURes) bool {
	return l != nil && putSessionList(w, l.List, func(it *ngapType.PDUSessionResourceSetupItemSURes) bool {
		return it.IEExtensions == nil && putSessionTransfer(w, it.PDUSessionID.Value, it.PDUSessionResourceSetupResponseTransfer)
	})
}

// putUserLocation writes User Location Information (9.3.1.16), NR only.
func putUserLocation(w *perbits.Writer, u *ngapType.UserLocationInformation) bool {
	if u == nil || u.Present != ngapType.UserLocationInformationPresentUserLocationInformationNR {
		return false
	}
	nr := u.UserLocationInformationNR
	if nr == nil || nr.IEExtensions != nil || nr.NRCGI.IEExtensions != nil || nr.TAI.IEExtensions != nil {
		return false
	}
	w.Constrained(uint64(u.Present-1), 4)
	w.Bit(false)
	w.Bit(nr.TimeStamp != nil)
	w.Bit(false)
	w.Bit(false) // NR-CGI
	w.Bit(false)
	if !putFixedOctets(w, nr.NRCGI.PLMNIdentity.Value, 3) || !putFixedBits(w, nr.NRCGI.NRCellIdentity.Value, 36) {
		return false
	}
	w.Bit(false) // TAI
	w.Bit(false)
	if !putFixedOctets(w, nr.TAI.PLMNIdentity.Value, 3) || !putFixedOctets(w, nr.TAI.TAC.Value, 3) {
		return false
	}
	return nr.TimeStamp == nil || putFixedOctets(w, nr.TimeStamp.Value, 4)
}

// putRRCCause writes RRC Establishment Cause (9.3.1.111), root values only.
func putRRCCause(w *perbits.Writer, c *ngapType.RRCEstablishmentCause) bool {
	return c != nil && putRootEnum(w, c.Value, rrcCauses)
}

// putFiveGSTMSI writes 5G-S-TMSI (9.3.3.20).
func putFiveGSTMSI(w *perbits.Writer, s *ngapType.FiveGSTMSI) bool {
	if s == nil || s.IEExtensions != nil {
		return false
	}
	w.Bit(false)
	w.Bit(false)
	return putFixedBits(w, s.AMFSetID.Value, 10) && putFixedBits(w, s.AMFPointer.Value, 6) &&
		putFixedOctets(w, s.FiveGTMSI.Value, 4)
}

// putUEContextRequest writes UE Context Request (9.3.1.90): one root
// value, so only its extension bit.
func putUEContextRequest(w *perbits.Writer, r *ngapType.UEContextRequest) bool {
	if r == nil || r.Value != ngapType.UEContextRequestPresentRequested {
		return false
	}
	w.Bit(false)
	return true
}

// putNASPDU writes NAS-PDU (9.3.3.4).
func putNASPDU(w *perbits.Writer, x *ngapType.NASPDU) bool { return x != nil && putOctets(w, x.Value) }

// putSecurityKey writes Security Key (9.3.1.87): 256 bits.
func putSecurityKey(w *perbits.Writer, k *ngapType.SecurityKey) bool {
	return k != nil && putFixedBits(w, k.Value, 256)
}
