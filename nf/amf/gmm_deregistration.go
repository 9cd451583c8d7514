package amf

// UE-initiated deregistration (TS 24.501 5.5.2.2; TS 23.502 4.2.2.3.2).

import (
	"context"
	"fmt"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// errDeregistrationNotVerified: TS 24.501 4.4.4.3.
var errDeregistrationNotVerified = fmt.Errorf("%w: Deregistration Request not verified by the UE's 5G NAS security context", errBadMAC)

// onDeregistrationRequest: normal deregistration gets Deregistration Accept
// and then UE Context Release; switch-off gets only the release. The UDM
// registration is purged and the AM policy association deleted.
func (n *NF) onDeregistrationRequest(ue *ueContext, in *input) (State, error) {
	d := in.msg.m.DeregistrationRequestUEOriginatingDeregistration
	switchOff := d.NgksiAndDeregistrationType.GetSwitchOff() == 1
	if ue.supi == "" {
		// An idle UE deregistering by 5G-GUTI: find its context (TS 24.501
		// 5.5.2.2.1). TS 24.501 4.4.4.3: a Deregistration Request that fails
		// the integrity check is processed further only after the AMF has
		// authenticated the UE (not for switch-off, the UE is gone); when
		// the AMF does not authenticate, the request is ignored. This AMF
		// does not authenticate for deregistration: it ignores the request,
		// the context stays parked untouched, and only this N2 connection,
		// which carried nothing else, is released.
		if id, err := nasx.ParseMobileIdentity(d.MobileIdentity5GS.Buffer); err == nil && id.Type == nasx.IdentityGUTI {
			if known, adopted := n.adoptIdleIfVerified(ue, id.GUTI, in.msg.raw); known && !adopted {
				n.discard(ue, errDeregistrationNotVerified)
				return n.release(ue, causeNasUnspecified())
			}
		}
	}
	n.stopTimer(ue)
	if procedureOf(ue.state) != "" {
		n.finishProcedure(ue, procRegistration, resultFailure)
	}
	ue.deregistering = true
	ue.reg = registration{}
	n.startProcedure(ue)
	n.endContext(ue)
	if !switchOff {
		n.sendPlainOrProtected(ue, n.built("DeregistrationAccept")(nasx.BuildDeregistrationAccept()))
	}
	return n.release(ue, causeNasDeregister())
}

// endContext ends the UE's 5GMM context (deregistration, a reject, a
// registration never completed, a context replaced): it is no longer
// counted as registered, its release forgets it instead of parking it, and
// its SBI state is undone at once.
func (n *NF) endContext(ue *ueContext) {
	if ue.registered {
		ue.registered = false
		n.metrics.registered.Dec()
	}
	n.forgetUE(ue)
	n.endIdle(ue)
	n.cleanupSBI(ue)
}

// cleanupSBI releases the UE's SM contexts, purges the UDM registration
// and deletes the AM policy association (TS 23.502 4.2.2.3.2 steps 2-5);
// failures are logged only.
// Done once: the context forgets what it cleaned up.
func (n *NF) cleanupSBI(ue *ueContext) {
	n.releaseSessions(ue)
	n.deletePolicy(ue)
	if ue.udmRegistered {
		n.purgeUECM(ue.supi)
		ue.udmRegistered = false
	}
}

// purgeUECM purges the UDM registration of supi (TS 29.503 5.3.2.4.2); a
// failure is logged only.
func (n *NF) purgeUECM(supi string) {
	ctx, cancel := context.WithTimeout(context.Background(), sbiTimeout)
	defer cancel()
	if err := n.opts.Consumer.DeregisterUECM(ctx, supi, n.guami.ToModel()); err != nil {
		n.log.Warn("UECM purge", "supi", supi, "err", err)
	}
}

// deletePolicy deletes the UE's AM policy association at the PCF.
func (n *NF) deletePolicy(ue *ueContext) {
	if ue.policyID != "" {
		n.deleteAMPolicy(ue.supi, ue.policyID)
		ue.policyID = ""
	}
}

// deleteAMPolicy deletes an AM policy association (TS 29.507 4.2.4); a
// failure is logged only.
func (n *NF) deleteAMPolicy(supi, id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sbiTimeout)
	defer cancel()
	if err := n.opts.Consumer.DeleteAMPolicy(ctx, id); err != nil {
		n.log.Warn("AM policy delete", "supi", supi, "err", err)
	}
}
