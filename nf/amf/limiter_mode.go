package amf

// The limiter's mode switched at run time, on the AMF's metrics port
// (ratelimit.Limiter.SetMode): `bench pdu --rounds` visits fixed limits,
// off and adaptive in turn on one core, so that every setting meets the
// same load of a shared machine (Fig. 3). On the metrics port because it
// is plain HTTP under every SBI transport (X-IO's SBI is not reachable
// from outside the node). Requests bear the core's admin token, as the
// SMF's admin API does: a mode switch is an operator's act.
//
//	GET /amf-admin/v1/limiter  the mode and the limiter's state
//	PUT /amf-admin/v1/limiter  {"mode": "fixed:8" | "off" | "adaptive"}

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// LimiterAdminPath is the limiter's admin resource on the metrics port.
const LimiterAdminPath = "/amf-admin/v1/limiter"

// LimiterView is the limiter as the admin resource shows it; PUT reads
// only Mode.
type LimiterView struct {
	Mode     string `json:"mode"`
	EMax     int    `json:"emax"`
	ECurrent int    `json:"ecurrent"`
	Queue    int    `json:"queue"`
}

// RouteMetrics adds the limiter's admin resource to the metrics port
// (nf.MetricsRouter).
func (n *NF) RouteMetrics(mux *http.ServeMux) {
	mux.HandleFunc("GET "+LimiterAdminPath, n.limiterAdmin(n.handleGetLimiter))
	mux.HandleFunc("PUT "+LimiterAdminPath, n.limiterAdmin(n.handleSetLimiterMode))
}

// limiterAdmin serves h to requests bearing the admin token, read when
// asked: the UDR may create it after the AMF starts.
func (n *NF) limiterAdmin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, err := prov.ReadToken(n.cfg.AdminTokenPath())
		if err != nil || !prov.Authorized(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="l25gc-admin"`)
			sbi.WriteProblem(w, http.StatusUnauthorized, "", "the AMF admin API needs Authorization: Bearer <the admin token of the data dir's admin.token>")
			return
		}
		h(w, r)
	}
}

func (n *NF) handleGetLimiter(w http.ResponseWriter, _ *http.Request) {
	writeLimiterView(w, n.limiter.State())
}

// handleSetLimiterMode switches amf.limiter.mode; a body that is not
// {"mode": ...} with a mode ParseMode reads gets 400 and changes nothing.
func (n *NF) handleSetLimiterMode(w http.ResponseWriter, r *http.Request) {
	var req LimiterView
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, "INVALID_MSG_FORMAT", "want a JSON body {\"mode\": \"adaptive\" | \"off\" | \"fixed:N\"}: "+err.Error())
		return
	}
	if err := n.limiter.SetMode(req.Mode); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, "MANDATORY_IE_INCORRECT", "amf.limiter.mode: "+err.Error())
		return
	}
	st := n.limiter.State()
	n.log.Info("limiter mode switched", "mode", st.Setting, "emax", st.EMax, "ecurrent", st.ECurrent, "queue", st.Queue)
	writeLimiterView(w, st)
}

func writeLimiterView(w http.ResponseWriter, st ratelimit.LimiterState) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(LimiterView{Mode: st.Setting, EMax: st.EMax, ECurrent: st.ECurrent, Queue: st.Queue})
}
