package smf

// Nsmf_PDUSession_UpdateSMContext at the SMF (TS 29.502 5.2.2.3): what
// the AMF relays from the gNB (N2 SM information), from the UE (5GSM) or
// the user plane connection's state (AN release, service request), each
// the next step of a procedure of TS 23.502.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// update dispatches one UpdateSMContext.
func (n *NF) update(ctx context.Context, c *smContext, d *models.SmfPduSessionSmContextUpdateData, n1, n2 []byte) (updateAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == stateReleased:
		return updateAnswer{}, sbi.Rejectf(http.StatusNotFound, sbi.CauseContextNotFound, "SM context released")
	case d.HoState != "" && d.HoState != models.HoState_NONE:
		return n.updateHandover(ctx, c, d, n2)
	case d.N2SmInfoType != "":
		return n.updateN2(ctx, c, d.N2SmInfoType, n2)
	case n1 != nil:
		return n.updateN1(ctx, c, n1)
	case d.UpCnxState == models.UpCnxState_DEACTIVATED:
		return n.deactivate(ctx, c)
	case d.UpCnxState == models.UpCnxState_ACTIVATING:
		return n.reactivate(c)
	case d.Release:
		return n.releaseCommandAnswer(ctx, c)
	}
	return updateAnswer{}, nil
}

func n2Error(t models.N2SmInfoType, err error) error {
	return sbi.Rejectf(http.StatusBadRequest, "N2_SM_ERROR", "%s: %v", t, err)
}

// updateN2 takes the gNB's answer to a setup, modify or release.
func (n *NF) updateN2(ctx context.Context, c *smContext, t models.N2SmInfoType, n2 []byte) (updateAnswer, error) {
	switch t {
	case models.N2SmInfoType_PDU_RES_SETUP_RSP:
		return n.activated(ctx, c, n2)
	case models.N2SmInfoType_PDU_RES_SETUP_FAIL:
		cause, err := ngapx.ParsePDUSessionResourceSetupUnsuccessfulTransfer(n2)
		if c.everActive {
			return n.reactivationRefused(ctx, c, ngapx.CauseString(&cause))
		}
		n.log.Warn("gNB refused the PDU session", "supi", c.supi, "psi", c.psi, "cause", ngapx.CauseString(&cause), "err", err)
		n.background(func(ctx context.Context) { n.releaseLocally(ctx, c, "gNB refused the resources") })
		return updateAnswer{}, nil
	case models.N2SmInfoType_PDU_RES_REL_RSP:
		n.releaseAnswered(c, false)
		return updateAnswer{}, nil
	case models.N2SmInfoType_PDU_RES_MOD_RSP:
		rsp, err := ngapx.ParsePDUSessionResourceModifyResponseTransfer(n2)
		if err != nil {
			return updateAnswer{}, n2Error(t, err)
		}
		return updateAnswer{}, n.modified(ctx, c, rsp.QFIs, rsp.FailedQFIs)
	case models.N2SmInfoType_PDU_RES_MOD_FAIL:
		return updateAnswer{}, n.modified(ctx, c, nil, pendingQFIs(c))
	case models.N2SmInfoType_PATH_SWITCH_REQ:
		return n.pathSwitch(ctx, c, n2)
	case models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL:
		return n.pathSwitchSetupFailed(ctx, c, n2)
	case models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL:
		return n.handoverRefused(ctx, c, n2)
	}
	return updateAnswer{}, n2Error(t, fmt.Errorf("not an N2 SM information this SMF takes"))
}

// activated is steps 15-16 of TS 23.502 4.3.2.2.1 (and of a service
// request, 4.2.3.2 step 12): the gNB's tunnel goes into the downlink FAR.
func (n *NF) activated(ctx context.Context, c *smContext, n2 []byte) (updateAnswer, error) {
	rsp, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(n2)
	if err != nil {
		return updateAnswer{}, n2Error(models.N2SmInfoType_PDU_RES_SETUP_RSP, err)
	}
	if c.state == stateReleasing {
		// The UE's Release Request overtook the gNB's answer (the AMF
		// forwards each on its own): the N4 session is already deleted
		// (TS 23.502 4.3.4.2 step 2), so there is no FAR to point at the
		// gNB, and the release goes on.
		n.log.Debug("setup response for a session being released", "supi", c.supi, "psi", c.psi)
		return updateAnswer{}, nil
	}
	n4, err := n.n4Client()
	if err == nil {
		_, err = n4.Modify(ctx, n.upf, c.upSEID, downlinkTo(rsp.DL))
	}
	if err != nil {
		return updateAnswer{}, fmt.Errorf("N4 session modification (downlink tunnel): %w", err)
	}
	// A paging attempt ends here too (TS 23.502 4.2.3.3 step 5 runs 4.2.3.2
	// steps 12-17): the UPF sends what it buffered, then new data.
	c.dl, c.state, c.paging, c.everActive = rsp.DL, stateActive, false, true
	n.log.Debug("PDU session active", "supi", c.supi, "psi", c.psi, "gnb", rsp.DL.IPv4, "dl_teid", rsp.DL.TEID)
	return updateAnswer{upCnx: models.UpCnxState_ACTIVATED}, nil
}

