package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/l25gc/l25gc/test/ransim"
)

// Procedures of `bench pdu`, as the JSON names them.
const (
	ProcedurePDUSession        = "pdu_session"
	ProcedurePDUSessionRelease = "pdu_session_release"
)

// PDU measures UE-requested PDU session establishment (TS 23.502
// 4.3.2.2.1) and release (4.3.4.2) for each UE count: the UEs register
// first, unmeasured; then each establishes one IPv4 session on o.DNN
// (measured from the request to the Accept, procedure "pdu_session"), then
// releases it (from the Release Request to the Release Complete,
// "pdu_session_release"). The gNB announces o.N3 as its tunnels' DL end
// but carries no traffic: this measures the control plane.
func PDU(ctx context.Context, o RegistrationOptions) ([]Result, error) {
	if o.DNN == "" {
		o.DNN = "internet"
	}
	return measure(ctx, o, pduRun(o.DNN))
}

func pduRun(dnn string) run {
	return func(ctx context.Context, g *ransim.GNB, f ransim.Fleet, mode string, w io.Writer, warm bool) ([]Result, error) {
		ues, err := g.FleetUEs(f)
		if err != nil {
			return nil, err
		}
		f.Progress = ProgressLine(w, phaseLabel("registration (not measured)", mode, f.UEs, warm))
		reg := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) { return ue.Register(ctx) })
		if reg.Failed > 0 {
			return nil, fmt.Errorf("bench: %d of %d registrations before the sessions failed: %v", reg.Failed, f.UEs, reg.Errors)
		}
		f.Progress = ProgressLine(w, phaseLabel(ProcedurePDUSession, mode, f.UEs, warm))
		startMeasuring(ctx)
		est := ransim.RunFleet(ctx, ues, f, ransim.Establish(ransim.SessionRequest{ID: 1, DNN: dnn}))
		held := ransim.WithSession(ues, 1)
		var rel ransim.Outcome
		if len(held) > 0 {
			f.Progress = ProgressLine(w, phaseLabel(ProcedurePDUSessionRelease, mode, len(held), warm))
			rel = ransim.RunFleet(ctx, held, f, ransim.Release(1))
		}
		if missing := f.UEs - len(held); missing > 0 {
			// A session that was not established cannot be released: it
			// counts as a failed release too, so both rows cover every UE.
			rel.Failed += missing
			rel.Errors = append(rel.Errors, fmt.Sprintf("%d× no session to release", missing))
		}
		return []Result{
			FromOutcome(ProcedurePDUSession, mode, f.UEs, f.Concurrency, est),
			FromOutcome(ProcedurePDUSessionRelease, mode, f.UEs, f.Concurrency, rel),
		}, nil
	}
}
