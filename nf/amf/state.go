package amf

import (
	"fmt"
	"slices"
)

// State is the 5GMM state of a UE in the AMF (TS 24.501 5.1.3.2.2), refined
// by which common procedure is running.
type State int

const (
	StateDeregistered         State = iota // 5GMM-DEREGISTERED, nothing running
	StateIdentification                    // Identity Request sent, T3570 running
	StateAwaitingVector                    // the AUSF asked for a 5G-AKA vector (sbi_call.go)
	StateAuthentication                    // Authentication Request sent, T3560 running
	StateAwaitingConfirmation              // RES* sent to the AUSF
	StateSecurityMode                      // Security Mode Command sent, T3560 running
	StateAwaitingPeers                     // UDM, NSSF and PCF asked at once (registration_peers.go)
	StateRegistering                       // Registration Accept sent, T3550 running
	StateRegistered                        // 5GMM-REGISTERED
	StateReleasing                         // UE Context Release Command sent
)

func (s State) String() string {
	return [...]string{"DEREGISTERED", "IDENTIFICATION", "AWAITING_AUSF_VECTOR", "AUTHENTICATION",
		"AWAITING_AUSF_CONFIRMATION", "SECURITY_MODE", "AWAITING_UDM_NSSF_PCF",
		"REGISTERING", "REGISTERED", "RELEASING"}[s]
}

// Event is what happens to a UE: an uplink NAS message, an NGAP message, a
// timer, a peer NF's notification or the answer to the AMF's own request. Events carry ids, never pointers (STYLE.md habit 5).
type Event int

const (
	EvRegistrationRequest Event = iota
	EvIdentityResponse
	EvAuthenticationResponse
	EvAuthenticationFailure
	EvSecurityModeComplete
	EvSecurityModeReject
	EvRegistrationComplete
	EvDeregistrationRequest
	EvConfigurationUpdateComplete
	EvStatus
	EvTimerExpiry
	EvContextSetupResponse
	EvContextSetupFailure
	EvReleaseRequest
	EvReleaseComplete
	EvReset
	EvNetworkDeregistration // the UDM deregistered the AMF for the UE (namf_callback.go)
	EvAuthVector            // the AUSF's answer to Nausf_UEAuthentication_Authenticate
	EvAuthConfirmation      // the AUSF's answer to the RES* confirmation
	EvPeersAnswer           // the UDM's, NSSF's and PCF's answers of TS 23.502 4.2.2.2.2 steps 14-16
	EvULNASTransport        // UL NAS Transport (gmm_nas_transport.go)
	EvServiceRequest        // Service Request (gmm_service_request.go)
)

func (e Event) String() string {
	return [...]string{"RegistrationRequest", "IdentityResponse", "AuthenticationResponse",
		"AuthenticationFailure", "SecurityModeComplete", "SecurityModeReject", "RegistrationComplete",
		"DeregistrationRequest", "ConfigurationUpdateComplete", "5GMMStatus", "TimerExpiry",
		"InitialContextSetupResponse", "InitialContextSetupFailure", "UEContextReleaseRequest",
		"UEContextReleaseComplete", "NGReset", "UDMDeregistrationNotification", "AUSFAuthVector",
		"AUSFConfirmation", "PeersAnswer", "ULNASTransport", "ServiceRequest"}[e]
}

// handler validates and acts on one event; it returns the next state, or an
// error that the reply policy (reply.go) turns into the answer.
type handler func(n *NF, ue *ueContext, in *input) (State, error)

// transition is one row of the table: in state From, event On is handled by
// Do, which may only lead to the states in To.
type transition struct {
	From State
	On   Event
	Do   handler
	To   []State
}

// notReleasing are the states in which the UE's signalling connection is up.
var notReleasing = []State{StateDeregistered, StateIdentification, StateAwaitingVector, StateAuthentication,
	StateAwaitingConfirmation, StateSecurityMode, StateAwaitingPeers, StateRegistering, StateRegistered}

