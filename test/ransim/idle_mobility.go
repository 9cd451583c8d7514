package ransim

// Mobility in CM-IDLE (TS 23.502 4.2.2.2.2; TS 24.501 5.5.1.3): an idle UE
// moves without the network's help. It reselects a cell of another gNB
// (TS 38.304 5.2.4), camps there, and, entering a TA it was not registered
// in, or when T3512 expires, runs a registration update from CM-IDLE. It has
// nothing to send, so it clears "follow-on request pending" and the AMF
// releases its N2 connection once the update is done (TS 24.501 5.3.1.3):
// the UE is CM-IDLE again, its PDU sessions kept, pageable at its new gNB.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/free5gc/nas/nasMessage"
)

// Reselect makes a CM-IDLE UE camp on g (TS 38.304 5.2.4 cell reselection):
// only g pages it from now on. The network is not told; a registration
// update (UpdateRegistrationFromIdle) does that when the UE wants to.
func (u *UE) Reselect(g *GNB) error {
	if !u.Idle() {
		return ErrNotIdle
	}
	u.leaveIdle()
	u.MoveTo(g)
	if s := u.idle.stmsi.Load(); s != nil {
		g.idle.add(*s, u)
	}
	return nil
}

// UpdateRegistrationFromIdle runs a mobility (periodic false) or periodic
// registration update of a CM-IDLE UE without follow-on request, until the
// AMF has released the N2 connection again (TS 23.502 4.2.6 step 1b). It
// returns the time from the Initial UE Message to the release.
func (u *UE) UpdateRegistrationFromIdle(ctx context.Context, periodic bool) (time.Duration, error) {
	if !u.Idle() {
		return 0, ErrNotIdle
	}
	regType := uint8(nasMessage.RegistrationType5GSMobilityRegistrationUpdating)
	if periodic {
		regType = nasMessage.RegistrationType5GSPeriodicRegistrationUpdating
	}
	u.leaveIdle()
	start := time.Now()
	if _, err := u.registerFOR(ctx, regType, false); err != nil {
		if errors.Is(err, ErrReleased) {
			u.enterIdle()
		}
		return 0, err
	}
	if err := u.awaitRelease(ctx); err != nil {
		return 0, fmt.Errorf("registration update of %s from CM-IDLE: %w", u.supi, err)
	}
	return time.Since(start), nil
}

// awaitRelease waits for the AMF's UE Context Release Command (answering
// what the network sends meanwhile) and parks the UE CM-IDLE.
func (u *UE) awaitRelease(ctx context.Context) error {
	for {
		m, err := u.nextNAS(ctx)
		if errors.Is(err, ErrReleased) {
			u.enterIdle()
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
