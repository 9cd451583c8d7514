package smf

// The SMF's admin API, beside its SBI (the way the UDR serves provisioning):
// an operator's or a test's window on the PDU sessions, and the trigger of
// a network-requested modification without a PCF that pushes policy
// updates. Requests bear the core's admin token (Authorization: Bearer,
// the data dir's admin.token that `l25gc up` and the UDR create).
//
//	GET  /smf-admin/v1/pdu-sessions                  the sessions
//	POST /smf-admin/v1/pdu-sessions/{supi}/{pduSessionId}/policy
//	     an SmPolicyDecision (TS 29.512 5.6.2.7) applied as the PCF's
//	     update notification would be: PCC rules with SDF filters become
//	     QoS flows (pdu_modification.go)

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/sbi"
)

const adminPrefix = "/smf-admin/v1/pdu-sessions"

func (n *NF) routeAdmin(mux *http.ServeMux) {
	mux.HandleFunc("GET "+adminPrefix, n.admin(n.handleListSessions))
	mux.HandleFunc("POST "+adminPrefix+"/{supi}/{pduSessionId}/policy", n.admin(n.handleAdminPolicy))
}

// admin serves h to requests bearing the admin token, read when asked so
// that the SMF needs not start after whoever creates it.
func (n *NF) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, err := prov.ReadToken(n.env.Config.AdminTokenPath())
		if err != nil || !prov.Authorized(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="l25gc-admin"`)
			sbi.WriteProblem(w, http.StatusUnauthorized, "", "the SMF admin API needs Authorization: Bearer <the admin token of the data dir's admin.token>")
			return
		}
		h(w, r)
	}
}

// SessionView is one PDU session as the admin API shows it.
type SessionView struct {
	SUPI         string  `json:"supi"`
	PDUSessionID uint8   `json:"pduSessionId"`
	DNN          string  `json:"dnn"`
	SNSSAI       string  `json:"snssai"`
	UEIPv4       string  `json:"ueIpv4,omitempty"`
	State        string  `json:"state"`
	QFIs         []uint8 `json:"qfis"`
	UPSEID       uint64  `json:"upSeid,omitempty"`
	// The Session-AMBR and the QoS flows, in bit/s, as the UPF's QERs
	// carry them (session_view.go).
	AMBRUplinkBps   uint64     `json:"ambrUplinkBps"`
	AMBRDownlinkBps uint64     `json:"ambrDownlinkBps"`
	Flows           []FlowView `json:"flows"`
}

func (n *NF) handleListSessions(w http.ResponseWriter, _ *http.Request) {
	out := []SessionView{}
	for _, c := range n.ctxs.all() {
		c.mu.Lock()
		v := SessionView{SUPI: c.supi, PDUSessionID: c.psi, DNN: c.dnn, SNSSAI: snssaiString(c.snssai), State: c.state.String(),
			QFIs: pendingOf(c.flows), UPSEID: c.upSEID, AMBRUplinkBps: c.ambrUp, AMBRDownlinkBps: c.ambrDown, Flows: c.flowViews()}
		if c.ueIP.IsValid() {
			v.UEIPv4 = c.ueIP.String()
		}
		c.mu.Unlock()
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b SessionView) int {
		if a.SUPI != b.SUPI {
			if a.SUPI < b.SUPI {
				return -1
			}
			return 1
		}
		return int(a.PDUSessionID) - int(b.PDUSessionID)
	})
	sbi.WriteJSON(w, http.StatusOK, out)
}

func snssaiString(s models.Snssai) string {
	if s.Sd == "" {
		return strconv.Itoa(int(s.Sst))
	}
	return strconv.Itoa(int(s.Sst)) + "/" + s.Sd
}

// handleAdminPolicy applies a policy decision to the session: 204 once the
// UPF has the new flows' rules; the UE and the gNB are told after.
func (n *NF) handleAdminPolicy(w http.ResponseWriter, r *http.Request) {
	psi, err := strconv.Atoi(r.PathValue("pduSessionId"))
	c, ok := n.ctxs.byOwner(r.PathValue("supi"), psi)
	if err != nil || !ok {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no PDU session "+r.PathValue("pduSessionId")+" of "+r.PathValue("supi"))
		return
	}
	var d models.SmPolicyDecision
	if !sbi.DecodeJSON(w, r, &d) {
		return
	}
	n.applyPolicyUpdate(w, r, c, &d)
}
