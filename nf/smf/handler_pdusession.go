package smf

// Nsmf_PDUSession producer (TS 29.502 5.2.2; resources of 6.1.3): the
// HTTP side only — decoding, and answering what the procedures decided.

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
)

// maxRequest bounds a request body: JSON plus an N1 and an N2 part.
const maxRequest = 1 << 20

// decodeRelated reads a JSON or multipart/related body into v and its
// binary parts by Content-ID; on failure it has answered 400. An empty
// body is fine when optional.
func decodeRelated(w http.ResponseWriter, r *http.Request, v any, optional bool) (map[string]sbi.Part, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err == nil && len(body) > maxRequest {
		err = errors.New("body too large")
	}
	if err == nil && len(body) == 0 {
		if optional {
			return nil, true
		}
		err = errors.New("empty body")
	}
	var parts map[string]sbi.Part
	if err == nil {
		parts, err = sbi.DecodeRelated(r.Header.Get("Content-Type"), body, v)
	}
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidMsgFormat, "request body: "+err.Error())
		return nil, false
	}
	return parts, true
}

// part is the binary part ref names; nil when ref is nil.
func part(parts map[string]sbi.Part, ref *models.RefToBinaryData) ([]byte, bool) {
	if ref == nil {
		return nil, true
	}
	p, ok := parts[ref.ContentId]
	return p.Data, ok
}

func notFound(w http.ResponseWriter, r *http.Request) {
	sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no SM context "+r.PathValue("smContextRef"))
}

// handleCreate is Nsmf_PDUSession_CreateSMContext (TS 29.502 5.2.2.2):
// 201 with the context's URI, then the rest of the establishment runs
// and ends in an N1N2MessageTransfer to the AMF; or the Reject.
func (n *NF) handleCreate(w http.ResponseWriter, r *http.Request) {
	var d models.SmfPduSessionSmContextCreateData
	parts, ok := decodeRelated(w, r, &d, false)
	if !ok {
		return
	}
	n1, ok := part(parts, d.N1SmMsg)
	if !ok || d.N1SmMsg == nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "n1SmMsg: the PDU Session Establishment Request is missing")
		return
	}
	c, g, err := n.create(r.Context(), &d, n1)
	var rej *gsmReject
	switch {
	case errors.As(err, &rej):
		n.m.rejected(rej.gsm)
		n.log.Info("PDU session establishment rejected", "supi", d.Supi, "psi", g.PDUSessionID, "cause", rej.gsm, "err", rej.detail)
		writeCreateReject(w, g, rej)
		return
	case err != nil:
		sbi.WriteError(w, "SMF", err)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, smContextsPath+"/"+c.ref))
	snssai := c.snssai
	sbi.WriteJSON(w, http.StatusCreated, models.SmfPduSessionSmContextCreatedData{PduSessionId: int32(c.psi), SNssai: &snssai,
		UpCnxState: models.UpCnxState_ACTIVATING})
	n.background(func(ctx context.Context) { n.establish(tracing.Follow(ctx, r.Context()), c) })
}

// updateAnswer is what UpdateSMContext answers with besides upCnxState:
// an N1 message and/or an N2 SM information for the AMF to pass on.
type updateAnswer struct {
	upCnx  models.UpCnxState
	n1     []byte
	n2     []byte
	n2Type models.N2SmInfoType
	// hoState answers an N2 handover step (TS 29.502 5.2.2.3.4).
	hoState models.HoState
}

// handleUpdate is Nsmf_PDUSession_UpdateSMContext (TS 29.502 5.2.2.3).
func (n *NF) handleUpdate(w http.ResponseWriter, r *http.Request) {
	c, ok := n.ctxs.get(r.PathValue("smContextRef"))
	if !ok {
		notFound(w, r)
		return
	}
	var d models.SmfPduSessionSmContextUpdateData
	parts, ok := decodeRelated(w, r, &d, false)
	if !ok {
		return
	}
	n1, ok1 := part(parts, d.N1SmMsg)
	n2, ok2 := part(parts, d.N2SmInfo)
	if !ok1 || !ok2 {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "n1SmMsg or n2SmInfo names no part of the body")
		return
	}
	a, err := n.update(r.Context(), c, &d, n1, n2)
	if err != nil {
		sbi.WriteError(w, "UPF", err)
		return
	}
	writeUpdated(w, a)
}

func writeUpdated(w http.ResponseWriter, a updateAnswer) {
	out := models.SmContextUpdatedData{UpCnxState: a.upCnx, HoState: a.hoState}
	var parts []sbi.Part
	if a.n1 != nil {
		out.N1SmMsg = &models.RefToBinaryData{ContentId: contentIDN1}
		parts = append(parts, sbi.Part{ContentID: contentIDN1, ContentType: sbi.ContentTypeNAS, Data: a.n1})
	}
	if a.n2 != nil {
		out.N2SmInfo, out.N2SmInfoType = &models.RefToBinaryData{ContentId: contentIDN2}, a.n2Type
		parts = append(parts, sbi.Part{ContentID: contentIDN2, ContentType: sbi.ContentTypeNGAP, Data: a.n2})
	}
	writeRelated(w, http.StatusOK, out, parts...)
}
