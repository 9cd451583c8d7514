package amf

import (
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// n2Message names a received NGAP message for its span (issue 15: the AMF
// tags its N2 spans with the RAN UE NGAP ID and message the simulator
// tags its own with, so the breakdown can pair them).
func n2Message(s ngapx.Summary, amfUE int64) tracing.Message {
	return tracing.Message{Name: s.Name, Kind: int(s.Kind), Procedure: s.Procedure, RANUE: s.RANUEID, AMFUE: amfUE}
}
