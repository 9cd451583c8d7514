package udr

// SQN reservation: an l25gc extension of Nudr_DataRepository beside the
// authentication subscription (TS 29.505 5.4.2.2/5.4.2.3). Not a 3GPP
// resource; a UDM that gets 404 for it falls back to the standard GET then
// PATCH, so UDMs and UDRs of other cores still work with ours.
//
// Why: with the standard resources the UDM's vector generation costs two
// UDR round trips in sequence — read SQN_HE, then write SQN_HE+1 with a
// compare-and-set — before the vector may leave (TS 33.102 C.3: no SQN
// may be issued twice). Here one round trip moves SQN_HE forward
// atomically in the store and answers the authentication subscription
// with the SQN that now belongs to the caller alone.
//
// Crash safety is the store's: IncrementSQN has written its record
// (write(2) for the embedded log, an acknowledged update for MongoDB)
// before the answer leaves, so a UDR restart resumes above every SQN it
// handed out. A UDM that dies after the UDR moved SQN_HE and before it
// used the SQN only leaves a gap; gaps are allowed (C.3.2: SQNs need only
// increase) and a USIM accepts any SQN above its highest one.

import (
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// SQNReservationPath follows the authentication subscription's path.
const SQNReservationPath = "/authentication-data/authentication-subscription/l25gc-sqn-reservation"

// SQNReservation is the answer: the authentication subscription (K, OPc,
// AMF field, as GET returns it) and the SQN reserved for one vector.
type SQNReservation struct {
	AuthenticationSubscription models.AuthenticationSubscription `json:"authenticationSubscription"`
	SQN                        string                            `json:"sqn"`
}

// reserveSQN answers POST .../l25gc-sqn-reservation: 200 SQNReservation,
// 404 USER_NOT_FOUND, 500 when the stored SQN cannot be moved.
func (n *NF) reserveSQN(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	sqn, err := n.store.IncrementSQN(r.Context(), ue, 1)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	a, err := n.store.AuthSubscription(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, SQNReservation{AuthenticationSubscription: *a, SQN: sqn})
}
