package nrf

// Nnrf_NFManagement producer (TS 29.510 5.2.2, resources of 6.1.3).

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// handleRegister is NFRegister / NFUpdate by complete replacement
// (TS 29.510 5.2.2.2, 5.2.2.3.1): 201 when the instance is new, 200 when it
// replaces an earlier profile (a restarted NF re-registering under its id).
// The answer carries the heartBeatTimer the NRF assigns (5.2.2.2.2: the
// NRF may override the NF's proposal); subscribers learn of the change.
func (n *NF) handleRegister(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("nfInstanceID")
	if !n.mayChange(w, r, id) {
		return
	}
	var p models.NrfNfManagementNfProfile
	if !sbi.DecodeJSON(w, r, &p) {
		return
	}
	if err := validateProfile(id, &p); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidMsgFormat, err.Error())
		return
	}
	if old, ok := n.reg.get(id); (ok && !n.certAllows(w, r, old.NfType, id)) || !n.certAllows(w, r, p.NfType, id) {
		return
	}
	p.HeartBeatTimer = int32(n.heartbeat / time.Second)
	if old := n.reg.put(p, n.now()); old != nil {
		n.log.Info("NF re-registered", "nfInstanceId", id, "nfType", p.NfType, "was", old.NfStatus)
		n.notify(models.NotificationEventType_PROFILE_CHANGED, p)
		sbi.WriteJSON(w, http.StatusOK, p)
		return
	}
	n.log.Info("NF registered", "nfInstanceId", id, "nfType", p.NfType)
	n.notify(models.NotificationEventType_REGISTERED, p)
	w.Header().Set("Location", sbi.ResourceURI(r, sbi.NFManagementPath+id))
	sbi.WriteJSON(w, http.StatusCreated, p)
}

// validateProfile checks the mandatory attributes of NFProfile (TS 29.510
// 6.1.6.2.2: nfInstanceId, nfType, nfStatus) and that the body names the
// instance of the URI (5.2.2.2.2).
func validateProfile(id string, p *models.NrfNfManagementNfProfile) error {
	switch {
	case p.NfInstanceId != id:
		return fmt.Errorf("nfInstanceId %q does not match the URI's %q", p.NfInstanceId, id)
	case p.NfType == "":
		return errors.New("nfType is missing")
	case p.NfStatus == "":
		return errors.New("nfStatus is missing")
	case !validStatus(p.NfStatus):
		return fmt.Errorf("nfStatus %q is not REGISTERED, SUSPENDED or UNDISCOVERABLE", p.NfStatus)
	}
	return nil
}

func validStatus(s models.NrfNfManagementNfStatus) bool {
	switch s {
	case models.NrfNfManagementNfStatus_REGISTERED, models.NrfNfManagementNfStatus_SUSPENDED,
		models.NrfNfManagementNfStatus_UNDISCOVERABLE:
		return true
	}
	return false
}

// handleGetInstance is NFProfileRetrieval (TS 29.510 5.2.2.9).
func (n *NF) handleGetInstance(w http.ResponseWriter, r *http.Request) {
	p, ok := n.reg.get(r.PathValue("nfInstanceID"))
	if !ok {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceNotFound, "no NF instance "+r.PathValue("nfInstanceID"))
		return
	}
	sbi.WriteJSON(w, http.StatusOK, p)
}

// handleUpdate is NFUpdate by JSON Patch (RFC 6902), used as the heartbeat
// (TS 29.510 5.2.2.3.2): only nfStatus and load may change this way. Every
// accepted patch counts as a heartbeat; a change of nfStatus (e.g. a
// suspended NF heard of again) is notified. 404 for an instance the NRF
// does not know tells the NF to register again.
func (n *NF) handleUpdate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("nfInstanceID")
	if !n.mayChange(w, r, id) {
		return
	}
	if old, ok := n.reg.get(id); ok && !n.certAllows(w, r, old.NfType, id) {
		return
	}
	var patch []models.PatchItem
	if !sbi.DecodeJSON(w, r, &patch) {
		return
	}
	var rejected *patchError
	before, after, found, err := n.reg.update(r.PathValue("nfInstanceID"), n.now(), func(p *models.NrfNfManagementNfProfile) error {
		return applyPatch(p, patch)
	})
	if err == nil && before.NfStatus != after.NfStatus {
		n.log.Info("NF status changed", "nfInstanceId", after.NfInstanceId, "from", before.NfStatus, "to", after.NfStatus)
		n.notify(models.NotificationEventType_PROFILE_CHANGED, after)
	}
	switch {
	case !found:
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceNotFound, "no NF instance "+r.PathValue("nfInstanceID"))
	case errors.As(err, &rejected):
		sbi.WriteProblem(w, rejected.status, rejected.cause, rejected.detail)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// patchError says why a patch was refused, with its TS 29.500 cause.
