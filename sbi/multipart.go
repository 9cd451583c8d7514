package sbi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// Binary part content types of the SBI (TS 29.502 6.1.2.4, TS 29.518
// 6.1.2.4): a NAS message (N1) or an NGAP IE (N2) travels beside the JSON.
const (
	ContentTypeNAS  = "application/vnd.3gpp.5gnas"
	ContentTypeNGAP = "application/vnd.3gpp.ngap"
)

// Part is one binary part of a multipart/related body, named by the
// Content-ID its JSON refers to (RefToBinaryData.contentId).
type Part struct {
	ContentID   string
	ContentType string
	Data        []byte
}

// EncodeRelated builds a multipart/related body (RFC 2387, TS 29.500
// 6.1.2.2): the JSON of v as the root part, then the binary parts. It
// returns the body and its Content-Type. With no parts the body is plain
// JSON.
func EncodeRelated(v any, parts ...Part) ([]byte, string, error) {
	root, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	if len(parts) == 0 {
		return root, "application/json", nil
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := writePart(w, "application/json", "", root); err != nil {
		return nil, "", err
	}
	for _, p := range parts {
		if err := writePart(w, p.ContentType, p.ContentID, p.Data); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	ct := mime.FormatMediaType("multipart/related", map[string]string{"boundary": w.Boundary(), "type": "application/json"})
	return buf.Bytes(), ct, nil
}

func writePart(w *multipart.Writer, contentType, id string, data []byte) error {
	h := textproto.MIMEHeader{"Content-Type": {contentType}}
	if id != "" {
		h.Set("Content-Id", id)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(data)
	return err
}

// ErrNotRelated says a body is neither JSON nor multipart/related.
var ErrNotRelated = errors.New("content type is neither application/json nor multipart/related")

// maxParts bounds the parts of one body (TS 29.502 carries at most an N1
// and an N2 part beside the JSON); more is refused, not parsed.
const maxParts = 8

// DecodeRelated splits a body by its Content-Type: the JSON root part
// into v and the binary parts by Content-ID (without angle brackets). A
// plain JSON body gives no parts.
func DecodeRelated(contentType string, body []byte, v any) (map[string]Part, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("content type %q: %w", contentType, err)
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return nil, json.Unmarshal(body, v)
	case mt != "multipart/related":
		return nil, ErrNotRelated
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	parts := map[string]Part{}
	rootSeen := false
	for n := 0; ; n++ {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("multipart part %d: %w", n, err)
		}
		if n >= maxParts {
			return nil, fmt.Errorf("multipart body has more than %d parts", maxParts)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("multipart part %d: %w", n, err)
		}
		ct := p.Header.Get("Content-Type")
		if !rootSeen && strings.HasPrefix(ct, "application/json") {
			rootSeen = true
			if err := json.Unmarshal(data, v); err != nil {
				return nil, fmt.Errorf("multipart JSON part: %w", err)
			}
			continue
		}
		id := strings.Trim(p.Header.Get("Content-Id"), "<>")
		parts[id] = Part{ContentID: id, ContentType: ct, Data: data}
	}
	if !rootSeen {
		return nil, errors.New("multipart body has no application/json part")
	}
	return parts, nil
}
