package smf

// Inter NG-RAN node N2 based handover at the SMF (TS 23.502 4.9.1.3,
// without UPF change; TS 29.502 5.2.2.3.4): the AMF relays each step as
// UpdateSMContext with hoState.
//   - PREPARING + HANDOVER_REQUIRED (source gNB, and the targetId): the
//     SMF answers PREPARING with the PDU Session Resource Setup Request
//     Transfer for the target gNB (n2SmInfoType PDU_RES_SETUP_REQ).
//   - PREPARED + HANDOVER_REQ_ACK (target gNB): the SMF sets up data
//     forwarding and answers PREPARED with the Handover Command Transfer
//     for the source gNB (HANDOVER_CMD).
//   - COMPLETED (after Handover Notify): the downlink moves to the
//     target's tunnel with End Markers on the old one.
//   - CANCELLED, or HANDOVER_RES_ALLOC_FAIL (the target refused): the
//     preparation is undone.
// Until COMPLETED the session stays on the source gNB's tunnel, whatever
// fails.

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// handover is a session's N2 handover in preparation.
type handover struct {
	target *models.NgRanTargetId
	// direct: the source gNB has a direct forwarding path to the target
	// (Handover Required Transfer, TS 38.413 9.3.4.14).
	direct   bool
	prepared bool         // the target acknowledged
	targetDL ngapx.Tunnel // the target gNB's N3 tunnel
	refused  []uint8      // QoS flows the target failed to set up (pdu_handover_qos.go)
}

// forwarding is a session's indirect data forwarding at the UPF: its
// rules stay from the handover's preparation until it is cancelled, or
// for forwardingHold after it completed, so that what the source gNB
// still forwards, and the End Marker it passes on, reach the target
// (TS 23.502 4.9.1.3.3: the SMF releases the indirect forwarding
// resources when its timer expires). gen tells the rules of one handover
// from those of the next.
type forwarding struct {
	installed bool
	gen       uint64
}

// forwardingHold is how long indirect forwarding outlives a completed
// handover.
const forwardingHold = 2 * time.Second

// The rules of indirect data forwarding (TS 23.502 4.9.1.3.2 step 9a):
// one PDR taking the source gNB's forwarded packets on an F-TEID the UPF
// chooses, and one FAR sending them into the target gNB's forwarding
// tunnel. IDs beyond those of the flows (upf_rules.go).
const (
	pdrForwarding    uint16 = 200
	farForwarding    uint32 = 3
	chooseForwarding uint8  = 2
)

// createdFTEIDsModifier is an N4 client that also returns the F-TEIDs the
// UPF chose for PDRs a modification created (TS 29.244 7.5.5.2 Created
// PDR). Without one the SMF offers no indirect forwarding; the handover
// still works, with the source's in-flight data lost.
type createdFTEIDsModifier interface {
	ModifyCreated(ctx context.Context, upf string, upSEID uint64, m *rules.Modification) (map[uint16]rules.FTEID, error)
}

var errNoCreatedFTEIDs = errors.New("the N4 client does not return created F-TEIDs")

// updateHandover dispatches one N2 handover step by hoState.
func (n *NF) updateHandover(ctx context.Context, c *smContext, d *models.SmfPduSessionSmContextUpdateData, n2 []byte) (updateAnswer, error) {
	switch d.HoState {
	case models.HoState_PREPARING:
		return n.handoverPreparing(ctx, c, d, n2)
	case models.HoState_PREPARED:
		if d.N2SmInfoType == models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL {
			return n.handoverRefused(ctx, c, n2)
		}
		return n.handoverPrepared(ctx, c, d.N2SmInfoType, n2)
	case models.HoState_COMPLETED:
		return n.handoverCompleted(ctx, c)
	case models.HoState_CANCELLED:
		n.endHandover(ctx, c, "cancelled")
		return updateAnswer{hoState: models.HoState_CANCELLED}, nil
	}
	return updateAnswer{}, sbi.Rejectf(http.StatusBadRequest, sbi.CauseInvalidMsgFormat, "hoState %q", d.HoState)
}

