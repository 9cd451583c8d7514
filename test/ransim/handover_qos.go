package ransim

import "slices"

// A target gNB that cannot take every QoS flow of a session it is handed
// (TS 38.413 8.4.2.2: the flows it failed go in the QoS Flow Failed to
// Setup List of the Handover Request Acknowledge Transfer, 9.3.4.11; in an
// Xn handover they are left out of the Path Switch Request Transfer's QoS
// Flow Accepted List, 9.3.4.8). Tests set it to see the SMF remove them.

// RefuseQoSFlows makes this gNB, as a handover target, refuse the QoS
// flows qfis of every session; none given accepts all again.
func (g *GNB) RefuseQoSFlows(qfis ...uint8) {
	list := slices.Clone(qfis)
	g.refusedQFIs.Store(&list)
}

// admitFlows splits a session's flows into those the target sets up and
// those it refuses; it keeps at least the first (the default flow), since
// refusing every flow is refusing the session.
func (g *GNB) admitFlows(qfis []uint8) (admitted, refused []uint8) {
	var no []uint8
	if p := g.refusedQFIs.Load(); p != nil {
		no = *p
	}
	for i, q := range qfis {
		if i > 0 && slices.Contains(no, q) {
			refused = append(refused, q)
		} else {
			admitted = append(admitted, q)
		}
	}
	return admitted, refused
}
