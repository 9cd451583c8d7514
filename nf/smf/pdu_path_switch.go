package smf

// Xn based inter NG-RAN handover without UPF re-allocation at the SMF
// (TS 23.502 4.9.1.2.2): the target gNB's Path Switch Request reaches the
// SMF as UpdateSMContext with n2SmInfoType PATH_SWITCH_REQ (TS 29.502
// 5.2.2.3.6); the SMF moves the downlink to the target's tunnel, asking
// the UPF for End Markers on the old one, and answers PATH_SWITCH_REQ_ACK.
// A session the SMF cannot switch is answered PATH_SWITCH_SETUP_FAIL with
// an NGAP cause, so the AMF lists it as failed in its acknowledge, and
// stays on the old tunnel.

import (
	"context"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// pathSwitch is steps 2-5 of TS 23.502 4.9.1.2.2 for one session.
func (n *NF) pathSwitch(ctx context.Context, c *smContext, n2 []byte) (updateAnswer, error) {
	req, err := ngapx.ParsePathSwitchRequestTransfer(n2)
	if err != nil {
		n.log.Info("path switch refused: bad transfer", "supi", c.supi, "psi", c.psi, "err", err)
		return pathSwitchFailed(ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
	}
	if c.state != stateActive {
		// TS 23.502 4.9.1.2.2: only sessions with an active user plane
		// are switched; the gNB does not know this one.
		n.log.Info("path switch refused: session not active", "supi", c.supi, "psi", c.psi, "state", c.state)
		return pathSwitchFailed(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID))
	}
	// Step 3: N4 Session Modification with the target's tunnel and End
	// Marker on the old path (step 6, TS 29.244 5.2.3).
	if err := n.modifyN4(ctx, c, downlinkSwitched(req.DL)); err != nil {
		n.log.Warn("path switch refused: N4 session modification", "supi", c.supi, "psi", c.psi, "err", err)
		return pathSwitchFailed(transportResourceUnavailable)
	}
	n.log.Debug("path switched", "supi", c.supi, "psi", c.psi, "from", c.dl.IPv4, "to", req.DL.IPv4, "dl_teid", req.DL.TEID)
	c.dl = req.DL
	n.endHandover(ctx, c, "path switched") // an N2 handover left in preparation is moot
	// Step 2: flows the target did not accept go (pdu_handover_qos.go).
	n.tellRemovedFlows(c, n.removeRefusedFlows(ctx, c, c.flowsNotAccepted(nil, req.QFIs)))
	// Step 5: the UPF's uplink tunnel did not change; it is given anyway
	// (an optional IE, TS 38.413 9.3.4.9) for a target that has none.
	ack, err := ngapx.BuildPathSwitchRequestAcknowledgeTransfer(&c.ul)
	if err != nil {
		return updateAnswer{}, err
	}
	return updateAnswer{upCnx: models.UpCnxState_ACTIVATED, n2: ack, n2Type: models.N2SmInfoType_PATH_SWITCH_REQ_ACK}, nil
}

// pathSwitchSetupFailed is a session the target gNB could not set up
// (TS 23.502 4.9.1.2.2 step 1a; TS 29.502 5.2.2.3.6, failedToBeSwitched):
// its user plane is deactivated as at an AN release, so the session
// stays and downlink data pages it back through the AMF.
func (n *NF) pathSwitchSetupFailed(ctx context.Context, c *smContext, n2 []byte) (updateAnswer, error) {
	cause, err := ngapx.ParsePathSwitchRequestSetupFailedTransfer(n2)
	n.log.Info("target gNB could not set the PDU session up: user plane deactivated", "supi", c.supi, "psi", c.psi,
		"cause", ngapx.CauseString(&cause), "err", err)
	return n.deactivate(ctx, c)
}

// pathSwitchFailed answers with Path Switch Request Setup Failed Transfer
// and its cause; its octets are those of Path Switch Request Unsuccessful
// Transfer (both TS 38.413 SEQUENCE {cause, extensions}), which the AMF
// puts in the acknowledge's PDU Session Resource Released List.
func pathSwitchFailed(cause ngapType.Cause) (updateAnswer, error) {
	n2, err := ngapx.BuildPathSwitchRequestSetupFailedTransfer(cause)
	if err != nil {
		return updateAnswer{}, err
	}
	return updateAnswer{n2: n2, n2Type: models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL}, nil
}

// transportResourceUnavailable is the cause when the UPF could not take
// the new tunnel (TS 38.413 9.3.1.2, transport layer cause).
var transportResourceUnavailable = ngapType.Cause{Present: ngapType.CausePresentTransport,
	Transport: &ngapType.CauseTransport{Value: ngapType.CauseTransportPresentTransportResourceUnavailable}}
