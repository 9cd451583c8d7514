package pfcpx

import (
	"encoding/binary"
	"fmt"

	"github.com/l25gc/l25gc/upf/rules"
)

// A QoS flow's weight (issue 13: its share of the Session-AMBR left after
// the GBRs, rules.QER.Weight) has no IE in TS 29.244, so N4 carries it the
// way vendors carry their own QER extensions: a vendor-specific IE (TS
// 29.244 8.1.1, IE type 32768 and above, its first two octets an
// Enterprise ID) inside Create QER and Update QER. A UPF that does not know
// it skips it, as TS 29.244 7.2.2.4.1 asks of unknown optional IEs
// (free5gc/pfcp v1.1.2's tlv decoder, this package's too, skips a type its
// struct does not list); tshark shows it as an enterprise-specific IE.
//
// The SMF writes it only when the operator gave weights (smf.qos.weights),
// and then on every flow QER, weight 1 included: in an Update QER an
// absent IE means "unchanged" (TS 29.244 7.5.4.5), so a flow whose 5QI
// moves to an unlisted one must say 1. In a Create QER an absent IE is
// weight 1.
const (
	// EnterpriseID marks L25GC+'s vendor-specific IEs. TS 29.244 8.1.1
	// wants an IANA Private Enterprise Number; L25GC+ has none, so it uses
	// 32473, the number RFC 5612 set aside for examples and no vendor
	// holds: no registered vendor's IE of the same type is read as ours. A
	// deployment with a number of its own changes this one constant (SMF
	// and UPF alike).
	EnterpriseID uint16 = 32473
	// IEQERWeight is the QER weight IE's type: the first vendor-specific
	// type (8.1.1: bit 8 of the type's first octet set). Its value is the
	// Enterprise ID, then the weight, 2 octets.
	IEQERWeight uint16 = 1<<15 | 1
)

// VendorIE is a vendor-specific IE (TS 29.244 Figure 8.1.1-2): the
// Enterprise ID, then the vendor's octets.
type VendorIE struct {
	EnterpriseID uint16
	Data         []byte
}

// MarshalBinary writes the Enterprise ID and the data.
func (v *VendorIE) MarshalBinary() ([]byte, error) {
	return append(binary.BigEndian.AppendUint16(nil, v.EnterpriseID), v.Data...), nil
}

// UnmarshalBinary reads the Enterprise ID and keeps the rest.
func (v *VendorIE) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return fmt.Errorf("vendor-specific IE of %d octets has no Enterprise ID (TS 29.244 8.1.1)", len(b))
	}
	v.EnterpriseID = binary.BigEndian.Uint16(b)
	v.Data = append([]byte(nil), b[2:]...)
	return nil
}

// weightIEs carries w (0: nothing, the QER says no weight).
func weightIEs(w uint16) []*VendorIE {
	if w == 0 {
		return nil
	}
	return []*VendorIE{{EnterpriseID: EnterpriseID, Data: binary.BigEndian.AppendUint16(nil, w)}}
}

// weightOf is the weight ies carry for QER id: ours among them (other
// enterprises' IEs of the same type are not ours to read), 0 when none.
func weightOf(id uint32, ies []*VendorIE) (uint16, error) {
	var w uint16
	for _, v := range ies {
		if v.EnterpriseID != EnterpriseID {
			continue
		}
		if len(v.Data) != 2 {
			return 0, incorrect(IEQERWeight, "QER %d: weight of %d octets, want 2", id, len(v.Data))
		}
		w = binary.BigEndian.Uint16(v.Data)
		if w == 0 || w > rules.MaxWeight {
			return 0, incorrect(IEQERWeight, "QER %d: weight %d, want 1..%d", id, w, rules.MaxWeight)
		}
	}
	return w, nil
}
