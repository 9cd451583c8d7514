package udr

// The provisioning API (package prov documents it): subscribers in a simple
// shape, stored in free5GC's layout.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// maxPage bounds one listing page.
const maxPage = 1000

func (n *NF) routeProv(mux *http.ServeMux) {
	base := prov.BasePath + "/subscribers"
	mux.HandleFunc("POST "+base, n.admin(n.postSubscriber))
	mux.HandleFunc("POST "+base+":bulk", n.admin(n.postBulk))
	mux.HandleFunc("GET "+base, n.admin(n.listSubscribers))
	mux.HandleFunc("PUT "+base+"/{imsi}", n.admin(n.putSubscriber))
	mux.HandleFunc("GET "+base+"/{imsi}", n.admin(n.getSubscriber))
	mux.HandleFunc("DELETE "+base+"/{imsi}", n.admin(n.deleteSubscriber))
}

// admin serves h only to a request bearing the admin token: the API writes
// and shows K and OPc. Anything else is 401 with the RFC 6750 3 challenge.
func (n *NF) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !prov.Authorized(r, n.adminToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="l25gc-prov"`)
			sbi.WriteProblem(w, http.StatusUnauthorized, "",
				"the provisioning API needs Authorization: Bearer <admin token> (l25gc subscriber reads it from the data dir's admin.token, or --token-file)")
			return
		}
		h(w, r)
	}
}

// decodeSubscriber reads, completes and validates a subscriber body; on
// failure it has answered 400.
func (n *NF) decodeSubscriber(w http.ResponseWriter, r *http.Request) (prov.Subscriber, bool) {
	var s prov.Subscriber
	if !sbi.DecodeJSON(w, r, &s) {
		return s, false
	}
	s = s.WithDefaults(n.defaults)
	if err := s.Validate(); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error())
		return s, false
	}
	return s, true
}

// postSubscriber creates one subscriber; an existing IMSI is a 409, so a
// typo never overwrites someone's keys (PUT replaces on purpose).
func (n *NF) postSubscriber(w http.ResponseWriter, r *http.Request) {
	s, ok := n.decodeSubscriber(w, r)
	if !ok {
		return
	}
	rec, err := prov.ToRecord(s, n.plmn)
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error())
		return
	}
	added, err := n.store.AddAbsent(r.Context(), []*store.Subscriber{rec})
	if err != nil {
		n.writeStoreError(r.Context(), w, rec.UeID, err)
		return
	}
	if added == 0 {
		sbi.WriteProblem(w, http.StatusConflict, sbi.CauseSubscriberExists, "imsi "+s.IMSI+" is provisioned already; PUT replaces it (l25gc subscriber add --replace)")
		return
	}
	w.Header().Set("Location", prov.BasePath+"/subscribers/"+s.IMSI)
	sbi.WriteJSON(w, http.StatusCreated, s)
}

// putSubscriber creates or replaces the subscriber of the path's IMSI.
func (n *NF) putSubscriber(w http.ResponseWriter, r *http.Request) {
	s, ok := n.decodeSubscriber(w, r)
	if !ok {
		return
	}
	if s.IMSI != r.PathValue("imsi") {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, "imsi of the body differs from the path's")
		return
	}
	rec, err := prov.ToRecord(s, n.plmn)
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error())
		return
	}
	if err := n.store.PutSubscriber(r.Context(), rec); err != nil {
		n.writeStoreError(r.Context(), w, rec.UeID, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, s)
}

// postBulk adds a range of at most udr.max_bulk subscribers; IMSIs already
// stored keep their data and SQN. Every failure answers how many were
// added before it (BulkResult members in the ProblemDetails), so a client
// knows exactly where it stands.
func (n *NF) postBulk(w http.ResponseWriter, r *http.Request) {
	var rg prov.Range
	if !sbi.DecodeJSON(w, r, &rg) {
		return
	}
	if rg.Count > n.maxBulk {
		writeBulkProblem(w, http.StatusRequestEntityTooLarge, sbi.CauseBulkTooLarge,
			fmt.Sprintf("count %d: at most %d subscribers per request (udr.max_bulk); send batches (l25gc subscriber add does)", rg.Count, n.maxBulk),
			prov.BulkResult{Requested: rg.Count})
		return
	}
	res, err := n.addRange(r.Context(), rg)
	var invalid invalidRequest
	switch {
	case err == nil:
		sbi.WriteJSON(w, http.StatusOK, res)
	case errors.As(err, &invalid):
		writeBulkProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error(), res)
	case r.Context().Err() != nil:
		n.log.Warn("bulk provisioning stopped: the request ended", "first", rg.IMSI, "requested", res.Requested, "added", res.Added)
		writeBulkProblem(w, http.StatusServiceUnavailable, sbi.CauseTimedOutRequest, "the request ended before the range was added", res)
	default:
		n.log.Error("store", "first", rg.IMSI, "added", res.Added, "err", err)
		writeBulkProblem(w, http.StatusInternalServerError, causeSystemFailure, "subscriber data store failure", res)
	}
}

// writeBulkProblem answers a ProblemDetails (TS 29.500 5.2.7.2) with the
// BulkResult's members added (RFC 7807 3.2).
func writeBulkProblem(w http.ResponseWriter, status int, cause, detail string, res prov.BulkResult) {
	w.Header().Set("Content-Type", sbi.ContentTypeProblem)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		models.ProblemDetails
		prov.BulkResult
	}{models.ProblemDetails{Title: http.StatusText(status), Status: int32(status), Cause: cause, Detail: detail}, res})
}

func (n *NF) getSubscriber(w http.ResponseWriter, r *http.Request) {
	ue := "imsi-" + r.PathValue("imsi")
	rec, err := n.store.Subscriber(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, prov.FromRecord(rec))
}

func (n *NF) deleteSubscriber(w http.ResponseWriter, r *http.Request) {
	ue := "imsi-" + r.PathValue("imsi")
	if err := n.store.DeleteSubscriber(r.Context(), ue); err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listSubscribers answers one page: offset (default 0) and limit (default
// and maximum 1000).
func (n *NF) listSubscribers(w http.ResponseWriter, r *http.Request) {
	offset, err1 := queryInt(r, "offset", 0)
	limit, err2 := queryInt(r, "limit", maxPage)
	if err := errors.Join(err1, err2); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidQuery, err.Error())
		return
	}
	limit = min(limit, maxPage)
	recs, total, err := n.store.List(r.Context(), offset, limit)
	if err != nil {
		n.writeStoreError(r.Context(), w, "", err)
		return
	}
	page := prov.Page{Total: total, Offset: offset, Subscribers: make([]prov.Subscriber, len(recs))}
	for i, rec := range recs {
		page.Subscribers[i] = prov.FromRecord(rec)
	}
	sbi.WriteJSON(w, http.StatusOK, page)
}

// queryInt reads a non-negative integer query parameter.
func queryInt(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errors.New(name + ": not a non-negative integer")
	}
	return n, nil
}
