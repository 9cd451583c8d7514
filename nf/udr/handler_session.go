package udr

// Nudr_DataRepository resources of PDU sessions: the PCF's session
// management policy data (TS 29.519 5.2.x, policy-data/ues/{ueId}/sm-data)
// and the subscriber's QoS flows as operator-specific policy data
// (operator-specific-data), and the SMF registrations the UDM stores as
// context data (TS 29.505 5.2.2.x, context-data/smf-registrations/{pduSessionId}).

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

func (n *NF) routeSession(mux *http.ServeMux) {
	mux.HandleFunc("GET "+DRBase+"/policy-data/ues/{ueId}/sm-data", n.getSMPolicy)
	mux.HandleFunc("GET "+DRBase+"/policy-data/ues/{ueId}/operator-specific-data", n.getOperatorSpecificData)
	regs := DRBase + "/subscription-data/{ueId}/context-data/smf-registrations"
	mux.HandleFunc("GET "+regs, n.getSMFRegistrations)
	mux.HandleFunc("PUT "+regs+"/{pduSessionId}", n.putSMFRegistration)
	mux.HandleFunc("GET "+regs+"/{pduSessionId}", n.getSMFRegistration)
	mux.HandleFunc("DELETE "+regs+"/{pduSessionId}", n.deleteSMFRegistration)
}

// getSMPolicy answers SmPolicyData, narrowed by the query parameters
// snssai (a JSON Snssai) and dnn (TS 29.519 6.1.3.x).
func (n *NF) getSMPolicy(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	q := r.URL.Query()
	snssai, ok := snssaiQuery(w, q.Get("snssai"), "snssai")
	if !ok {
		return
	}
	if d := q.Get("dnn"); d != "" {
		if _, err := domain.ParseDNN(d); err != nil {
			sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidQuery, "dnn: "+err.Error())
			return
		}
	}
	p, err := n.store.SMPolicy(r.Context(), ue, snssai, q.Get("dnn"))
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, p)
}

// QosFlowsKey is the operator-specific policy data (TS 29.519 5.2.x
// OperatorSpecificDataContainer map key) holding a subscriber's QoS flows:
// an object {"flowRules": [...], "qosFlows": [...]} in free5GC's web
// console field names (store.FlowRule, store.QosFlow). No 3GPP policy data
// type carries per-UE PCC rules; operator-specific data is the clause for
// what an operator adds.
const QosFlowsKey = "l25gc-qos-flows"

// getOperatorSpecificData answers the UE's operator-specific policy data:
// its QoS flows under QosFlowsKey (an empty map when it has none).
func (n *NF) getOperatorSpecificData(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	rules, flows, err := n.store.PolicyFlows(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	out := map[string]models.OperatorSpecificDataContainer{}
	if len(rules)+len(flows) > 0 {
		out[QosFlowsKey] = models.OperatorSpecificDataContainer{DataType: "object",
			DataTypeDefinition: "L25GC+ QoS flows: flowRules and qosFlows as free5GC's policyData.ues.flowRule and policyData.ues.qosFlow",
			Value:              map[string]any{"flowRules": rules, "qosFlows": flows}}
	}
	sbi.WriteJSON(w, http.StatusOK, out)
}

// snssaiQuery reads a query parameter holding a JSON Snssai (nil when
// absent); on failure it has answered 400 INVALID_QUERY_PARAM.
func snssaiQuery(w http.ResponseWriter, v, name string) (*models.Snssai, bool) {
	if v == "" {
		return nil, true
	}
	var s models.Snssai
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidQuery, name+": "+err.Error())
		return nil, false
	}
	if _, err := domain.SNSSAIFromModel(s); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidQuery, name+": "+err.Error())
		return nil, false
	}
	return &s, true
}

// pduSessionID reads the path's PDU session id; on failure it has answered
// 400.
func pduSessionID(w http.ResponseWriter, r *http.Request) (int32, bool) {
	id, err := domain.ParsePDUSessionID(r.PathValue("pduSessionId"))
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidFormat, err.Error())
		return 0, false
	}
	return id, true
}

// putSMFRegistration stores the SMF of a PDU session: 201 with the
// registration when new, 204 when it replaced one.
func (n *NF) putSMFRegistration(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	id, ok := pduSessionID(w, r)
	if !ok {
		return
	}
	var reg models.SmfRegistration
	if !sbi.DecodeJSON(w, r, &reg) {
		return
	}
	if reg.SmfInstanceId == "" || reg.SingleNssai == nil || reg.PlmnId == nil {
		sbi.WriteProblem(w, http.StatusBadRequest, causeMandatoryMissing, "smfInstanceId, singleNssai and plmnId are mandatory (TS 29.503 6.2.6.2.3)")
		return
	}
	reg.PduSessionId = id // the path names the session
	replaced, err := n.store.PutSMFRegistration(r.Context(), ue, &reg)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	if replaced {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, r.URL.Path))
	sbi.WriteJSON(w, http.StatusCreated, reg)
}

func (n *NF) getSMFRegistrations(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	regs, err := n.store.SMFRegistrations(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, regs)
}

func (n *NF) getSMFRegistration(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	id, ok := pduSessionID(w, r)
	if !ok {
		return
	}
	regs, err := n.store.SMFRegistrations(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	for _, reg := range regs {
		if reg.PduSessionId == id {
			sbi.WriteJSON(w, http.StatusOK, reg)
			return
		}
	}
	sbi.WriteProblem(w, http.StatusNotFound, causeDataNotFound, "no SMF registration of PDU session "+strconv.Itoa(int(id)))
}

func (n *NF) deleteSMFRegistration(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	id, ok := pduSessionID(w, r)
	if !ok {
		return
	}
	if err := n.store.DeleteSMFRegistration(r.Context(), ue, id); err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
