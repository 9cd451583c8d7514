package sbi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// DoRelated sends JSON with binary parts and reads the producer's
// multipart answer, its Location, and, on an error, the wrapped
// ProblemDetails and the parts beside it (TS 29.502 SmContextCreateError).
func TestDoRelated(t *testing.T) {
	n1 := []byte{0x2e, 1, 1, 0xc1}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in models.SmfPduSessionSmContextCreateData
		parts, err := sbi.DecodeRelated(r.Header.Get("Content-Type"), body, &in)
		if err != nil || !bytes.Equal(parts["n1"].Data, n1) || in.Supi != "imsi-1" {
			sbi.WriteProblem(w, 400, sbi.CauseInvalidMsgFormat, "bad request")
			return
		}
		if r.URL.Path == "/reject" {
			b, ct, _ := sbi.EncodeRelated(models.SmContextCreateError{Error: &models.SmfPduSessionExtProblemDetails{Status: 403, Cause: "DNN_DENIED"},
				N1SmMsg: &models.RefToBinaryData{ContentId: "rej"}}, sbi.Part{ContentID: "rej", ContentType: sbi.ContentTypeNAS, Data: []byte{9}})
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(403)
			_, _ = w.Write(b)
			return
		}
		b, ct, _ := sbi.EncodeRelated(models.SmfPduSessionSmContextCreatedData{PduSessionId: 1, N2SmInfo: &models.RefToBinaryData{ContentId: "n2"}},
			sbi.Part{ContentID: "n2", ContentType: sbi.ContentTypeNGAP, Data: []byte{7}})
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Location", "/sm-contexts/1")
		w.WriteHeader(201)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	c := sbi.NewClient(http.DefaultTransport, nil)
	in := models.SmfPduSessionSmContextCreateData{Supi: "imsi-1", N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}}
	parts := []sbi.Part{{ContentID: "n1", ContentType: sbi.ContentTypeNAS, Data: n1}}

	var out models.SmfPduSessionSmContextCreatedData
	a, err := c.DoRelated(context.Background(), http.MethodPost, srv.URL+"/create", in, parts, &out)
	if err != nil || out.PduSessionId != 1 || a.Header.Get("Location") != "/sm-contexts/1" || !bytes.Equal(a.Parts["n2"].Data, []byte{7}) {
		t.Fatalf("%+v %+v %v", out, a, err)
	}
	a, err = c.DoRelated(context.Background(), http.MethodPost, srv.URL+"/reject", in, parts, &out)
	if sbi.StatusOf(err) != 403 || sbi.CauseOf(err) != "DNN_DENIED" || !bytes.Equal(a.Parts["rej"].Data, []byte{9}) {
		t.Fatalf("%v %+v", err, a)
	}
	_, err = c.DoRelated(context.Background(), http.MethodPost, srv.URL+"/create", models.SmfPduSessionSmContextCreateData{}, nil, nil)
	if sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != sbi.CauseInvalidMsgFormat {
		t.Fatalf("plain ProblemDetails: %v", err)
	}
}
