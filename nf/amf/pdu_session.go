package amf

// The AMF's PDU session routing contexts (TS 24.501 5.4.5.2: the AMF
// keeps, per PDU session ID, which SMF serves the session) and the SBI
// calls on them that run off the UE's key.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
)

// PDUSession is the routing context of one PDU session: all the AMF keeps
// of it, and what an AMF needs to reach the session's SMF again (exported,
// with JSON names, for persistence).
type PDUSession struct {
	ID     uint8         `json:"pduSessionId"` // 1-15 (TS 24.007 11.2.3.1b)
	SNSSAI models.Snssai `json:"sNssai"`
	DNN    string        `json:"dnn"`
	// SMFURI is the API root of the serving SMF's nsmf-pdusession.
	SMFURI string `json:"smfUri"`
	// ContextURI is the SM context's resource (the Location of
	// CreateSMContext, TS 29.502 5.2.2.2); "" while the creation runs.
	ContextURI string `json:"smContextRef,omitempty"`
	// StatusTag names this SM context in the smContextStatusUri the AMF
	// gives its SMF (namf_comm_n1n2.go): the SMF's status notification
	// carries no SM context reference (TS 29.502 6.1.6.2.8), so without it
	// a late notification about an older context of the same PDU session
	// ID would end the newer one. "" for a context stored by an AMF that
	// did not tag them.
	StatusTag string `json:"statusTag,omitempty"`
	// early holds the gNB's answers that came before the SMF's answer to
	// CreateSMContext (the SMF may send N1N2MessageTransfer before the
	// AMF has read its 201); they go on once the context is known.
	early []ngapx.SessionOutcome
	// earlyN1 holds the UE's 5GSM messages for the session that came
	// before the SMF's answer to CreateSMContext: the SMF's
	// N1N2MessageTransfer can bring the accept to the UE first, and the UE
	// may answer it at once (a release request). They go to the SMF once
	// the context is known, or back to the UE if it never is.
	earlyN1 []n1SM
	// deactivated closes when the SMF answered the last deactivation of
	// the user plane (AN release): an activation waits for it, so the SMF
	// never sees ACTIVATING overtaken by an older DEACTIVATED
	// (gmm_service_request.go).
	deactivated chan struct{}
}

// created says whether the SMF has confirmed the SM context.
func (s *PDUSession) created() bool { return s.ContextURI != "" }

// pduState is a UE's PDU session state in the AMF.
type pduState struct {
	sessions map[uint8]*PDUSession
	// selection is the UE's SMF selection subscription data, read once per
	// registration from the UDM (nil: not read yet).
	selection *models.SmfSelectionSubscriptionData
}

func (p *pduState) get(id uint8) *PDUSession {
	return p.sessions[id]
}

func (p *pduState) put(s *PDUSession) {
	if p.sessions == nil {
		p.sessions = map[uint8]*PDUSession{}
	}
	p.sessions[s.ID] = s
}

func (p *pduState) remove(id uint8) { delete(p.sessions, id) }

// forgetContext removes session id only while it is still the SM context
// at uri: an SMF's 404 about an older context of the ID (a release still
// finishing when the UE reused the ID, TS 24.501 6.4.1.2) leaves the newer
// one alone.
func (p *pduState) forgetContext(id uint8, uri string) {
	if s := p.get(id); s != nil && s.ContextURI == uri {
		p.remove(id)
	}
}

// endedByStatus removes session id when the SMF's status notification
// with tag is about it (TS 29.502 5.2.2.5.2) and says whether it was. A
// notification without a tag comes from a URI given before contexts were
// tagged and ends whatever session has the ID, as it always did.
func (p *pduState) endedByStatus(id uint8, tag string) bool {
	s := p.get(id)
	if s == nil || tag != "" && s.StatusTag != tag {
		return false
	}
	p.remove(id)
	return true
}

// newStatusTag is a fresh SM context's StatusTag: random, so that tags
// given before an AMF restart (kept with the stored sessions) are not
// given again.
func newStatusTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Sessions lists a UE's PDU sessions (for persistence: the UE's context
// owner calls it on the UE's key).
func (ue *ueContext) Sessions() []PDUSession {
	out := make([]PDUSession, 0, len(ue.pdu.sessions))
	for _, s := range ue.pdu.sessions {
		out = append(out, *s)
	}
	return out
}

// storedSessions are the sessions whose SM context exists (a creation
// still running has none to reach after a restart).
func (ue *ueContext) storedSessions() []PDUSession {
	var out []PDUSession
	for _, s := range ue.pdu.sessions {
		if s.ContextURI != "" {
			out = append(out, PDUSession{ID: s.ID, SNSSAI: s.SNSSAI, DNN: s.DNN, SMFURI: s.SMFURI, ContextURI: s.ContextURI, StatusTag: s.StatusTag})
		}
	}
	slices.SortFunc(out, func(a, b PDUSession) int { return int(a.ID) - int(b.ID) })
	return out
}

// RestoreSessions puts back sessions read from storage.
func (ue *ueContext) RestoreSessions(list []PDUSession) {
	for i := range list {
		s := list[i]
		ue.pdu.put(&s)
	}
}

