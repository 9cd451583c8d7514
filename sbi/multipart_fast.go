package sbi

// A direct multipart/related codec for the bodies the SBI's own NFs send
// (TS 29.500 6.1.2.2: a JSON root part, then N1/N2 binary parts), beside
// mime/multipart.
//
// Why: every PDU session carries about seven such bodies (CreateSMContext,
// N1N2MessageTransfer, UpdateSMContext and their answers), and
// mime/multipart's writer and reader cost each NF more CPU than the JSON
// inside: a 4 KiB bufio buffer per reader, a textproto header map per part,
// fmt for every header line, a growing copy of every part. CPU common to
// every SBI transport lowers what X-IO gains (issue 11's tcp/xio ratio).
//
// The writer emits exactly the bytes multipart.Writer emits for the same
// boundary (TestFastRelatedEncoderMatchesMultipartWriter). The reader
// takes only the canonical shape: no preamble, CRLF line ends, header lines
// "Name: value" without continuations, each delimiter preceded by CRLF and
// followed by CRLF (or "--" CRLF at the end, with nothing after), and the
// boundary nowhere else in the body. Anything else goes to mime/multipart
// as before, so odd input is read (or refused) exactly as it was;
// FuzzFastRelatedReaderAgreesWithMultipart checks that whatever the fast
// reader takes, it reads as mime/multipart does.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// newBoundary is multipart.Writer's random boundary: 30 random bytes in hex.
func newBoundary() string {
	var b [30]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// relatedContentType is mime.FormatMediaType("multipart/related",
// {boundary, type: application/json}) for a hex boundary: the boundary is
// a token (unquoted), the type has a '/' (quoted), parameters sorted.
func relatedContentType(boundary string) string {
	return `multipart/related; boundary=` + boundary + `; type="application/json"`
}

// appendRelated appends the multipart body of root and parts as
// multipart.Writer writes it: each part's header lines sorted by name
// (Content-Id before Content-Type), Content-Id only when set.
func appendRelated(dst []byte, boundary string, root []byte, parts []Part) []byte {
	dst = appendPartHead(dst, boundary, true, "application/json", "")
	dst = append(dst, root...)
	for _, p := range parts {
		dst = appendPartHead(dst, boundary, false, p.ContentType, p.ContentID)
		dst = append(dst, p.Data...)
	}
	dst = append(dst, "\r\n--"...)
	dst = append(dst, boundary...)
	return append(dst, "--\r\n"...)
}

func appendPartHead(dst []byte, boundary string, first bool, contentType, id string) []byte {
	if !first {
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "--"...)
	dst = append(dst, boundary...)
	dst = append(dst, "\r\n"...)
	if id != "" {
		dst = append(dst, "Content-Id: "...)
		dst = append(dst, id...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "Content-Type: "...)
	dst = append(dst, contentType...)
	return append(dst, "\r\n\r\n"...)
}

// relatedSize is the length appendRelated gives, for one allocation.
func relatedSize(boundary string, root []byte, parts []Part) int {
	n := len(root) + 2*len(boundary) + 64
	for _, p := range parts {
		n += len(boundary) + len(p.ContentType) + len(p.ContentID) + len(p.Data) + 48
	}
	return n
}

// rawPart is one part as read: its Content-Type and Content-Id header
// values (trimmed as textproto does) and its data.
type rawPart struct {
	contentType, contentID string
	data                   []byte
}

// splitRelatedFast splits a canonical body (see the top of the file); ok
// is false when the body is not canonical and mime/multipart must read it.
// Part data are sub-slices of body, capped so that appending to one never
// writes into the next.
func splitRelatedFast(body []byte, boundary string) (parts []rawPart, ok bool) {
	if !isAlnum(boundary) || len(boundary) > 70 { // RFC 2046 5.1.1: 1-70 characters
		// Only letters and digits: "--"+boundary then cannot overlap
		// itself, so counting it below counts every delimiter.
		return nil, false
	}
	dash := "--" + boundary
	if !bytes.HasPrefix(body, []byte(dash+"\r\n")) {
		return nil, false
	}
	delim := []byte("\r\n" + dash)
	// Every occurrence of the boundary must be a delimiter we split at:
	// the one at the start plus one per part end.
	seen := bytes.Count(body, []byte(dash))
	rest := body[len(dash)+2:]
	for {
		if len(parts) >= maxParts {
			return nil, false // the reader of multipart.go says how many is too many
		}
		head, data, ok := cutPartHead(rest)
		if !ok {
			return nil, false
		}
		p, ok := readPartHead(head)
		if !ok {
			return nil, false
		}
		end := bytes.Index(data, delim)
		if end < 0 {
			return nil, false
		}
		p.data = data[:end:end]
		parts = append(parts, p)
		after := data[end+len(delim):]
		switch {
		case bytes.HasPrefix(after, []byte("\r\n")):
			rest = after[2:]
			continue
		case bytes.Equal(after, []byte("--\r\n")) || bytes.Equal(after, []byte("--")):
			if seen != len(parts)+1 {
				return nil, false
			}
			return parts, true
		}
		return nil, false
	}
}

// cutPartHead splits a part at the blank line after its header lines.
func cutPartHead(b []byte) (head, data []byte, ok bool) {
	if bytes.HasPrefix(b, []byte("\r\n")) {
		return nil, b[2:], true // no header lines
	}
	i := bytes.Index(b, []byte("\r\n\r\n"))
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+4:], true
}

// readPartHead reads the header lines of a part; ok is false for anything
// textproto would read differently or refuse (a continuation line, a bare
// LF or CR, a line without a colon, a name that is not a token).
func readPartHead(head []byte) (rawPart, bool) {
	var p rawPart
	var haveType, haveID bool
	for len(head) > 0 {
		line := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			line, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' || bytes.IndexByte(line, '\n') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
			return rawPart{}, false
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return rawPart{}, false
		}
		if !validHeaderValue(line[colon+1:]) {
			return rawPart{}, false
		}
		value := string(bytes.Trim(line[colon+1:], " \t"))
		switch {
		case !haveType && strings.EqualFold(string(line[:colon]), "Content-Type"):
			p.contentType, haveType = value, true
		case !haveID && strings.EqualFold(string(line[:colon]), "Content-Id"):
			p.contentID, haveID = value, true
		}
	}
	return p, true
}

// isToken: every byte is a visible ASCII character other than the
// separators of RFC 7230 3.2.6, as textproto's header name check wants.
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}

// validHeaderValue: no control character but HTAB (textproto refuses them).
func validHeaderValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// relatedBoundary reads the boundary of a Content-Type this package writes
// (relatedContentType) without mime.ParseMediaType; ok is false for any
// other form, which the caller parses in full.
func relatedBoundary(contentType string) (string, bool) {
	const prefix, suffix = `multipart/related; boundary=`, `; type="application/json"`
	if !strings.HasPrefix(contentType, prefix) || !strings.HasSuffix(contentType, suffix) {
		return "", false
	}
	b := contentType[len(prefix) : len(contentType)-len(suffix)]
	return b, isAlnum(b)
}
