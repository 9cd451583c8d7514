package ransim

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// The UE's 5GSM procedures (TS 24.501 6.4; TS 23.502 4.3.2.2.1, 4.3.3.2,
// 4.3.4.2): UE-requested establishment and release, and the network's
// modification and release commands.

// PDUSession is a PDU session of the UE, as the Establishment Accept and
// later Modification Commands describe it.
type PDUSession struct {
	ID       uint8
	DNN      string
	SNSSAI   *models.Snssai
	Address  netip.Addr // the UE's IPv4 address
	AMBR     nasx.SessionAMBR
	QoSFlows nasType.QoSFlowDescs
	rules    qosRules
	// Tunnel is the gNB's N3 tunnel of the session; nil when the network
	// accepted the session without setting up its resources.
	Tunnel *Tunnel
}

// DefaultQFI is the QFI of the session's default QoS rule (TS 24.501 6.2.5.1.1).
func (s *PDUSession) DefaultQFI() uint8 {
	for _, r := range s.rules {
		if r.DQR {
			return r.QFI
		}
	}
	return 0
}

// QoSRules are the session's QoS rules.
func (s *PDUSession) QoSRules() nasType.QoSRules { return nasType.QoSRules(s.rules) }

// SessionRejectError is the network refusing a 5GSM procedure with a 5GSM
// cause (TS 24.501 9.11.4.2), e.g. #27 missing or unknown DNN.
type SessionRejectError struct {
	Message string // e.g. "PDU Session Establishment Reject"
	Cause   uint8
}

func (e *SessionRejectError) Error() string {
	return fmt.Sprintf("%s: 5GSM cause #%d (%s)", e.Message, e.Cause, gsmCauseName(e.Cause))
}

// gsmCauseName names the 5GSM causes a simulator user meets (TS 24.501 9.11.4.2).
func gsmCauseName(c uint8) string {
	names := map[uint8]string{
		nasMessage.Cause5GSMInsufficientResources:                       "insufficient resources",
		nasMessage.Cause5GSMMissingOrUnknownDNN:                         "missing or unknown DNN",
		nasMessage.Cause5GSMUnknownPDUSessionType:                       "unknown PDU session type",
		nasMessage.Cause5GSMUserAuthenticationOrAuthorizationFailed:     "user authentication or authorization failed",
		nasMessage.Cause5GSMRequestRejectedUnspecified:                  "request rejected, unspecified",
		nasMessage.Cause5GSMServiceOptionTemporarilyOutOfOrder:          "service option temporarily out of order",
		nasMessage.Cause5GSMPTIAlreadyInUse:                             "PTI already in use",
		nasMessage.Cause5GSMRegularDeactivation:                         "regular deactivation",
		nasMessage.Cause5GSMNetworkFailure:                              "network failure",
		nasMessage.Cause5GSMInvalidPDUSessionIdentity:                   "invalid PDU session identity",
		nasMessage.Cause5GSMPDUSessionDoesNotExist:                      "PDU session does not exist",
		nasMessage.Cause5GSMInsufficientResourcesForSpecificSliceAndDNN: "insufficient resources for specific slice and DNN",
		nasMessage.Cause5GSMNotSupportedSSCMode:                         "not supported SSC mode",
		nasMessage.Cause5GSMInsufficientResourcesForSpecificSlice:       "insufficient resources for specific slice",
		nasMessage.Cause5GSMMissingOrUnknownDNNInASlice:                 "missing or unknown DNN in a slice",
		nasMessage.Cause5GSMSemanticallyIncorrectMessage:                "semantically incorrect message",
		nasMessage.Cause5GSMInvalidMandatoryInformation:                 "invalid mandatory information",
		nasMessage.Cause5GSMProtocolErrorUnspecified:                    "protocol error, unspecified",
		32: "service option not supported", 50: "PDU session type IPv4 only allowed",
		62: "S-NSSAI not available / slice not allowed",
	}
	if n, ok := names[c]; ok {
		return n
	}
	return "unknown cause"
}

