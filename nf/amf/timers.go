package amf

import (
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// timerKind names the AMF's 5GMM timers (TS 24.501 10.3, table 10.2.2).
type timerKind int

const (
	T3550 timerKind = iota + 1 // Registration Accept (5.5.1.2.8)
	T3560                      // Authentication Request, Security Mode Command (5.4.1.3.7, 5.4.2.7)
	T3570                      // Identity Request (5.4.3.7)
)

func (k timerKind) String() string {
	return map[timerKind]string{T3550: "T3550", T3560: "T3560", T3570: "T3570"}[k]
}

// nasTimer guards one downlink message; on expiry it is retransmitted.
type nasTimer struct {
	kind    timerKind
	gen     uint64
	ngap    []byte // the NGAP PDU that carried the message
	retries int
	t       *time.Timer
}

func (n *NF) timerDuration(k timerKind) time.Duration {
	c := n.cfg.AMF.NAS
	switch k {
	case T3550:
		return c.T3550
	case T3560:
		return c.T3560
	default:
		return c.T3570
	}
}

// startTimer (re)starts the UE's one 5GMM timer for the message in pdu. The
// expiry comes back as an event on the UE's own key, carrying a generation
// so that a timer stopped meanwhile is recognised as stale.
func (n *NF) startTimer(ue *ueContext, k timerKind, pdu []byte) {
	n.stopTimer(ue)
	gen := n.timerGen.Add(1)
	id := ue.amfID
	ue.timer = &nasTimer{kind: k, gen: gen, ngap: pdu}
	ue.timer.t = time.AfterFunc(n.timerDuration(k), func() {
		n.dispatchUE(id, EvTimerExpiry, &input{timer: k, timerGen: gen})
	})
}

func (n *NF) stopTimer(ue *ueContext) {
	if ue.timer != nil {
		ue.timer.t.Stop()
		ue.timer = nil
	}
}

// onTimerExpiry retransmits the guarded message up to MaxRetransmissions
// times, then aborts the procedure and releases the UE (TS 24.501 5.5.1.2.8,
// 5.4.1.3.7, 5.4.2.7, 5.4.3.7: "on the fifth expiry ... abort").
func (n *NF) onTimerExpiry(ue *ueContext, in *input) (State, error) {
	t := ue.timer
	if t == nil || t.gen != in.timerGen {
		return ue.state, nil // stopped meanwhile
	}
	if t.retries < n.cfg.AMF.NAS.MaxRetransmissions {
		t.retries++
		n.metrics.retransmissions.WithLabelValues(t.kind.String()).Inc()
		n.log.Debug("NAS retransmission", "amfUeNgapId", ue.amfID, "timer", t.kind, "n", t.retries)
		if err := n.sendToUE(ue, t.ngap); err != nil {
			return ue.state, err
		}
		gen := n.timerGen.Add(1)
		t.gen = gen
		id := ue.amfID
		t.t = time.AfterFunc(n.timerDuration(t.kind), func() {
			n.dispatchUE(id, EvTimerExpiry, &input{timer: t.kind, timerGen: gen})
		})
		return ue.state, nil
	}
	n.log.Info("NAS procedure aborted", "amfUeNgapId", ue.amfID, "timer", t.kind, "state", ue.state)
	ue.timer = nil
	n.finishProcedure(ue, procedureOf(ue.state), resultTimeout)
	return n.release(ue, ngapx.CauseNas(ngapType.CauseNasPresentUnspecified))
}
