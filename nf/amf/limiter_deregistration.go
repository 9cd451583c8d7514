package amf

// The UDM-initiated deregistration (Nudm_UECM_DeregistrationNotification,
// TS 23.502 4.2.2.2.2 step 14e, 4.2.2.3.3) in the limiter's count: a
// network-initiated procedure, counted from the notification to the end
// of the UE's N2 connection (UE Context Release Complete, or the release
// guard), or at once for a CM-IDLE context, whose SM contexts and AM
// policy are released on the spot.
//
// It is not gated: the UDM has already moved the UE elsewhere (or
// withdrawn it), its 204 is sent, and the procedure only frees the AMF's
// resources; holding it behind a full limiter would keep a stale context
// and its sessions for longer. Its slot is taken whatever E_max
// (Limiter.Force), as for paging.

import "github.com/l25gc/l25gc/ratelimit"

// kindNetworkDeregistration labels the UDM-initiated deregistration.
const kindNetworkDeregistration = "network_deregistration"

// startNetworkDeregistration counts the deregistration of a connected UE
// (on its key); its slot ends with the UE's context (endProcedures).
func (n *NF) startNetworkDeregistration(ue *ueContext) {
	n.claimProcedure(ue, mmKey(kindNetworkDeregistration), kindNetworkDeregistration)
}

// deregisterParked ends a CM-IDLE context the UDM deregistered, counted
// while its SBI clean-up runs.
func (n *NF) deregisterParked(ue *ueContext) {
	s := n.limiter.Force(kindNetworkDeregistration)
	defer s.Finish(ratelimit.ResultSuccess)
	ue.udmRegistered = false // the UDM removed the registration itself
	n.endContext(ue)
}