type patchError struct {
	status        int
	cause, detail string
}

func (e *patchError) Error() string { return e.detail }

// applyPatch applies every item or, on the first bad one, returns a
// *patchError (the caller then keeps the old profile: the patch is atomic).
func applyPatch(p *models.NrfNfManagementNfProfile, patch []models.PatchItem) error {
	for _, it := range patch {
		if it.Op != models.PatchOperation_REPLACE && it.Op != models.PatchOperation_ADD {
			return &patchError{http.StatusForbidden, sbi.CauseModificationNotAllowed, fmt.Sprintf("op %q on %s", it.Op, it.Path)}
		}
		switch it.Path {
		case "/nfStatus":
			s, _ := it.Value.(string)
			if !validStatus(models.NrfNfManagementNfStatus(s)) {
				return &patchError{http.StatusBadRequest, sbi.CauseInvalidMsgFormat, fmt.Sprintf("nfStatus %v", it.Value)}
			}
			p.NfStatus = models.NrfNfManagementNfStatus(s)
		case "/load":
			l, ok := it.Value.(float64)
			if !ok || l < 0 || l > 100 || l != float64(int32(l)) {
				return &patchError{http.StatusBadRequest, sbi.CauseInvalidMsgFormat, fmt.Sprintf("load %v is not an integer 0..100", it.Value)}
			}
			p.Load = int32(l)
		default:
			return &patchError{http.StatusForbidden, sbi.CauseModificationNotAllowed, "only /nfStatus and /load may be patched, not " + it.Path}
		}
	}
	return nil
}

// handleDeregister is NFDeregister (TS 29.510 5.2.2.4).
func (n *NF) handleDeregister(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("nfInstanceID")
	if !n.mayChange(w, r, id) {
		return
	}
	if old, ok := n.reg.get(id); ok && !n.certAllows(w, r, old.NfType, id) {
		return
	}
	p, ok := n.reg.remove(id)
	if !ok {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceNotFound, "no NF instance "+id)
		return
	}
	n.log.Info("NF deregistered", "nfInstanceId", id)
	n.subs.removeOf(id) // TS 29.510 5.2.2.4: its subscriptions end with it
	n.notify(models.NotificationEventType_DEREGISTERED, p)
	w.WriteHeader(http.StatusNoContent)
}

// handleList is NFListRetrieval (TS 29.510 5.2.2.8): the URIs of the
// registered instances, optionally of one nf-type and at most limit of them.
func (n *NF) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	nfType := models.NrfNfManagementNfType(q.Get("nf-type"))
	limit := -1
	if s := q.Get("limit"); s != "" {
		l, err := strconv.Atoi(s)
		if err != nil || l < 1 {
			sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "limit "+s)
			return
		}
		limit = l
	}
	ps := n.reg.match(func(p *models.NrfNfManagementNfProfile) bool { return nfType == "" || p.NfType == nfType })
	links := make([]models.Link, 0, len(ps))
	for _, p := range ps {
		if limit >= 0 && len(links) == limit {
			break
		}
		links = append(links, models.Link{Href: sbi.ResourceURI(r, sbi.NFManagementPath+p.NfInstanceId)})
	}
	sbi.WriteJSON(w, http.StatusOK, models.UriList{Links: map[string][]models.Link{"items": links}, TotalItemCount: int32(len(ps))})
}