// deactivate is the AN release (TS 23.502 4.2.6 step 5): the downlink
// tunnel is gone; the UPF buffers downlink data and reports it.
func (n *NF) deactivate(ctx context.Context, c *smContext) (updateAnswer, error) {
	if c.state == stateInactive && c.paging {
		return n.pagingAbandoned(ctx, c)
	}
	if c.upSEID == 0 || (c.state != stateActive && c.state != stateActivating) {
		// No user plane to deactivate (being released, or not set up).
		return updateAnswer{upCnx: models.UpCnxState_DEACTIVATED}, nil
	}
	n4, err := n.n4Client()
	if err == nil {
		_, err = n4.Modify(ctx, n.upf, c.upSEID, downlinkBuffered())
	}
	if err != nil {
		return updateAnswer{}, fmt.Errorf("N4 session modification (AN release): %w", err)
	}
	// A paging attempt that got as far as ACTIVATING ends here too: the
	// FAR just written re-arms the report.
	c.dl, c.state, c.paging = ngapx.Tunnel{}, stateInactive, false
	n.endHandover(ctx, c, "AN released") // a handover in preparation cannot complete
	return updateAnswer{upCnx: models.UpCnxState_DEACTIVATED}, nil
}

// reactivationRefused: the gNB could not set the user plane up again
// (service request or paging, TS 23.502 4.2.3.2 step 12): the session
// stays with its user plane deactivated (TS 29.502 5.2.2.3.2.2), the
// downlink FAR written again so the UPF reports the next packet.
func (n *NF) reactivationRefused(ctx context.Context, c *smContext, cause string) (updateAnswer, error) {
	n.log.Info("gNB refused to reactivate the PDU session: it stays deactivated", "supi", c.supi, "psi", c.psi, "cause", cause)
	c.paging = false
	if err := n.modifyN4(ctx, c, downlinkBuffered()); err != nil {
		return updateAnswer{}, fmt.Errorf("N4 session modification (reactivation refused): %w", err)
	}
	c.dl, c.state = ngapx.Tunnel{}, stateInactive
	return updateAnswer{upCnx: models.UpCnxState_DEACTIVATED}, nil
}

// reactivate answers a service request (TS 23.502 4.2.3.2 step 5) with the
// setup request transfer for the gNB.
func (n *NF) reactivate(c *smContext) (updateAnswer, error) {
	if c.state != stateInactive && c.state != stateActive {
		return updateAnswer{}, sbi.Rejectf(http.StatusConflict, "PDU_SESSION_NOT_ACTIVE", "PDU session is %s", c.state)
	}
	n2, err := ngapx.BuildPDUSessionResourceSetupRequestTransfer(c.setupTransfer())
	if err != nil {
		return updateAnswer{}, err
	}
	c.state = stateActivating
	return updateAnswer{upCnx: models.UpCnxState_ACTIVATING, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_SETUP_REQ}, nil
}

// releaseCommandAnswer is an UpdateSMContext with release set (TS 29.502
// 5.2.2.3.2): the SMF releases the session as if the network asked.
func (n *NF) releaseCommandAnswer(ctx context.Context, c *smContext) (updateAnswer, error) {
	n1, n2, err := n.releaseCommand(ctx, c, 0, nasx.GSMCauseRegularDeactivation)
	if err != nil {
		return updateAnswer{}, err
	}
	return updateAnswer{n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_REL_CMD}, nil
}

// updateN1 takes a 5GSM message from the UE (TS 24.501 6.4). A message the
// SMF cannot act on is answered with the procedure's reject and its 5GSM
// cause (TS 24.501 7).
func (n *NF) updateN1(ctx context.Context, c *smContext, n1 []byte) (updateAnswer, error) {
	g, err := nasx.DecodeGSM(n1)
	if err == nil && g.PDUSessionID != c.psi {
		err = &nasx.GSMError{Cause: nasx.GSMCauseInvalidPDUSessionIdentity, PDUSessionID: g.PDUSessionID, PTI: g.PTI,
			Err: fmt.Errorf("PDU session identity %d on the SM context of session %d", g.PDUSessionID, c.psi)}
	}
	if err != nil {
		return gsmRejectAnswer(c, g, err)
	}
	switch g.Type {
	case nas.MsgTypePDUSessionReleaseRequest:
		return n.releaseRequested(ctx, c, g)
	case nas.MsgTypePDUSessionReleaseComplete:
		n.releaseAnswered(c, true)
	case nas.MsgTypePDUSessionModificationRequest:
		return n.modificationRequested(ctx, c, g)
	case nas.MsgTypePDUSessionModificationComplete:
		n.log.Debug("PDU session modification complete", "supi", c.supi, "psi", c.psi)
	case nas.MsgTypePDUSessionModificationCommandReject:
		return updateAnswer{}, n.modified(ctx, c, nil, pendingQFIs(c))
	case nas.MsgTypeStatus5GSM:
		n.log.Warn("5GSM status from the UE", "supi", c.supi, "psi", c.psi)
	}
	return updateAnswer{}, nil
}

// gsmRejectAnswer answers a bad 5GSM message with the reject of its
// procedure (Release Reject, Modification Reject) carrying the cause;
// others get an N1_SM_ERROR.
func gsmRejectAnswer(c *smContext, g nasx.GSM, err error) (updateAnswer, error) {
	cause := nasx.GSMCauseProtocolErrorUnspecified
	if ge, ok := err.(*nasx.GSMError); ok {
		cause = ge.Cause
	}
	var n1 []byte
	var berr error
	switch g.Type {
	case nas.MsgTypePDUSessionReleaseRequest:
		n1, berr = nasx.BuildPDUSessionReleaseReject(g.PDUSessionID, g.PTI, cause)
	case nas.MsgTypePDUSessionModificationRequest:
		n1, berr = nasx.BuildPDUSessionModificationReject(g.PDUSessionID, g.PTI, cause)
	default:
		return updateAnswer{}, sbi.Rejectf(http.StatusBadRequest, "N1_SM_ERROR", "%v", err)
	}
	if berr != nil {
		return updateAnswer{}, berr
	}
	return updateAnswer{n1: n1}, nil
}
