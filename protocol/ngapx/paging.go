package ngapx

// NGAP Paging (TS 38.413 8.5.1, 9.2.4.1), both sides: the AMF builds it for
// a CM-IDLE UE (TS 23.502 4.2.3.3 step 4b), the gNB reads it and pages the
// UE in the cells of the listed TAs.

import (
	"errors"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// Paging is what an NGAP Paging carries here.
type Paging struct {
	STMSI nasx.STMSI   // UE Paging Identity (9.3.3.18): the 5G-S-TMSI
	TAIs  []domain.TAI // TAI List for Paging (9.3.3.21), 1-16 TAIs
	// DRX is the UE-specific Paging DRX (9.3.1.90); nil leaves it out, so
	// the gNB uses its default.
	DRX *aper.Enumerated
	// Priority is the Paging Priority (9.3.1.78), 1 (highest) to 8; 0
	// leaves it out.
	Priority int
}

const maxTAIsForPaging = 16 // maxnoofTAIforPaging (TS 38.413 9.4.7)

// BuildPaging builds Paging (TS 38.413 9.2.4.1).
func BuildPaging(p Paging) ([]byte, error) {
	if len(p.TAIs) == 0 || len(p.TAIs) > maxTAIsForPaging {
		return nil, fmt.Errorf("paging: %d TAIs, want 1-%d", len(p.TAIs), maxTAIsForPaging)
	}
	if p.Priority < 0 || p.Priority > 8 {
		return nil, fmt.Errorf("paging: priority %d, want 1-8 (0: absent)", p.Priority)
	}
	tais := &ngapType.TAIListForPaging{}
	for _, t := range p.TAIs {
		n, err := t.ToNGAP()
		if err != nil {
			return nil, fmt.Errorf("paging: %w", err)
		}
		tais.List = append(tais.List, ngapType.TAIListForPagingItem{TAI: n})
	}
	pdu := initiating(ngapType.ProcedureCodePaging, ignore, ngapType.InitiatingMessagePresentPaging)
	m := &ngapType.Paging{}
	pdu.InitiatingMessage.Value.Paging = m
	add := func(ieID int64, v ngapType.PagingIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PagingIEs{Id: id(ieID), Criticality: ignore, Value: v})
	}
	s := FiveGSTMSI(p.STMSI)
	add(ngapType.ProtocolIEIDUEPagingIdentity, ngapType.PagingIEsValue{Present: ngapType.PagingIEsPresentUEPagingIdentity,
		UEPagingIdentity: &ngapType.UEPagingIdentity{Present: ngapType.UEPagingIdentityPresentFiveGSTMSI, FiveGSTMSI: &s}})
	if p.DRX != nil {
		add(ngapType.ProtocolIEIDPagingDRX, ngapType.PagingIEsValue{Present: ngapType.PagingIEsPresentPagingDRX,
			PagingDRX: &ngapType.PagingDRX{Value: *p.DRX}})
	}
	add(ngapType.ProtocolIEIDTAIListForPaging, ngapType.PagingIEsValue{Present: ngapType.PagingIEsPresentTAIListForPaging,
		TAIListForPaging: tais})
	if p.Priority > 0 {
		add(ngapType.ProtocolIEIDPagingPriority, ngapType.PagingIEsValue{Present: ngapType.PagingIEsPresentPagingPriority,
			PagingPriority: &ngapType.PagingPriority{Value: aper.Enumerated(p.Priority - 1)}})
	}
	return Encode(pdu)
}

// ParsePaging reads a Paging (the gNB's side). Both mandatory IEs missing
// or malformed is an error the gNB answers with Error Indication.
func ParsePaging(pdu *ngapType.NGAPPDU) (out Paging, err error) {
	defer ranSideRecover(&err, "Paging")
	if pdu == nil || pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.Paging == nil {
		return out, ErrNotThisMessage
	}
	var haveID bool
	for _, ie := range pdu.InitiatingMessage.Value.Paging.ProtocolIEs.List {
		v := ie.Value
		switch {
		case v.UEPagingIdentity != nil:
			if v.UEPagingIdentity.FiveGSTMSI == nil {
				return out, errors.New("Paging: UE Paging Identity is not a 5G-S-TMSI")
			}
			if out.STMSI, err = DecodeFiveGSTMSI(*v.UEPagingIdentity.FiveGSTMSI); err != nil {
				return out, fmt.Errorf("Paging: %w", err)
			}
			haveID = true
		case v.TAIListForPaging != nil:
			for _, it := range v.TAIListForPaging.List {
				t, err := domain.TAIFromNGAP(it.TAI)
				if err != nil {
					return out, fmt.Errorf("Paging: TAI List for Paging: %w", err)
				}
				out.TAIs = append(out.TAIs, t)
			}
		case v.PagingDRX != nil:
			d := v.PagingDRX.Value
			out.DRX = &d
		case v.PagingPriority != nil:
			out.Priority = int(v.PagingPriority.Value) + 1
		}
	}
	if !haveID || len(out.TAIs) == 0 {
		return out, fmt.Errorf("Paging: %w (UE Paging Identity, TAI List for Paging)", ErrMissingIE)
	}
	return out, nil
}