// handoverPreparing is TS 23.502 4.9.1.3.2 steps 3-4 (TS 29.502
// 5.2.2.3.4.1): the SMF keeps the target and answers with the setup
// request transfer the target gNB sets the session up with.
func (n *NF) handoverPreparing(ctx context.Context, c *smContext, d *models.SmfPduSessionSmContextUpdateData, n2 []byte) (updateAnswer, error) {
	if d.N2SmInfoType != models.N2SmInfoType_HANDOVER_REQUIRED || d.TargetId == nil {
		return updateAnswer{}, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing,
			"hoState PREPARING needs targetId and n2SmInfo HANDOVER_REQUIRED, got %q", d.N2SmInfoType)
	}
	if c.state != stateActive {
		return updateAnswer{}, sbi.Rejectf(http.StatusConflict, "PDU_SESSION_NOT_ACTIVE", "no user plane to hand over: PDU session is %s", c.state)
	}
	direct, err := ngapx.ParseHandoverRequiredTransfer(n2)
	if err != nil {
		return updateAnswer{}, n2Error(models.N2SmInfoType_HANDOVER_REQUIRED, err)
	}
	setup, err := ngapx.BuildPDUSessionResourceSetupRequestTransfer(c.setupTransfer())
	if err != nil {
		return updateAnswer{}, err
	}
	n.endHandover(ctx, c, "prepared again") // a new preparation replaces an unfinished one
	target := *d.TargetId
	c.ho = &handover{target: &target, direct: direct}
	return updateAnswer{hoState: models.HoState_PREPARING, n2: setup, n2Type: models.N2SmInfoType_PDU_RES_SETUP_REQ}, nil
}

// handoverPrepared is TS 23.502 4.9.1.3.2 steps 9-11 (TS 29.502
// 5.2.2.3.4.2): the target's tunnels are kept, data forwarding is set
// up, and the source gNB gets the Handover Command Transfer.
func (n *NF) handoverPrepared(ctx context.Context, c *smContext, t models.N2SmInfoType, n2 []byte) (updateAnswer, error) {
	if c.ho == nil || c.ho.prepared {
		return updateAnswer{}, sbi.Rejectf(http.StatusConflict, "HANDOVER_NOT_PREPARING", "no handover in preparation for the PDU session")
	}
	if t != models.N2SmInfoType_HANDOVER_REQ_ACK {
		return updateAnswer{}, n2Error(t, errors.New("hoState PREPARED takes HANDOVER_REQ_ACK or HANDOVER_RES_ALLOC_FAIL"))
	}
	ack, err := ngapx.ParseHandoverRequestAcknowledgeTransfer(n2)
	if err != nil {
		n.endHandover(ctx, c, "bad Handover Request Acknowledge Transfer")
		return updateAnswer{}, n2Error(t, err)
	}
	cmd := n.forwarding(ctx, c, ack)
	b, err := ngapx.BuildHandoverCommandTransfer(cmd)
	if err != nil {
		n.endHandover(ctx, c, "Handover Command Transfer")
		return updateAnswer{}, err
	}
	c.ho.prepared, c.ho.targetDL, c.ho.refused = true, ack.DL, ack.FailedQFIs
	return updateAnswer{hoState: models.HoState_PREPARED, n2: b, n2Type: models.N2SmInfoType_HANDOVER_CMD}, nil
}

// forwarding decides where the source gNB forwards downlink data during
// the move (TS 23.502 4.9.1.3.2 step 11): straight to the target's
// forwarding tunnel when the source said a direct path exists, else
// through the UPF (indirect); none when the target offered no forwarding
// tunnel or the UPF could not set it up.
func (n *NF) forwarding(ctx context.Context, c *smContext, ack ngapx.HandoverRequestAck) ngapx.HandoverCommand {
	if ack.DLForwarding == nil {
		return ngapx.HandoverCommand{}
	}
	qfis := ack.ForwardQFIs
	if len(qfis) == 0 {
		qfis = ack.QFIs
	}
	if c.ho.direct {
		return ngapx.HandoverCommand{DLForwarding: ack.DLForwarding, ForwardQFIs: qfis}
	}
	via, err := n.indirectForwarding(ctx, c, *ack.DLForwarding)
	if err != nil {
		n.log.Warn("N2 handover without data forwarding", "supi", c.supi, "psi", c.psi, "err", err)
		return ngapx.HandoverCommand{}
	}
	c.fwd.installed = true
	c.fwd.gen++
	return ngapx.HandoverCommand{DLForwarding: &via, ForwardQFIs: qfis}
}

// indirectForwarding creates the UPF's forwarding rules toward the target
// gNB's tunnel and returns the UPF's F-TEID the source forwards to.
func (n *NF) indirectForwarding(ctx context.Context, c *smContext, to ngapx.Tunnel) (ngapx.Tunnel, error) {
	fm, ok := n.n4.(createdFTEIDsModifier)
	if !ok {
		return ngapx.Tunnel{}, errNoCreatedFTEIDs
	}
	created, err := fm.ModifyCreated(ctx, n.upf, c.upSEID, forwardingRules(to))
	if err != nil {
		return ngapx.Tunnel{}, err
	}
	f, ok := created[pdrForwarding]
	if !ok || !f.IPv4.Is4() {
		_ = n.modifyN4(ctx, c, forwardingRemoved())
		return ngapx.Tunnel{}, errors.New("the UPF chose no IPv4 F-TEID for the forwarding PDR")
	}
	return ngapx.Tunnel{IPv4: f.IPv4, TEID: f.TEID}, nil
}

