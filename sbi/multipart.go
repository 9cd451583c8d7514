package sbi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
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
	// multipart.Writer's bytes, written directly (multipart_fast.go).
	boundary := newBoundary()
	body := appendRelated(make([]byte, 0, relatedSize(boundary, root, parts)), boundary, root, parts)
	return body, relatedContentType(boundary), nil
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
	boundary, ours := relatedBoundary(contentType)
	if !ours {
		mt, params, err := mime.ParseMediaType(contentType)
		if err != nil {
			return nil, fmt.Errorf("content type %q: %w", contentType, err)
		}
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return nil, UnmarshalJSON(body, v)
		case mt != "multipart/related":
			return nil, ErrNotRelated
		}
		boundary = params["boundary"]
	}
	if raw, ok := splitRelatedFast(body, boundary); ok {
		return relatedParts(raw, v)
	}
	return decodeMultipart(body, boundary, v)
}

// decodeMultipart reads any body mime/multipart reads, for what the fast
// reader leaves to it.
func decodeMultipart(body []byte, boundary string, v any) (map[string]Part, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
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
			if err := UnmarshalJSON(data, v); err != nil {
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

// relatedParts is decodeMultipart's reading of the parts the fast reader
// split: the first JSON part into v, the others by Content-ID (without
// angle brackets).
func relatedParts(raw []rawPart, v any) (map[string]Part, error) {
	parts := make(map[string]Part, len(raw))
	rootSeen := false
	for _, p := range raw {
		if !rootSeen && strings.HasPrefix(p.contentType, "application/json") {
			rootSeen = true
			if err := UnmarshalJSON(p.data, v); err != nil {
				return nil, fmt.Errorf("multipart JSON part: %w", err)
			}
			continue
		}
		id := strings.Trim(p.contentID, "<>")
		parts[id] = Part{ContentID: id, ContentType: p.contentType, Data: p.data}
	}
	if !rootSeen {
		return nil, errors.New("multipart body has no application/json part")
	}
	return parts, nil
}
