package udr

// The provisioning API (package prov documents it): subscribers in a simple
// shape, stored in free5GC's layout.

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// maxPage bounds one listing page.
const maxPage = 1000

func (n *NF) routeProv(mux *http.ServeMux) {
	base := prov.BasePath + "/subscribers"
	mux.HandleFunc("POST "+base, n.postSubscriber)
	mux.HandleFunc("POST "+base+":bulk", n.postBulk)
	mux.HandleFunc("GET "+base, n.listSubscribers)
	mux.HandleFunc("PUT "+base+"/{imsi}", n.putSubscriber)
	mux.HandleFunc("GET "+base+"/{imsi}", n.getSubscriber)
	mux.HandleFunc("DELETE "+base+"/{imsi}", n.deleteSubscriber)
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

// postBulk adds a range; IMSIs already stored keep their data and SQN.
func (n *NF) postBulk(w http.ResponseWriter, r *http.Request) {
	var rg prov.Range
	if !sbi.DecodeJSON(w, r, &rg) {
		return
	}
	res, err := n.addRange(r.Context(), rg)
	var invalid invalidRequest
	switch {
	case errors.As(err, &invalid):
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error())
		return
	case err != nil:
		n.writeStoreError(r.Context(), w, "imsi-"+rg.IMSI, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, res)
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