// sscMode1 keeps the UE's IP address for the session's life (TS 23.501
// 5.6.9.2.1; value of TS 24.501 9.11.4.16).
const sscMode1 = 1

// SessionRequest says which PDU session a UE asks for.
type SessionRequest struct {
	ID     uint8 // PDU session identity, 1-15
	DNN    string
	SNSSAI *models.Snssai // nil: the first allowed S-NSSAI
}

// RequestPDUSession establishes an IPv4 PDU session on dnn (TS 24.501
// 6.4.1.2); *NotForwardedError when the AMF sends the request back,
// *SessionRejectError when the SMF rejects it.
func (u *UE) RequestPDUSession(ctx context.Context, sessionID uint8, dnn string) (*PDUSession, error) {
	s, _, err := u.EstablishPDUSession(ctx, SessionRequest{ID: sessionID, DNN: dnn})
	return s, err
}

// EstablishPDUSession runs UE-requested PDU session establishment: PDU
// Session Establishment Request (IPv4, SSC mode 1) in UL NAS Transport,
// request type "initial request" (TS 24.501 8.3.1, 8.2.10, 5.4.5.2.2), until
// the Accept arrives. It returns the time from the request to the Accept,
// which arrives with the gNB's resource setup (the gNB has answered the
// AMF by then).
func (u *UE) EstablishPDUSession(ctx context.Context, r SessionRequest) (*PDUSession, time.Duration, error) {
	if u.sec == nil || u.ranID.Load() == 0 {
		return nil, 0, errors.New("PDU session: the UE is not registered and connected")
	}
	if r.ID < 1 || r.ID > 15 {
		return nil, 0, fmt.Errorf("PDU session identity %d: want 1-15 (TS 24.501 9.4)", r.ID)
	}
	slice := r.SNSSAI
	if slice == nil && len(u.Allowed) > 0 {
		slice = &u.Allowed[0]
	}
	pti := u.newPTI()
	sm, err := nasx.BuildGSMEstablishmentRequest(nasx.GSMEstablishmentRequest{SessionID: r.ID, PTI: pti,
		Type: nasMessage.PDUSessionTypeIPv4, SSCMode: sscMode1})
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := u.sendUplink(nasx.BuildULNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation,
		Payload: sm, PDUSessionID: r.ID, RequestType: nasx.RequestInitial, SNSSAI: slice, DNN: r.DNN})); err != nil {
		return nil, 0, err
	}
	g, err := u.awaitGSM(ctx, r.ID, pti, "PDU session establishment", nas.MsgTypePDUSessionEstablishmentAccept, nas.MsgTypePDUSessionEstablishmentReject)
	if err != nil {
		return nil, 0, err
	}
	if g.Type == nas.MsgTypePDUSessionEstablishmentReject {
		return nil, 0, &SessionRejectError{Message: "PDU Session Establishment Reject", Cause: g.Cause}
	}
	elapsed := u.traced(ProcedurePDUSession, start)
	s := u.sessionFromAccept(r, slice, g.Accept)
	return s, elapsed, nil
}

func (u *UE) sessionFromAccept(r SessionRequest, slice *models.Snssai, a *nasx.GSMAccept) *PDUSession {
	s := &PDUSession{ID: r.ID, DNN: r.DNN, SNSSAI: slice, Address: a.Address, AMBR: a.AMBR, QoSFlows: a.QoSFlows,
		rules: qosRules(nil).apply(a.QoSRules), Tunnel: u.g.tunnel(u, r.ID)}
	if a.DNN != "" {
		s.DNN = a.DNN
	}
	if a.SNSSAI != nil {
		s.SNSSAI = a.SNSSAI
	}
	if s.Tunnel != nil {
		s.Tunnel.setRules(s.rules)
	}
	u.sessMu.Lock()
	u.sessions[r.ID] = s
	u.sessMu.Unlock()
	return s
}

// Session returns the UE's PDU session with the identity, nil when none.
func (u *UE) Session(id uint8) *PDUSession {
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	return u.sessions[id]
}

