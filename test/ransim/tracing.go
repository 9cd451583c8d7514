package ransim

import (
	"time"

	"github.com/l25gc/l25gc/internal/tracing"
)

// The procedures the simulator records as spans, named as the benchmarks'
// JSON names them.
const (
	ProcedureRegistration      = "registration"
	ProcedurePDUSession        = "pdu_session"
	ProcedurePDUSessionRelease = "pdu_session_release"
	ProcedureServiceRequest    = "service_request"
)

// TraceWith has the gNB record, from now on, its side of N2 (each NGAP
// message sent and received, by RAN UE NGAP ID) and its UEs' procedures
// as spans with r; nil stops. N2 carries no trace context, so these are
// what `bench --breakdown` joins to the AMF's spans (issue 15). A
// benchmark starts after its warm-up, so only measured procedures count.
func (g *GNB) TraceWith(r *tracing.RAN) { g.trace.Store(r) }

// tracer is nil while the gNB records nothing: every hook returns at once.
func (g *GNB) tracer() *tracing.RAN { return g.trace.Load() }

// traced records a procedure of u that started at start and ends now, and
// returns its latency, the figure the benchmark reports.
func (u *UE) traced(procedure string, start time.Time) time.Duration {
	end := time.Now()
	u.g.tracer().Procedure(procedure, u.ranID.Load(), start, end)
	return end.Sub(start)
}

// TraceDownlink records a procedure of u that a downlink packet sent at
// start began and that ended at end (`bench paging`: the Paging at the
// gNB, the packet at the UE), named by the UE's SUPI since a CM-IDLE UE
// has no RAN UE NGAP ID; with ran, also by the one it has now (its
// Service Request's), so that the answering procedure joins too.
func (u *UE) TraceDownlink(procedure string, start, end time.Time, ran bool) {
	t := u.g.tracer()
	if t == nil {
		return
	}
	var id int64
	if ran {
		id = u.ranID.Load()
	}
	t.DownlinkProcedure(procedure, u.supi, id, start, end)
}
