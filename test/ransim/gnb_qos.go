package ransim

import (
	"slices"

	"github.com/free5gc/nas/nasType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// RANQoS is what the gNB holds of a PDU session's QoS (TS 38.413 8.2.1,
// 8.2.3): the PDU Session Aggregate Maximum Bit Rate (9.3.1.69) and each
// QoS flow's parameters (9.3.1.12), as the setup request set them and
// later modify requests changed them. A test asserts on it that a
// network-requested modification reached the gNB.
type RANQoS struct {
	AMBR  ngapx.AMBR
	Flows []ngapx.FlowQoS
}

// Flow is the parameters of flow qfi, false when the gNB has no such flow.
func (q RANQoS) Flow(qfi uint8) (ngapx.FlowQoS, bool) {
	i := slices.IndexFunc(q.Flows, func(f ngapx.FlowQoS) bool { return f.QFI == qfi })
	if i < 0 {
		return ngapx.FlowQoS{}, false
	}
	return q.Flows[i], true
}

// RANQoS is the session's QoS at the gNB.
func (t *Tunnel) RANQoS() RANQoS {
	if q := t.ranQoS.Load(); q != nil {
		return *q
	}
	return RANQoS{}
}

// setupRANQoS records a setup request's AMBR and flows.
func (t *Tunnel) setupRANQoS(rs ngapx.RANSessionSetup) {
	t.recordRANQoS(ngapx.AMBR{Down: uint64(rs.AMBRDownlink), Up: uint64(rs.AMBRUplink)}, rs.Flows, nil)
}

// recordRANQoS records an AMBR and the flows but the refused ones (a
// handover target's, handover_qos.go).
func (t *Tunnel) recordRANQoS(ambr ngapx.AMBR, flows []ngapx.FlowQoS, refused []uint8) {
	q := RANQoS{AMBR: ambr}
	for _, f := range flows {
		if !slices.Contains(refused, f.QFI) {
			q.Flows = append(q.Flows, f)
		}
	}
	t.ranQoS.Store(&q)
}

// modifyRANQoS applies a modify request: a new AMBR when it has one, flows
// added or replaced by QFI, flows released.
func (t *Tunnel) modifyRANQoS(s ngapx.RANSessionModify) {
	q := t.RANQoS()
	q.Flows = slices.Clone(q.Flows)
	if s.AMBR != nil {
		q.AMBR = *s.AMBR
	}
	for _, f := range s.AddOrModify {
		q.Flows = slices.DeleteFunc(q.Flows, func(g ngapx.FlowQoS) bool { return g.QFI == f.QFI })
		q.Flows = append(q.Flows, f)
	}
	for _, r := range s.Release {
		q.Flows = slices.DeleteFunc(q.Flows, func(g ngapx.FlowQoS) bool { return g.QFI == r })
	}
	t.ranQoS.Store(&q)
}

// SessionQoS is session id's Session-AMBR and QoS flow descriptions as
// the UE holds them (the Establishment Accept, then every Modification
// Command), read under the UE's lock; false when it has no such session.
func (u *UE) SessionQoS(id uint8) (nasx.SessionAMBR, nasType.QoSFlowDescs, bool) {
	s := u.Session(id)
	if s == nil {
		return nasx.SessionAMBR{}, nil, false
	}
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	return s.AMBR, slices.Clone(s.QoSFlows), true
}

// SessionRANQoS is session id's QoS at the gNB that serves it now.
func (u *UE) SessionRANQoS(id uint8) (RANQoS, bool) {
	s := u.Session(id)
	if s == nil {
		return RANQoS{}, false
	}
	u.sessMu.Lock()
	t := s.Tunnel
	u.sessMu.Unlock()
	if t == nil {
		return RANQoS{}, false
	}
	return t.RANQoS(), true
}
