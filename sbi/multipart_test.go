package sbi

import (
	"bytes"
	"strings"
	"testing"
)

func TestRelatedBodyRoundTrip(t *testing.T) {
	type create struct {
		N1 struct {
			ContentID string `json:"contentId"`
		} `json:"n1SmMsg"`
		DNN string `json:"dnn"`
	}
	in := create{DNN: "internet"}
	in.N1.ContentID = "n1msg"
	nas := []byte{0x2e, 0x01, 0x01, 0xc1}
	body, ct, err := EncodeRelated(in, Part{ContentID: "n1msg", ContentType: ContentTypeNAS, Data: nas})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ct, "multipart/related") {
		t.Fatalf("content type %q", ct)
	}
	var out create
	parts, err := DecodeRelated(ct, body, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.DNN != "internet" || out.N1.ContentID != "n1msg" {
		t.Fatalf("json part %+v", out)
	}
	p, ok := parts[out.N1.ContentID]
	if !ok || !bytes.Equal(p.Data, nas) || p.ContentType != ContentTypeNAS {
		t.Fatalf("binary part %+v", parts)
	}
}

func TestRelatedBodyPlainJSONAndErrors(t *testing.T) {
	var v map[string]any
	parts, err := DecodeRelated("application/json", []byte(`{"a":1}`), &v)
	if err != nil || len(parts) != 0 || v["a"] != float64(1) {
		t.Fatalf("plain json: %v %v %v", parts, v, err)
	}
	if _, err := DecodeRelated("text/plain", []byte("x"), &v); err != ErrNotRelated {
		t.Fatalf("text/plain: %v", err)
	}
	body, ct, _ := EncodeRelated(nil, Part{ContentID: "x", ContentType: ContentTypeNGAP, Data: []byte{1}})
	_ = body
	// A multipart body whose parts are all binary has no JSON to read.
	noRoot := strings.Replace(string(body), "application/json", "application/octet-stream", 1)
	if _, err := DecodeRelated(ct, []byte(noRoot), &v); err == nil {
		t.Fatal("a multipart body without a JSON part was accepted")
	}
}
