package amf

// Admission of a UE context (TS 38.413 8.6.1 Initial UE Message): what an
// InitialUEMessage must pass before the AMF keeps anything for it, and the
// answer when it does not. An unauthenticated peer can send any number of
// them, so a context exists only for an initial NAS message (TS 24.501
// 4.4.6), only within the caps of amf.ngap, only while its gNB is
// connected, and only while its first message started a procedure; the
// guard (timers.go) bounds it until the UE is authenticated.

import (
	"errors"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Reasons an InitialUEMessage left no UE context, as metric labels; the
// caps are the refusals of ueTable.admit.
const (
	refusedUndecodable refusal = "undecodable"     // no 5GMM header (TS 24.501 7.1, 7.2)
	refusedNotInitial  refusal = "not-initial"     // not an initial NAS message (TS 24.501 4.4.6)
	refusedNothing     refusal = "no-procedure"    // decoded, but started no procedure
	refusedGNBGone     refusal = "association-end" // its gNB's association ended meanwhile
)

// controlOverload is the NGAP cause of a refusal at a cap (TS 38.413
// 9.3.1.2, misc: control processing overload).
var controlOverload = ngapx.CauseMisc(ngapType.CauseMiscPresentControlProcessingOverload)

var errNotInitial = errors.New("not an initial NAS message")

// initialNASType is the 5GMM message type of an initial NAS message: plain,
// or integrity protected with its plain header readable (TS 24.501 4.4.6:
// an initial message is never ciphered as a whole).
func initialNASType(raw []byte) (uint8, error) {
	h, err := nasx.PeekHeader(raw)
	if err != nil {
		return 0, err
	}
	if h.SecurityHeaderType == nas.SecurityHeaderTypeIntegrityProtected {
		if h, err = nasx.PeekHeader(raw[7:]); err != nil {
			return 0, err
		}
	}
	if h.EPD != nasMessage.Epd5GSMobilityManagementMessage || h.SecurityHeaderType != nas.SecurityHeaderTypePlainNas {
		return h.MessageType, errNotInitial
	}
	return h.MessageType, nil
}

// controlPlaneServiceRequest is CONTROL PLANE SERVICE REQUEST (TS 24.501
// 9.7, 0x4f), which package nas does not name.
const controlPlaneServiceRequest uint8 = 0x4f

// isInitialNAS: TS 24.501 4.4.6 lists the initial NAS messages.
func isInitialNAS(t uint8) bool {
	switch t {
	case nas.MsgTypeRegistrationRequest, nas.MsgTypeServiceRequest,
		nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration, controlPlaneServiceRequest:
		return true
	}
	return false
}

// screenInitialNAS checks the initial NAS message before a context exists.
// A refused one gets the 5GMM STATUS TS 24.501 7.4 prescribes for a message
// type the state does not allow (#98) or that does not exist (#97), except
// where clause 7 says to ignore it: no header (7.1, 7.2) or a 5GMM STATUS
// (never answered, lest two peers loop).
func screenInitialNAS(raw []byte) (typ uint8, answer []byte, why refusal) {
	typ, err := initialNASType(raw)
	switch {
	case err != nil && err != errNotInitial:
		return 0, nil, refusedUndecodable
	case err == nil && isInitialNAS(typ):
		return typ, nil, admitted
	case typ == nas.MsgTypeStatus5GMM || err == errNotInitial && typ == 0:
		return typ, nil, refusedNotInitial
	}
	cause := nasx.CauseMessageTypeNonExistent
	if _, known := eventOf(typ); known {
		cause = nasx.CauseMessageTypeNotCompatible
	}
	answer, _ = nasx.BuildStatus(cause)
	return typ, answer, refusedNotInitial
}

// overloadAnswer is the NAS answer to an initial message refused at a cap:
// #22 congestion (TS 24.501 5.5.1.2.5, 5.6.1.5), with T3346 for a
// Registration Request so the UE backs off (5.3.9) and the UEs refused
// together do not return together.
func overloadAnswer(typ uint8) []byte {
	var b []byte
	switch typ {
	case nas.MsgTypeRegistrationRequest:
		b, _ = nasx.BuildRegistrationRejectWithT3346(nasx.CauseCongestion, congestionBackOff())
	case nas.MsgTypeServiceRequest:
		// TS 24.501 5.6.1.5: #22 with T3346 for NAS congestion control.
		b, _ = nasx.BuildServiceRejectWith(nasx.ServiceReject{Cause: nasx.CauseCongestion, T3346: congestionBackOff()})
	}
	return b
}

// refuseInitial answers an InitialUEMessage the AMF keeps no context for:
// the NAS answer, if any, in Downlink NAS Transport, then UE Context
// Release Command so the gNB frees its side too (TS 38.413 8.3.3). The
// gNB's Complete names an AMF UE NGAP ID no longer in use and is dropped
// (onUEAssociated).
func (n *NF) refuseInitial(g *gnb, amfID, ranID int64, answer []byte, cause ngapType.Cause, why refusal) {
	n.metrics.refused.WithLabelValues(string(why)).Inc()
	n.log.Debug("InitialUEMessage refused", "gnb", g.id, "ranUeNgapId", ranID, "reason", string(why))
	if answer != nil {
		if b := n.built("DownlinkNASTransport")(ngapx.BuildDownlinkNASTransport(amfID, ranID, answer)); b != nil {
			if err := g.conn.WriteMsg(b, g.stream(amfID)); err != nil {
				n.log.Warn("N2 write", "gnb", g.id, "err", err)
			}
		}
	}
	n.sendReleaseCommand(g, amfID, ranID, cause)
}

// admitUE puts a screened UE context in the table within the caps and
// starts its guard; false: it was refused and answered.
func (n *NF) admitUE(g *gnb, ue *ueContext, typ uint8) bool {
	c := n.cfg.AMF.NGAP
	if why := n.ues.admit(ue, c.MaxUEsPerGNB, c.MaxUEs); why != admitted {
		n.refuseInitial(g, ue.amfID, ue.ranID, overloadAnswer(typ), controlOverload, why)
		return false
	}
	// removeGNB forgets the gNB before it lists its UEs: a context put
	// after that list is seen here, one put before it gets its reset.
	if n.gnb(g.id) == nil {
		n.ues.remove(ue.amfID)
		n.metrics.refused.WithLabelValues(string(refusedGNBGone)).Inc()
		return false
	}
	n.startGuard(ue, guardUnauthenticated)
	return true
}

// keepIfStarted frees at once a context whose initial message started no
// procedure: a message that did not decode or was discarded (answered, if
// at all, by the reply policy), or one that ended in a reject or release.
// Nothing would ever happen to it but the guard's expiry.
func (n *NF) keepIfStarted(g *gnb, ue *ueContext) {
	switch {
	case ue.lim.waiting:
		return // its message waits for the limiter (limiter_procedure.go)
	case ue.state == StateReleasing && !ue.deregistering:
		// The reply already sent UE Context Release Command. (A UE
		// deregistering is answered and released; it waits for the
		// Complete to be counted.)
	case ue.state == StateDeregistered && ue.timer == nil && ue.call.gen == 0:
		n.sendReleaseCommand(g, ue.amfID, ue.ranID, causeNasUnspecified())
	default:
		return
	}
	n.metrics.refused.WithLabelValues(string(refusedNothing)).Inc()
	ue.state = n.dropConnection(ue)
}
