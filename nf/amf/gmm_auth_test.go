package amf

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
)

// failingPeers makes chosen SBI operations of the fake peers fail.
type failingPeers struct {
	*fakePeers
	authenticate, confirm, registerUECM error
	noHXRES                             bool // the AUSF leaves the RES* check to itself
}

func (p failingPeers) Authenticate(ctx context.Context, id, sn string, r *models.ResynchronizationInfo) (AuthVector, error) {
	if p.authenticate != nil {
		return AuthVector{}, p.authenticate
	}
	av, err := p.fakePeers.Authenticate(ctx, id, sn, r)
	if p.noHXRES {
		av.HXRESStar = ""
	}
	return av, err
}

func (p failingPeers) ConfirmAuth(ctx context.Context, uri, res string) (AuthConfirmation, error) {
	if p.confirm != nil {
		return AuthConfirmation{}, p.confirm
	}
	return p.fakePeers.ConfirmAuth(ctx, uri, res)
}

func (p failingPeers) RegisterUECM(ctx context.Context, supi string, r models.Amf3GppAccessRegistration) error {
	if p.registerUECM != nil {
		return p.registerUECM
	}
	return p.fakePeers.RegisterUECM(ctx, supi, r)
}

func problem(status int, cause string) error {
	return &sbi.ProblemError{Status: status, Problem: models.ProblemDetails{Status: int32(status), Cause: cause}}
}

// A fault of the core is never Authentication Reject, which makes the UE
// consider its USIM invalid (TS 24.501 5.4.1.3.5): an unreachable or failing
// peer gets #111 before NAS security (the UE retries after T3511, 5.5.1.2.7),
// #22 with T3346 once the reject is integrity protected; a SUCI the UDM
// cannot deconceal gets #9.
func TestPeerFailuresDuringRegistrationAreNotAuthenticationReject(t *testing.T) {
	cases := []struct {
		name      string
		peers     func(*fakePeers) Consumer
		wantCause uint8
		wantT3346 bool
	}{
		{"AUSF 504", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, authenticate: problem(504, "TARGET_NF_NOT_REACHABLE")}
		}, nasx.CauseProtocolErrorUnspecified, false},
		{"AUSF timeout", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, authenticate: context.DeadlineExceeded}
		}, nasx.CauseProtocolErrorUnspecified, false},
		{"SUCI MAC does not verify", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, authenticate: problem(403, "AUTHENTICATION_REJECTED")}
		}, nasx.CauseUEIdentityCannotBeDerived, false},
		{"SUCI protection scheme not run", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, authenticate: problem(501, "UNSUPPORTED_PROTECTION_SCHEME")}
		}, nasx.CauseUEIdentityCannotBeDerived, false},
		{"SUCI malformed", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, authenticate: problem(400, "MANDATORY_IE_INCORRECT")}
		}, nasx.CauseUEIdentityCannotBeDerived, false},
		{"AUSF confirmation 504", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, confirm: problem(504, "UPSTREAM_SERVER_ERROR")}
		}, nasx.CauseProtocolErrorUnspecified, false},
		{"AUSF confirmation context gone", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, confirm: problem(404, "CONTEXT_NOT_FOUND")}
		}, nasx.CauseProtocolErrorUnspecified, false},
		{"UDM unreachable after security mode", func(p *fakePeers) Consumer {
			return failingPeers{fakePeers: p, registerUECM: errors.New("dial tcp: connection refused")}
		}, nasx.CauseCongestion, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.amf.opts.Consumer = c.peers(h.peers)
			g := h.connect()
			g.setup()
			ue := h.newUE(g, fmt.Sprintf("%010d", 100+i), 1)
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			m := ue.dl("DownlinkNASTransport")
			for m.AuthenticationRequest != nil { // again when the AUSF lost the context
				ue.up(ue.authResponse(m))
				s := g.expect("DownlinkNASTransport")
				if h, _ := nasx.PeekHeader(s.NASPDU); h.Protected() {
					ue.up(ue.acceptSMC(s.NASPDU, nil))
					s = g.expect("DownlinkNASTransport")
				}
				m = ue.decode(s.NASPDU)
			}
			if m.RegistrationReject == nil {
				t.Fatalf("message type %d, want Registration Reject #%d", m.GmmHeader.GetMessageType(), c.wantCause)
			}
			if got := m.RegistrationReject.Cause5GMM.GetCauseValue(); got != c.wantCause {
				t.Fatalf("Registration Reject #%d, want #%d", got, c.wantCause)
			}
			if (m.RegistrationReject.T3346Value != nil) != c.wantT3346 {
				t.Fatalf("T3346 value present %v, want %v", m.RegistrationReject.T3346Value != nil, c.wantT3346)
			}
			g.expect("UEContextReleaseCommand")
		})
	}
}

