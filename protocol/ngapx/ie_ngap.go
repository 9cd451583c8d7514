package ngapx

import (
	"encoding/binary"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// snssaiIE gives the NGAP S-NSSAI of a slice the NFs hold as an openapi
// model (TS 38.413 9.3.1.24); the encoding is the domain package's.
func snssaiIE(m models.Snssai) (ngapType.SNSSAI, error) {
	s, err := domain.SNSSAIFromModel(m)
	if err != nil {
		return ngapType.SNSSAI{}, err
	}
	return s.ToNGAP()
}

// DecodeFiveGSTMSI reads the 5G-S-TMSI of an Initial UE Message (TS 38.413 9.3.3.20).
func DecodeFiveGSTMSI(s ngapType.FiveGSTMSI) (nasx.STMSI, error) {
	set, errSet := domain.SetIDFromNGAP(s.AMFSetID)
	ptr, errPtr := domain.PointerFromNGAP(s.AMFPointer)
	if errSet != nil || errPtr != nil || len(s.FiveGTMSI.Value) != 4 {
		return nasx.STMSI{}, fmt.Errorf("5G-S-TMSI malformed")
	}
	return nasx.STMSI{SetID: set, Pointer: ptr, TMSI: binary.BigEndian.Uint32(s.FiveGTMSI.Value)}, nil
}

// FiveGSTMSI gives the NGAP 5G-S-TMSI.
func FiveGSTMSI(s nasx.STMSI) ngapType.FiveGSTMSI {
	t := make([]byte, 4)
	binary.BigEndian.PutUint32(t, s.TMSI)
	set, ptr := domain.AMFID{SetID: s.SetID, Pointer: s.Pointer}.ToNGAPSetPointer()
	return ngapType.FiveGSTMSI{AMFSetID: set, AMFPointer: ptr, FiveGTMSI: ngapType.FiveGTMSI{Value: t}}
}

// Cause constructors (TS 38.413 9.3.1.2).
func CauseMisc(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentMisc, Misc: &ngapType.CauseMisc{Value: v}}
}

// CauseProtocol is a protocol cause, e.g. transfer-syntax-error.
func CauseProtocol(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentProtocol, Protocol: &ngapType.CauseProtocol{Value: v}}
}

// CauseNas is a NAS cause, e.g. deregister.
func CauseNas(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentNas, Nas: &ngapType.CauseNas{Value: v}}
}

// CauseRadioNetwork is a radio network layer cause.
func CauseRadioNetwork(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentRadioNetwork, RadioNetwork: &ngapType.CauseRadioNetwork{Value: v}}
}

// CauseString renders a cause for logs.
func CauseString(c *ngapType.Cause) string {
	if c == nil {
		return "none"
	}
	switch c.Present {
	case ngapType.CausePresentRadioNetwork:
		if c.RadioNetwork != nil {
			return fmt.Sprintf("radioNetwork(%d)", c.RadioNetwork.Value)
		}
	case ngapType.CausePresentTransport:
		if c.Transport != nil {
			return fmt.Sprintf("transport(%d)", c.Transport.Value)
		}
	case ngapType.CausePresentNas:
		if c.Nas != nil {
			return fmt.Sprintf("nas(%d)", c.Nas.Value)
		}
	case ngapType.CausePresentProtocol:
		if c.Protocol != nil {
			return fmt.Sprintf("protocol(%d)", c.Protocol.Value)
		}
	case ngapType.CausePresentMisc:
		if c.Misc != nil {
			return fmt.Sprintf("misc(%d)", c.Misc.Value)
		}
	}
	return "unknown"
}