// ReleasePDUSession runs UE-requested PDU session release (TS 24.501
// 6.4.3.2, TS 23.502 4.3.4.2): Release Request, the network's Release
// Command (with the gNB's resource release), Release Complete. It returns
// the time from the request to the Release Complete.
func (u *UE) ReleasePDUSession(ctx context.Context, id uint8) (time.Duration, error) {
	if u.Session(id) == nil {
		return 0, fmt.Errorf("release: the UE has no PDU session %d", id)
	}
	pti := u.newPTI()
	start := time.Now()
	if err := u.sendGSM(id, 0, func() ([]byte, error) { return nasx.BuildGSMReleaseRequest(id, pti, 0) }); err != nil {
		return 0, err
	}
	g, err := u.awaitGSM(ctx, id, pti, "PDU session release", nas.MsgTypePDUSessionReleaseCommand, nas.MsgTypePDUSessionReleaseReject)
	if err != nil {
		return 0, err
	}
	if g.Type == nas.MsgTypePDUSessionReleaseReject {
		return 0, &SessionRejectError{Message: "PDU Session Release Reject", Cause: g.Cause}
	}
	if err := u.onReleaseCommand(g); err != nil {
		return 0, err
	}
	return u.traced(ProcedurePDUSessionRelease, start), nil
}

// awaitGSM waits for the 5GSM answer (one of want) to the UE's request
// with pti on session id, handling whatever else arrives meanwhile.
func (u *UE) awaitGSM(ctx context.Context, id, pti uint8, what string, want ...uint8) (*nasx.GSMAtUE, error) {
	for {
		m, err := u.nextNAS(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s %d of %s: %w", what, id, u.supi, err)
		}
		d := m.DLNASTransport
		if d == nil {
			if err := u.onCommon(m); err != nil {
				return nil, err
			}
			continue
		}
		if d.Cause5GMM != nil {
			if e := notForwarded(d); e.PDUSessionID == id || e.PDUSessionID == 0 {
				return nil, e
			}
			continue
		}
		g, err := nasx.ParseGSMAtUE(d.GetPayloadContainerContents())
		if err != nil {
			u.g.log.Warn("5GSM message discarded", "supi", u.supi, "err", err)
			continue
		}
		// A Release Command for the session ends it whatever its PTI: the
		// network may release it on its own while the UE asks (TS 24.501
		// 6.4.3.5 abnormal cases).
		answers := g.PTI == pti || g.Type == nas.MsgTypePDUSessionReleaseCommand
		if g.SessionID == id && answers && containsType(want, g.Type) {
			return g, nil
		}
		if g.SessionID == id && g.PTI == pti && g.Type == nas.MsgTypeStatus5GSM {
			return nil, &SessionRejectError{Message: "5GSM Status", Cause: g.Cause}
		}
		if err := u.onGSM(g); err != nil {
			return nil, err
		}
	}
}

func containsType(types []uint8, t uint8) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

func notForwarded(d *nasMessage.DLNASTransport) *NotForwardedError {
	e := &NotForwardedError{Cause: d.Cause5GMM.GetCauseValue(), Payload: d.GetPayloadContainerContents()}
	if d.PduSessionID2Value != nil {
		e.PDUSessionID = d.GetPduSessionID2Value()
	}
	return e
}

// onDLNASTransport handles a DL NAS Transport outside a 5GSM procedure of
// the UE: the network's commands.
func (u *UE) onDLNASTransport(d *nasMessage.DLNASTransport) error {
	if d.Cause5GMM != nil {
		u.g.log.Info("5GSM message not forwarded", "supi", u.supi, "err", notForwarded(d))
		return nil
	}
	g, err := nasx.ParseGSMAtUE(d.GetPayloadContainerContents())
	if err != nil {
		u.g.log.Warn("5GSM message discarded", "supi", u.supi, "err", err)
		return nil
	}
	return u.onGSM(g)
}

// onGSM handles the network-requested procedures: modification (TS 24.501
// 6.4.2) and release (6.4.3).
func (u *UE) onGSM(g *nasx.GSMAtUE) error {
	switch g.Type {
	case nas.MsgTypePDUSessionModificationCommand:
		return u.onModificationCommand(g)
	case nas.MsgTypePDUSessionReleaseCommand:
		return u.onReleaseCommand(g)
	}
	u.g.log.Debug("unexpected 5GSM message", "supi", u.supi, "type", g.Type, "session", g.SessionID)
	return nil
}

