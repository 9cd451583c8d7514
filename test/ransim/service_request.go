package ransim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The Service Request procedure (TS 23.502 4.2.3.2; TS 24.501 5.6.1): a
// CM-IDLE UE asks for its PDU sessions' user plane back, on its own
// (service type "data", with the Uplink data status of the sessions it
// wants) or because it was paged ("mobile terminated services",
// paging.go). The AMF answers with Initial Context Setup carrying Service
// Accept and the sessions to set up; the gNB sets their tunnels up again
// and answers with its new DL ends before the UE reads the Accept.

// ReactivationError is a Service Accept whose PDU session reactivation
// result lists sessions the network could not set up (TS 24.501 9.11.3.42).
type ReactivationError struct {
	Failed []uint8
	Causes map[uint8]uint8 // 5GMM cause per PSI, when the network gave one
}

func (e *ReactivationError) Error() string {
	return fmt.Sprintf("Service Accept: user plane of PDU sessions %v not re-activated (causes %v)", e.Failed, e.Causes)
}

// RequestService runs a UE-triggered Service Request from CM-IDLE for all
// its PDU sessions, as a UE with uplink data on each does (TS 24.501
// 5.6.1.2: service type "data", Uplink data status). It returns the time
// from the Service Request to the Service Accept, by which the gNB has
// set the sessions' tunnels up and answered the AMF.
func (u *UE) RequestService(ctx context.Context) (time.Duration, error) {
	all := u.sessionSet()
	return u.requestService(ctx, nasx.ServiceTypeData, &all)
}

// requestService sends Service Request of the service type and waits for
// the Accept (nil) or the Reject (*RejectError), answering authentication
// and security mode meanwhile (TS 24.501 5.6.1.3).
func (u *UE) requestService(ctx context.Context, serviceType uint8, uplink *nasx.PSISet) (time.Duration, error) {
	u.drain()
	if !u.Idle() || u.sec == nil {
		return 0, errors.New("service request: the UE is not registered and CM-IDLE")
	}
	// TS 38.413 8.7.6.2: the gNB holds what the AMF's overload action sheds.
	if err := u.g.awaitAdmission(ctx, rrcCauseOf(serviceType)); err != nil {
		return 0, fmt.Errorf("service request of %s: %w", u.supi, err)
	}
	full, start, err := u.sendServiceRequest(serviceType, uplink)
	if err != nil {
		return 0, err
	}
	return u.awaitServiceAccept(ctx, full, start)
}

// sendServiceRequest builds the Service Request and sends it in an
// Initial UE Message on a new N2 connection (TS 24.501 5.6.1.2); full is
// the whole request, for a Security Mode Command that asks for it.
func (u *UE) sendServiceRequest(serviceType uint8, uplink *nasx.PSISet) (full []byte, start time.Time, err error) {
	full, initial, err := u.serviceRequest(serviceType, uplink)
	if err != nil {
		return nil, start, err
	}
	u.leaveIdle()
	start = time.Now()
	return full, start, u.sendInitialWithCause(initial, rrcCauseOf(serviceType))
}

// awaitServiceAccept reads the network's answers to the Service Request
// sent at start until Service Accept or Reject.
func (u *UE) awaitServiceAccept(ctx context.Context, full []byte, start time.Time) (time.Duration, error) {
	for {
		m, err := u.nextNAS(ctx)
		if err != nil {
			if errors.Is(err, ErrReleased) {
				u.enterIdle()
			}
			return 0, fmt.Errorf("service request of %s: %w", u.supi, err)
		}
		switch m.GmmHeader.GetMessageType() {
		case nas.MsgTypeServiceAccept:
			return u.traced(ProcedureServiceRequest, start), u.onServiceAccept(m)
		case nas.MsgTypeServiceReject:
			return 0, serviceReject(m.ServiceReject)
		case nas.MsgTypeSecurityModeCommand:
			err = u.onSecurityModeCommand(m, full, false)
		default:
			err = u.onCommon(m)
		}
		if err != nil {
			return 0, fmt.Errorf("service request of %s: %w", u.supi, err)
		}
	}
}

// rrcCauseOf is the RRC establishment cause of a Service Request (TS
// 38.331 5.3.3, TS 24.501 D.1): mt-Access answering paging, mo-Data for
// uplink data.
func rrcCauseOf(serviceType uint8) aper.Enumerated {
	if serviceType == nasx.ServiceTypeMobileTerminated {
		return ngapType.RRCEstablishmentCausePresentMtAccess
	}
	return ngapType.RRCEstablishmentCausePresentMoData
}