// forwardingRules take packets from the source gNB (Access, GTP-U
// removed) and send them into the target's tunnel (Access again).
func forwardingRules(to ngapx.Tunnel) *rules.Modification {
	return &rules.Modification{Create: rules.Rules{
		PDRs: []rules.PDR{{ID: pdrForwarding, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: chooseForwarding},
			OuterHeaderRemoval: true, FARID: farForwarding}},
		FARs: []rules.FAR{{ID: farForwarding, Action: rules.ActionForward, Destination: rules.Access,
			OuterHeader: &rules.OuterHeader{TEID: to.TEID, PeerIPv4: to.IPv4}}}}}
}

func forwardingRemoved() *rules.Modification {
	return &rules.Modification{Remove: rules.RuleIDs{PDRs: []uint16{pdrForwarding}, FARs: []uint32{farForwarding}}}
}

// handoverCompleted is TS 23.502 4.9.1.3.3 steps 6-7: the downlink goes
// to the target gNB, End Markers into the source's tunnel; the forwarding
// rules go after forwardingHold. If the UPF refuses, the session keeps the source
// tunnel and the handover stays prepared (the AMF may cancel it).
func (n *NF) handoverCompleted(ctx context.Context, c *smContext) (updateAnswer, error) {
	if c.ho == nil || !c.ho.prepared {
		return updateAnswer{}, sbi.Rejectf(http.StatusConflict, "HANDOVER_NOT_PREPARED", "no prepared handover for the PDU session")
	}
	if err := n.modifyN4(ctx, c, downlinkSwitched(c.ho.targetDL)); err != nil {
		return updateAnswer{}, sbiN4Error("N4 session modification (handover to the target)", err)
	}
	n.log.Debug("N2 handover completed", "supi", c.supi, "psi", c.psi, "from", c.dl.IPv4, "to", c.ho.targetDL.IPv4)
	refused := c.ho.refused
	c.dl, c.ho = c.ho.targetDL, nil
	if c.fwd.installed {
		n.removeForwardingLater(c, c.fwd.gen)
	}
	// Step 11: the flows the target did not set up go (pdu_handover_qos.go).
	n.tellRemovedFlows(c, n.removeRefusedFlows(ctx, c, c.flowsNotAccepted(refused, nil)))
	return updateAnswer{hoState: models.HoState_COMPLETED, upCnx: models.UpCnxState_ACTIVATED}, nil
}

// handoverRefused is the target gNB's refusal (Handover Resource
// Allocation Unsuccessful Transfer, TS 38.413 9.3.4.15): the preparation
// is undone and the UE stays with the source (TS 23.502 4.9.1.3.2).
func (n *NF) handoverRefused(ctx context.Context, c *smContext, n2 []byte) (updateAnswer, error) {
	cause, err := ngapx.ParseHandoverResourceAllocationUnsuccessfulTransfer(n2)
	n.log.Info("target gNB refused the PDU session", "supi", c.supi, "psi", c.psi, "cause", ngapx.CauseString(&cause), "err", err)
	n.endHandover(ctx, c, "target refused")
	return updateAnswer{hoState: models.HoState_CANCELLED}, nil
}

// endHandover forgets c's handover and the UPF's forwarding rules.
func (n *NF) endHandover(ctx context.Context, c *smContext, why string) {
	n.removeForwarding(ctx, c)
	if c.ho == nil {
		return
	}
	n.log.Debug("N2 handover ended", "supi", c.supi, "psi", c.psi, "reason", why)
	c.ho = nil
}

// removeForwarding takes the indirect forwarding rules away, if any.
func (n *NF) removeForwarding(ctx context.Context, c *smContext) {
	if !c.fwd.installed {
		return
	}
	c.fwd.installed = false
	if err := n.modifyN4(ctx, c, forwardingRemoved()); err != nil {
		n.log.Warn("N4 session modification (remove forwarding)", "supi", c.supi, "psi", c.psi, "err", err)
	}
}

// removeForwardingLater removes the forwarding rules of generation gen
// after forwardingHold, unless they went already (a new handover, the
// session released).
func (n *NF) removeForwardingLater(c *smContext, gen uint64) {
	time.AfterFunc(n.forwardingHold, func() {
		if n.stop.Err() != nil {
			return
		}
		n.background(func(ctx context.Context) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.state != stateReleased && c.fwd.installed && c.fwd.gen == gen {
				n.removeForwarding(ctx, c)
			}
		})
	})
}

// sbiN4Error is a UPF failure as the SBI answer (500 with the detail).
func sbiN4Error(what string, err error) error {
	return sbi.Rejectf(http.StatusInternalServerError, sbi.CauseSystemFailure, "%s: %v", what, err)
}
