package ausf

// Nausf_UEAuthentication producer (TS 29.509 5.2.2, resources of 6.1.3).

import (
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

const ueAuthPath = "/nausf-auth/v1/ue-authentications/"

// handleAuthenticate is Nausf_UEAuthentication_Authenticate (TS 29.509
// 5.2.2.2.2): 201 with the UeAuthenticationCtx and, as its Location, the
// authentication's URI; the 5g-aka link is where to PUT RES*.
func (n *NF) handleAuthenticate(w http.ResponseWriter, r *http.Request) {
	var in models.AuthenticationInfo
	if !sbi.DecodeJSON(w, r, &in) {
		return
	}
	ch, err := n.authenticate(r.Context(), &in)
	if err != nil {
		n.log.Info("no authentication", "supiOrSuci", in.SupiOrSuci, "err", err)
		sbi.WriteError(w, "UDM", err)
		return
	}
	uri := sbi.ResourceURI(r, ueAuthPath+ch.id)
	w.Header().Set("Location", uri)
	sbi.WriteJSON(w, http.StatusCreated, models.UeAuthenticationCtx{
		AuthType:           models.AusfUeAuthenticationAuthType__5_G_AKA,
		Var5gAuthData:      ch.av,
		Links:              map[string][]models.Link{"5g-aka": {{Href: uri + "/5g-aka-confirmation"}}},
		ServingNetworkName: ch.snn,
	})
}

// handleConfirm is the 5G AKA confirmation (TS 29.509 5.2.2.2.2 step 3,
// 6.1.3.3): 200 ConfirmationDataResponse with the result.
func (n *NF) handleConfirm(w http.ResponseWriter, r *http.Request) {
	var in models.ConfirmationData
	if !sbi.DecodeJSON(w, r, &in) {
		return
	}
	res, err := n.confirm(r.PathValue("authCtxId"), &in)
	if err != nil {
		sbi.WriteError(w, "UDM", err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, res)
}