// smCall runs do off the UE's key, like call (sbi_call.go), but beside the
// 5GMM procedure's own call: a PDU session's SBI exchange neither waits
// for nor cancels a registration's. then runs on the UE's key with the
// UE looked up again by AMF UE NGAP ID; when the UE is gone (released,
// or back from CM-IDLE under another id), gone runs instead, on its own
// goroutine, to undo what the call created.
func (n *NF) smCall(ue *ueContext, do func(context.Context) (SMAnswer, error),
	then func(*ueContext, SMAnswer, error), gone func(SMAnswer, error)) {
	id := ue.amfID
	parent := n.trace.Context(n.calls, id)
	n.workers.Go(func() {
		ctx, cancel := context.WithTimeout(parent, sbiTimeout)
		defer cancel()
		cctx, span := tracing.Start(ctx, "SMF call", tracing.HopConsumer)
		a, err, crash := runSM(cctx, do)
		span.End()
		event := n.trace.Event(ctx, id, "SMFAnswer", func() {
			if u := n.ues.get(id); u != nil {
				then(u, a, err)
			} else if gone != nil {
				go gone(a, err)
			}
		})
		if crash != nil {
			event = func() { panic(crash) }
		}
		if n.disp.Dispatch(ratelimit.UE(id), event) != nil && gone != nil {
			gone(a, err) // the AMF is stopping
		}
	})
}

// runSM runs do, turning a panic into a value (see runContained).
func runSM(ctx context.Context, do func(context.Context) (SMAnswer, error)) (a SMAnswer, err error, crash any) {
	defer func() {
		if r := recover(); r != nil {
			crash = fmt.Sprintf("SM call: %v\n%s", r, debug.Stack())
		}
	}()
	a, err = do(ctx)
	return a, err, nil
}

// releaseSessions releases every SM context of the UE (TS 23.502
// 4.2.2.3.2 step 2, 4.2.2.3.3 step 2: deregistration; and a context that
// ends otherwise) without waiting: the UE's context ends now whatever the
// SMFs answer, and a slow SMF holds up neither it nor other UEs. The SMF
// releases the user plane and, having been told by the AMF, sends nothing
// to the UE (TS 23.502 4.3.4.2 step 1: AMF-initiated, UE already gone).
func (n *NF) releaseSessions(ue *ueContext) {
	for id, s := range ue.pdu.sessions {
		n.releaseSMContext(ue.supi, s, models.SmfPduSessionSmContextReleaseData{})
		delete(ue.pdu.sessions, id)
	}
	ue.pdu.selection = nil
}

// releaseSMContext releases one SM context on its own goroutine; a failure
// is logged only (the SMF's own guards end a context nobody serves).
func (n *NF) releaseSMContext(supi string, s *PDUSession, data models.SmfPduSessionSmContextReleaseData) {
	if !s.created() {
		return // the creation's answer, arriving for no session, releases it (gsm_transport.go)
	}
	uri, id := s.ContextURI, s.ID
	n.workers.Go(func() {
		ctx, cancel := context.WithTimeout(n.calls, sbiTimeout)
		defer cancel()
		if err := n.opts.Sessions.ReleaseSMContext(ctx, uri, data); err != nil {
			n.log.Warn("SM context release", "supi", supi, "pduSessionId", id, "err", err)
		}
	})
}

// deactivateSessions: the UE went to CM-IDLE (TS 23.502 4.2.6 step 5):
// the SMF of each session deactivates its user plane (TS 29.502
// 5.2.2.3.2.2, upCnxState DEACTIVATED). Not awaited, and a failure only
// logged: the N2 connection is gone whatever the SMF answers. The routing
// contexts stay; re-activation (Service Request) comes with paging.
func (n *NF) deactivateSessions(ue *ueContext) {
	data := models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}
	listed := ue.activeUP
	ue.activeUP = nil
	for _, s := range ue.pdu.sessions {
		if !s.created() || listed != nil && !listed.Has(s.ID) {
			continue // TS 23.502 4.2.6 step 4: the sessions the gNB listed
		}
		uri, id, supi := s.ContextURI, s.ID, ue.supi
		done := make(chan struct{})
		s.deactivated = done
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(n.calls, sbiTimeout)
			defer cancel()
			if _, err := n.opts.Sessions.UpdateSMContext(ctx, uri, data, nil, nil); err != nil {
				n.log.Warn("user plane deactivation", "supi", supi, "pduSessionId", id, "err", err)
			}
		}()
	}
}

// releaseOnInitialRegistration: a UE registering initially holds no PDU
// session (TS 24.501 5.5.2: a UE leaving 5GMM-REGISTERED releases its
// sessions locally, and initial registration starts from 5GMM-DEREGISTERED), so the routing contexts a kept or adopted 5GMM
// context still names are stale; their SM contexts are released.
func (n *NF) releaseOnInitialRegistration(ue *ueContext) {
	if ue.reg.regType == nasMessage.RegistrationType5GSInitialRegistration && len(ue.pdu.sessions) > 0 {
		n.releaseSessions(ue)
	}
}