// onModificationCommand applies the new QoS rules, flows and AMBR and
// answers Modification Complete (TS 24.501 6.4.2.3); a command for a
// session the UE does not have gets Command Reject #43 (6.4.2.5).
func (u *UE) onModificationCommand(g *nasx.GSMAtUE) error {
	s := u.Session(g.SessionID)
	if s == nil {
		return u.sendGSM(g.SessionID, 0, func() ([]byte, error) {
			return nasx.BuildGSMModificationCommandReject(g.SessionID, g.PTI, nasMessage.Cause5GSMInvalidPDUSessionIdentity)
		})
	}
	u.sessMu.Lock()
	s.rules = s.rules.apply(g.Modify.QoSRules)
	if len(g.Modify.QoSFlows) > 0 {
		s.QoSFlows = mergeFlows(s.QoSFlows, g.Modify.QoSFlows)
	}
	if g.Modify.AMBR != nil {
		s.AMBR = *g.Modify.AMBR
	}
	if t := u.g.tunnel(u, s.ID); t != nil {
		s.Tunnel = t
		t.setRules(s.rules)
	}
	u.sessMu.Unlock()
	return u.sendGSM(g.SessionID, 0, func() ([]byte, error) { return nasx.BuildGSMModificationComplete(g.SessionID, g.PTI) })
}

// mergeFlows applies QoS flow description operations (TS 24.501 9.11.4.12).
func mergeFlows(have, changes nasType.QoSFlowDescs) nasType.QoSFlowDescs {
	out := append(nasType.QoSFlowDescs(nil), have...)
	for _, c := range changes {
		i := -1
		for j, f := range out {
			if f.QFI == c.QFI {
				i = j
			}
		}
		switch {
		case c.OperationCode == nasType.OperationCodeDeleteExistingQoSFlowDescription && i >= 0:
			out = append(out[:i], out[i+1:]...)
		case i >= 0:
			out[i] = c
		case c.OperationCode != nasType.OperationCodeDeleteExistingQoSFlowDescription:
			out = append(out, c)
		}
	}
	return out
}

// onReleaseCommand forgets the session and answers Release Complete
// (TS 24.501 6.4.3.3).
func (u *UE) onReleaseCommand(g *nasx.GSMAtUE) error {
	u.sessMu.Lock()
	delete(u.sessions, g.SessionID)
	u.sessMu.Unlock()
	return u.sendGSM(g.SessionID, 0, func() ([]byte, error) { return nasx.BuildGSMReleaseComplete(g.SessionID, g.PTI) })
}

// sendGSM sends a 5GSM message in UL NAS Transport for session id.
func (u *UE) sendGSM(id, requestType uint8, build func() ([]byte, error)) error {
	sm, err := build()
	if err != nil {
		return err
	}
	return u.sendUplink(nasx.BuildULNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation,
		Payload: sm, PDUSessionID: id, RequestType: requestType}))
}

// forgetSessions releases the UE's sessions locally, as deregistration
// does (TS 24.501 5.5.2.2.2: the network releases them without 5GSM
// signalling).
func (u *UE) forgetSessions() {
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	clear(u.sessions)
}

// newPTI allocates a procedure transaction identity for a UE-requested
// procedure: 1-254 (TS 24.501 9.6: 0 is "no PTI", 255 reserved).
func (u *UE) newPTI() uint8 {
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	u.lastPTI = u.lastPTI%254 + 1
	return u.lastPTI
}

// Serve handles what the network sends the UE while no procedure of its
// runs (Configuration Update, Modification and Release Commands) until
// ctx ends; ErrReleased when the network released the UE's connection.
func (u *UE) Serve(ctx context.Context) error {
	for {
		m, err := u.nextNAS(ctx)
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := u.onCommon(m); err != nil {
			return err
		}
	}
}
