package ngapx

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap"
	"github.com/free5gc/ngap/ngapType"
)

// ErrTransferSyntax marks input that is not valid APER for NGAP-PDU
// (TS 38.413 10.2: answered by Error Indication, cause transfer-syntax-error).
var ErrTransferSyntax = errors.New("NGAP transfer syntax error")

// Decode decodes one NGAP PDU. It never panics: the free5gc APER decoder can
// panic on crafted input, so this boundary recovers and reports a transfer
// syntax error, and the association carries on.
func Decode(b []byte) (pdu *ngapType.NGAPPDU, err error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty PDU", ErrTransferSyntax)
	}
	defer func() {
		if r := recover(); r != nil {
			pdu, err = nil, fmt.Errorf("%w: decoder panic: %v", ErrTransferSyntax, r)
		}
	}()
	// The hot messages of a registration and a PDU session setup take the
	// hand-written decoder (fast_decode.go), giving the same value without
	// reflection; everything else, and anything it is unsure of, the library.
	if fast, ok := decodeFast(b); ok {
		return fast, nil
	}
	pdu, err = ngap.Decoder(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTransferSyntax, err)
	}
	if _, err := messageOf(pdu); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTransferSyntax, err)
	}
	return pdu, nil
}

// Encode encodes a PDU, turning an encoder panic into an error too.
func Encode(pdu *ngapType.NGAPPDU) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("NGAP encode panic: %v", r)
		}
	}()
	// The hot messages take the hand-written encoder (fast_encode.go): the
	// same octets as the library's, at a few percent of its cost.
	if fast, ok := encodeFast(pdu); ok {
		return fast, nil
	}
	return ngap.Encoder(*pdu)
}

// Kind is the choice of NGAP-PDU (TS 38.413 9.4.2).
type Kind int

const (
	Initiating   = Kind(ngapType.NGAPPDUPresentInitiatingMessage)
	Successful   = Kind(ngapType.NGAPPDUPresentSuccessfulOutcome)
	Unsuccessful = Kind(ngapType.NGAPPDUPresentUnsuccessfulOutcome)
)

// Summary is what the AMF's reader needs to route a PDU: the procedure and
// the UE it belongs to, read generically from the protocol IEs.
type Summary struct {
	Kind      Kind
	Procedure int64
	Name      string // the message's Go type name, e.g. "InitialUEMessage"
	AMFUEID   int64  // -1 when absent
	RANUEID   int64  // -1 when absent
	NASPDU    []byte // nil when absent
	Cause     *ngapType.Cause
}

// UEAssociated says whether the PDU names a UE (TS 38.413 8: UE-associated signalling).
func (s Summary) UEAssociated() bool { return s.AMFUEID >= 0 || s.RANUEID >= 0 }

// Summarize reads kind, procedure code and the UE NGAP IDs of a decoded PDU.
func Summarize(pdu *ngapType.NGAPPDU) (s Summary, err error) {
	if fast, ok := summarizeFast(pdu); ok {
		return fast, nil
	}
	return summarizeAny(pdu)
}

// summarizeAny is Summarize for any message, by reflection.
func summarizeAny(pdu *ngapType.NGAPPDU) (s Summary, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: summarize: %v", ErrTransferSyntax, r)
		}
	}()
	s = Summary{Kind: Kind(pdu.Present), AMFUEID: -1, RANUEID: -1}
	msg, err := messageOf(pdu)
	if err != nil {
		return s, err
	}
	s.Procedure = procedureCode(pdu)
	s.Name = msg.Elem().Type().Name()
	ies := msg.Elem().FieldByName("ProtocolIEs")
	if !ies.IsValid() {
		return s, nil
	}
	list := ies.FieldByName("List")
	for i := 0; i < list.Len(); i++ {
		readIE(list.Index(i).FieldByName("Value"), &s)
	}
	return s, nil
}