// forgetfulPeers is an AUSF that restarts once between the vector and the
// confirmation: the first confirmation finds no context (404).
type forgetfulPeers struct {
	*fakePeers
	forgot *atomic.Bool
}

func (p forgetfulPeers) ConfirmAuth(ctx context.Context, uri, res string) (AuthConfirmation, error) {
	if p.forgot.CompareAndSwap(false, true) {
		return AuthConfirmation{}, problem(404, "CONTEXT_NOT_FOUND")
	}
	return p.fakePeers.ConfirmAuth(ctx, uri, res)
}

// An AUSF that restarted during the authentication (its context gone) costs
// the UE a second authentication, not its registration (issue 10 item 6;
// TS 24.501 5.4.1.3.1); a context lost twice is #111 (the case above).
func TestAUSFThatLostTheContextAuthenticatesAgain(t *testing.T) {
	h := newHarness(t, nil)
	h.amf.opts.Consumer = forgetfulPeers{fakePeers: h.peers, forgot: new(atomic.Bool)}
	g := h.connect()
	g.setup()
	ue := h.newUE(g, "0000000200", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	first := ue.dl("DownlinkNASTransport")
	if first.AuthenticationRequest == nil {
		t.Fatalf("message type %d, want Authentication Request", first.GmmHeader.GetMessageType())
	}
	ue.up(ue.authResponse(first))
	again := ue.dl("DownlinkNASTransport")
	if again.AuthenticationRequest == nil {
		t.Fatalf("after the lost context: message type %d (%+v), want a new Authentication Request", again.GmmHeader.GetMessageType(), again.RegistrationReject)
	}
	if again.AuthenticationRequest.GetRANDValue() == first.AuthenticationRequest.GetRANDValue() {
		t.Fatal("the new Authentication Request reuses the lost vector's RAND")
	}
	ue.up(ue.authResponse(again))
	s := g.expect("DownlinkNASTransport")
	if h, _ := nasx.PeekHeader(s.NASPDU); !h.Protected() {
		t.Fatalf("after the second authentication: a plain NAS message (type %d), want Security Mode Command", ue.decode(s.NASPDU).GmmHeader.GetMessageType())
	}
}

// Only a wrong RES* is Authentication Reject (TS 24.501 5.4.1.3.5): caught
// by the SEAF's HRES* check, or by the AUSF when it gave no HXRES*.
func TestWrongRESStarIsAuthenticationReject(t *testing.T) {
	for i, ausfChecks := range []bool{false, true} {
		h := newHarness(t, nil)
		h.amf.opts.Consumer = failingPeers{fakePeers: h.peers, noHXRES: ausfChecks}
		g := h.connect()
		g.setup()
		ue := h.newUE(g, fmt.Sprintf("%010d", 190+i), 1)
		g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
		ue.authResponse(ue.dl("DownlinkNASTransport"))
		ue.up(must2(t)(nasx.BuildAuthenticationResponse(make([]byte, 16))))
		if m := ue.dl("DownlinkNASTransport"); m.AuthenticationReject == nil {
			t.Fatalf("AUSF checks RES* %v: message type %d, want Authentication Reject", ausfChecks, m.GmmHeader.GetMessageType())
		}
		g.expect("UEContextReleaseCommand")
	}
}