// table is the one place that says which event is accepted in which state and
// where it may lead (TS 24.501 5.4, 5.5.1, 5.5.2; TS 38.413 8.3).
func table() []transition {
	var t []transition
	add := func(from []State, on Event, do handler, to ...State) {
		for _, f := range from {
			t = append(t, transition{From: f, On: on, Do: do, To: to})
		}
	}
	all := append(slices.Clone(notReleasing), StateReleasing)
	anyActive := notReleasing
	regOutcomes := []State{StateIdentification, StateAwaitingVector, StateRegistering, StateReleasing}
	only := func(s State) []State { return []State{s} }

	// Registration in the order of TS 23.502 4.2.2.2.2. A peer's answer is
	// accepted only in the state that waits for it (sbi_call.go); a stale
	// one leaves the state as it is.
	// TS 24.501 5.5.1.2.8 c)/d), 5.5.1.3: a new Registration Request restarts
	// the procedure in any state.
	add(anyActive, EvRegistrationRequest, (*NF).onRegistrationRequest, regOutcomes...)
	add(only(StateIdentification), EvIdentityResponse, (*NF).onIdentityResponse, StateAwaitingVector, StateReleasing)
	add(only(StateAwaitingVector), EvAuthVector, (*NF).onAuthVector, StateAwaitingVector, StateAuthentication)
	add(only(StateAuthentication), EvAuthenticationResponse, (*NF).onAuthenticationResponse, StateAwaitingConfirmation, StateReleasing)
	add(only(StateAuthentication), EvAuthenticationFailure, (*NF).onAuthenticationFailure, StateAwaitingVector, StateReleasing)
	add(only(StateAwaitingConfirmation), EvAuthConfirmation, (*NF).onAuthConfirmation, StateAwaitingConfirmation, StateAwaitingVector, StateSecurityMode)
	// A Service Request that failed the integrity check goes on after
	// security mode (TS 24.501 5.6.1.3), straight to Registered.
	add(only(StateSecurityMode), EvSecurityModeComplete, (*NF).onSecurityModeComplete, StateAwaitingPeers, StateReleasing, StateRegistered)
	add(only(StateSecurityMode), EvSecurityModeReject, (*NF).onSecurityModeReject, StateReleasing)
	add(only(StateAwaitingPeers), EvPeersAnswer, (*NF).onPeersAnswer, StateAwaitingPeers, StateRegistering)
	add([]State{StateRegistering}, EvRegistrationComplete, (*NF).onRegistrationComplete, StateRegistered, StateReleasing)
	add(anyActive, EvDeregistrationRequest, (*NF).onDeregistrationRequest, StateReleasing)
	add(anyActive, EvConfigurationUpdateComplete, (*NF).stay, anyActive...)
	// TS 24.501 5.4.5.2.1: a registered UE transports payloads; the UE is
	// registered from the Registration Accept on (T3550 may still run).
	add([]State{StateRegistering, StateRegistered}, EvULNASTransport, (*NF).onULNASTransport, StateRegistering, StateRegistered)
	// TS 24.501 5.6.1: a Service Request comes from a UE in CM-IDLE (a new
	// connection) or, registered, in CM-CONNECTED (5.6.1.1).
	add([]State{StateDeregistered, StateRegistered}, EvServiceRequest, (*NF).onServiceRequest,
		StateRegistered, StateReleasing, StateAwaitingVector)
	add(all, EvStatus, (*NF).onStatus, all...)
	add(all, EvTimerExpiry, (*NF).onTimerExpiry, all...)
	add(all, EvContextSetupResponse, (*NF).stay, all...)
	add(anyActive, EvContextSetupFailure, (*NF).onContextSetupFailure, StateReleasing)
	add(anyActive, EvReleaseRequest, (*NF).onReleaseRequest, StateReleasing)
	add([]State{StateReleasing}, EvReleaseRequest, (*NF).stay, StateReleasing)
	add(all, EvReleaseComplete, (*NF).onReleaseComplete, StateDeregistered, StateRegistered)
	add(all, EvReset, (*NF).onReset, StateDeregistered, StateRegistered)
	add(all, EvNetworkDeregistration, (*NF).onNetworkDeregistration, StateReleasing)
	return t
}

type stateEvent struct {
	s State
	e Event
}

// machine indexes the table.
type machine map[stateEvent]transition

func newMachine() machine {
	m := machine{}
	for _, t := range table() {
		m[stateEvent{t.From, t.On}] = t
	}
	return m
}

// errNotInState is returned for an event the table does not accept in the
// UE's state (TS 24.501 7.4: 5GMM cause #98 / #101).
type errNotInState struct {
	s State
	e Event
}

func (e errNotInState) Error() string { return fmt.Sprintf("%s not expected in state %s", e.e, e.s) }

// step runs ev through the table and checks where the handler led.
func (m machine) step(n *NF, ue *ueContext, ev Event, in *input) error {
	t, ok := m[stateEvent{ue.state, ev}]
	if !ok {
		return errNotInState{ue.state, ev}
	}
	next, err := t.Do(n, ue, in)
	if err != nil {
		return err
	}
	if !slices.Contains(t.To, next) {
		return fmt.Errorf("bug: %s in %s led to %s, table allows %v", ev, t.From, next, t.To)
	}
	if next != ue.state {
		n.log.Debug("UE state", "amfUeNgapId", ue.amfID, "from", ue.state, "to", next, "event", ev)
	}
	ue.state = next
	return nil
}

// stay handles an event that changes nothing.
func (n *NF) stay(ue *ueContext, _ *input) (State, error) { return ue.state, nil }