func readIE(v reflect.Value, s *Summary) {
	if !v.IsValid() {
		return
	}
	// Path Switch Request names its UE by the Source AMF UE NGAP ID
	// (TS 38.413 9.2.3.8): the UE it belongs to, so it is routed like any
	// other message of that UE.
	for _, name := range []string{"AMFUENGAPID", "SourceAMFUENGAPID", "RANUENGAPID", "NASPDU", "Cause", "UENGAPIDs"} {
		f := v.FieldByName(name)
		if !f.IsValid() || f.IsNil() {
			continue
		}
		switch x := f.Interface().(type) {
		case *ngapType.AMFUENGAPID:
			s.AMFUEID = x.Value
		case *ngapType.RANUENGAPID:
			s.RANUEID = x.Value
		case *ngapType.NASPDU:
			s.NASPDU = x.Value
		case *ngapType.Cause:
			s.Cause = x
		case *ngapType.UENGAPIDs:
			switch {
			case x.UENGAPIDPair != nil:
				s.AMFUEID, s.RANUEID = x.UENGAPIDPair.AMFUENGAPID.Value, x.UENGAPIDPair.RANUENGAPID.Value
			case x.AMFUENGAPID != nil:
				s.AMFUEID = x.AMFUENGAPID.Value
			}
		}
	}
}

// messageOf returns the pointer to the message struct the PDU carries.
func messageOf(pdu *ngapType.NGAPPDU) (reflect.Value, error) {
	var value reflect.Value
	switch pdu.Present {
	case ngapType.NGAPPDUPresentInitiatingMessage:
		if pdu.InitiatingMessage == nil {
			return value, errors.New("no initiating message")
		}
		value = reflect.ValueOf(&pdu.InitiatingMessage.Value).Elem()
	case ngapType.NGAPPDUPresentSuccessfulOutcome:
		if pdu.SuccessfulOutcome == nil {
			return value, errors.New("no successful outcome")
		}
		value = reflect.ValueOf(&pdu.SuccessfulOutcome.Value).Elem()
	case ngapType.NGAPPDUPresentUnsuccessfulOutcome:
		if pdu.UnsuccessfulOutcome == nil {
			return value, errors.New("no unsuccessful outcome")
		}
		value = reflect.ValueOf(&pdu.UnsuccessfulOutcome.Value).Elem()
	default:
		return value, fmt.Errorf("NGAP-PDU choice %d", pdu.Present)
	}
	present := int(value.Field(0).Int())
	if present <= 0 || present >= value.NumField() {
		return value, fmt.Errorf("message choice %d", present)
	}
	m := value.Field(present)
	if m.Kind() != reflect.Pointer || m.IsNil() {
		return value, fmt.Errorf("message choice %d empty", present)
	}
	return m, nil
}

func procedureCode(pdu *ngapType.NGAPPDU) int64 {
	switch pdu.Present {
	case ngapType.NGAPPDUPresentInitiatingMessage:
		return pdu.InitiatingMessage.ProcedureCode.Value
	case ngapType.NGAPPDUPresentSuccessfulOutcome:
		return pdu.SuccessfulOutcome.ProcedureCode.Value
	case ngapType.NGAPPDUPresentUnsuccessfulOutcome:
		return pdu.UnsuccessfulOutcome.ProcedureCode.Value
	}
	return -1
}

// Criticality is the criticality of a PDU's procedure (TS 38.413 10.3.4.1).
func Criticality(pdu *ngapType.NGAPPDU) aper.Enumerated {
	switch {
	case pdu.InitiatingMessage != nil:
		return pdu.InitiatingMessage.Criticality.Value
	case pdu.SuccessfulOutcome != nil:
		return pdu.SuccessfulOutcome.Criticality.Value
	case pdu.UnsuccessfulOutcome != nil:
		return pdu.UnsuccessfulOutcome.Criticality.Value
	}
	return ngapType.CriticalityPresentReject
}