// serviceRequest builds the whole Service Request and the initial message
// that carries it (TS 24.501 4.4.6): the cleartext IEs, and the whole
// request ciphered in the NAS message container.
func (u *UE) serviceRequest(serviceType uint8, uplink *nasx.PSISet) (full, initial []byte, err error) {
	status := u.sessionSet()
	r := nasx.ServiceRequest{ServiceType: serviceType, NgKSI: u.ngKSI, STMSI: u.guti.STMSI(),
		UplinkDataStatus: uplink, PDUSessionStatus: &status}
	if full, err = nasx.BuildServiceRequest(r); err != nil {
		return nil, nil, err
	}
	if r.Container, err = u.sec.CipherContainer(full); err != nil {
		return nil, nil, err
	}
	r.Cleartext = true
	initial, err = nasx.BuildServiceRequest(r)
	return full, initial, err
}

// sessionSet is the UE's PDU sessions as a PDU session status (TS 24.501
// 9.11.3.44).
func (u *UE) sessionSet() nasx.PSISet {
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	var s nasx.PSISet
	for id := range u.sessions {
		s = s.With(id)
	}
	return s
}

// onServiceAccept checks the reactivation result: a session the network
// could not re-activate is an error naming it (TS 24.501 5.6.1.4.1).
func (u *UE) onServiceAccept(m *nas.Message) error {
	a, err := nasx.ParseServiceAccept(m.ServiceAccept)
	if err != nil {
		return fmt.Errorf("Service Accept: %w", err)
	}
	if a.ReactivationResult == nil || len(a.ReactivationResult.IDs()) == 0 {
		return nil
	}
	return &ReactivationError{Failed: a.ReactivationResult.IDs(), Causes: a.ReactivationErrors}
}

// onInitialContextSetup handles Initial Context Setup Request (TS 38.413
// 8.3.1.2): the sessions it lists get their tunnels (the parked ones of a
// CM-IDLE UE come back with a new DL TEID), and the response names each
// DL end; the 5GSM messages of the sessions go to the UE afterwards.
// knownCapability says the request carried the UE Radio Capability.
func (g *GNB) onInitialContextSetup(ue *UE, pdu *ngapType.NGAPPDU, s ngapx.Summary) (knownCapability bool) {
	c, err := ngapx.ParseRANInitialContextSetupRequest(pdu)
	if err != nil {
		g.log.Warn("Initial Context Setup Request", "err", err)
		g.send(s.AMFUEID, s.RANUEID, ngapx.BuildInitialContextSetupResponse)
		return false
	}
	results := make([]ngapx.RANSessionResult, 0, len(c.Sessions)+len(c.Unreadable))
	for _, rs := range c.Sessions {
		t := g.activate(ue, rs)
		results = append(results, ngapx.RANSessionResult{ID: rs.ID, DL: t.DL(), QFIs: t.QFIs()})
	}
	for _, id := range c.Unreadable {
		cause := ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage)
		results = append(results, ngapx.RANSessionResult{ID: id, Cause: &cause})
	}
	g.send(c.AMFUEID, c.RANUEID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildRANInitialContextSetupResponse(amfID, ranID, results)
	})
	for _, rs := range c.Sessions {
		g.deliverNAS(ue, c.AMFUEID, "InitialContextSetupRequest", rs.NASPDU)
	}
	return c.RadioCapability != nil
}

// activate sets up the tunnel of a session the AMF lists: the UE's parked
// tunnel of this gNB again, else a new one.
func (g *GNB) activate(ue *UE, rs ngapx.RANSessionSetup) *Tunnel {
	qfis := make([]uint8, 0, len(rs.Flows))
	for _, f := range rs.Flows {
		qfis = append(qfis, f.QFI)
	}
	s := ue.Session(rs.ID)
	var t *Tunnel
	if s != nil {
		ue.sessMu.Lock()
		t = s.Tunnel
		ue.sessMu.Unlock()
	}
	if t != nil && t.p == g.up && t.parked.Load() {
		g.up.reactivate(t, rs.UL, qfis)
	} else {
		old := t
		t = g.up.newTunnel(rs.ID, rs.UL, qfis)
		if s != nil {
			// A session the UE knows gets the new tunnel as its own, and
			// its downlink goes where the old tunnel's went.
			ue.sessMu.Lock()
			s.Tunnel = t
			t.setRules(s.rules)
			ue.sessMu.Unlock()
		}
		if old != nil {
			// The UE's IP stack (a TUN bound to the first tunnel)
			// follows the session to its new tunnel, as after a
			// handover: an idle UE that reselected another gNB comes
			// back there (idle_mobility.go).
			t.sink.Store(old.sink.Load())
			old.next.Store(t)
		}
	}
	t.setupRANQoS(rs)
	g.putTunnel(ue, t)
	return t
}
