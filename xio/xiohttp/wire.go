package xiohttp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/net/http/httpguts"
)

// The message level carries one HTTP exchange as two frames on an X-IO
// conn: a request frame and a response frame. A frame is a 4-byte length
// and a body of fields; every variable field is a 4-byte length and bytes.
//
//	request:  version, method, request-URI (path?query), host, headers, body
//	response: version, status (2 bytes), headers, body
//	headers:  count (4 bytes), then name, value per value
//
// An empty frame from the server in place of a response is its goodbye: it
// closes the conn and has not served, and never will, any request frame it
// got after its last response, so the client may send that request again.
// A server closes a conn it has not answered only with a goodbye, or when
// the conn failed; so a client resends a request only after a goodbye or a
// write that sent nothing, and a POST never runs twice.
const (
	wireVersion  = 1
	maxFrame     = 64 << 20 // a larger frame is refused, not allocated
	maxHeaderCnt = 1 << 16
	// minHeaderLen is the least a header takes in a frame (two lengths):
	// a count the rest of the frame cannot hold is malformed.
	minHeaderLen = 8
	// headerHint sizes a decoded header map up front; more headers grow it
	// as they are read, so memory follows the bytes actually received.
	headerHint = 16
)

var errBadFrame = errors.New("xiohttp: malformed frame")

type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) str(s string) { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte) {
	e.u32(uint32(len(p)))
	e.b = append(e.b, p...)
}

func (e *encoder) header(h http.Header) {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	e.u32(uint32(n))
	for k, vs := range h {
		for _, v := range vs {
			e.str(k)
			e.str(v)
		}
	}
}

// newFrame starts a frame; finish fills in its length.
func newFrame(sizeHint int) *encoder {
	e := &encoder{b: make([]byte, 4, sizeHint+64)}
	e.u8(wireVersion)
	return e
}

func (e *encoder) finish() []byte {
	binary.LittleEndian.PutUint32(e.b, uint32(len(e.b)-4))
	return e.b
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errBadFrame
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if p := d.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) bytes() []byte {
	n := d.u32()
	if n > uint32(len(d.b)) {
		d.err = errBadFrame
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) str() string { return string(d.bytes()) }

// header decodes a header block as Go's HTTP/2 server and client would
// accept it: names canonical (handlers look them up with Header.Get),
// invalid names or values (CR, LF, NUL...) refused.
func (d *decoder) header() http.Header {
	n := d.u32()
	if d.err != nil || n > maxHeaderCnt || uint64(n)*minHeaderLen > uint64(len(d.b)) {
		d.err = errBadFrame
		return nil
	}
	h := make(http.Header, min(n, headerHint))
	for i := uint32(0); i < n && d.err == nil; i++ {
		k, v := d.str(), d.str()
		if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			d.err = errBadFrame
			return nil
		}
		k = http.CanonicalHeaderKey(k)
		h[k] = append(h[k], v)
	}
	return h
}

// version checks the frame's first byte.
func (d *decoder) version() {
	if v := d.u8(); d.err == nil && v != wireVersion {
		d.err = fmt.Errorf("xiohttp: frame version %d, want %d", v, wireVersion)
	}
}

// readFrame reads one frame body from r.
func readFrame(r io.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(lb[:])
	if n > maxFrame {
		return nil, fmt.Errorf("xiohttp: frame of %d bytes exceeds %d", n, maxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

type wireRequest struct {
	method, uri, host string
	header            http.Header
	body              []byte
}

func encodeRequest(r *wireRequest) []byte {
	e := newFrame(len(r.body) + len(r.uri))
	e.str(r.method)
	e.str(r.uri)
	e.str(r.host)
	e.header(r.header)
	e.bytes(r.body)
	return e.finish()
}

func decodeRequest(b []byte) (*wireRequest, error) {
	d := &decoder{b: b}
	d.version()
	r := &wireRequest{method: d.str(), uri: d.str(), host: d.str()}
	// RFC 9110 9.1 (a method is a token) and 7.2 (Host), as Go's servers check them.
	if d.err == nil && (!httpguts.ValidHeaderFieldName(r.method) || !httpguts.ValidHostHeader(r.host)) {
		d.err = errBadFrame
	}
	r.header = d.header()
	r.body = d.bytes()
	return r, d.err
}

type wireResponse struct {
	status int
	header http.Header
	body   []byte
}

func encodeResponse(r *wireResponse) []byte {
	e := newFrame(len(r.body))
	e.u16(uint16(r.status))
	e.header(r.header)
	e.bytes(r.body)
	return e.finish()
}

func decodeResponse(b []byte) (*wireResponse, error) {
	d := &decoder{b: b}
	d.version()
	r := &wireResponse{status: int(d.u16())}
	r.header = d.header()
	r.body = d.bytes()
	if d.err == nil && (r.status < 100 || r.status > 999) {
		d.err = errBadFrame
	}
	return r, d.err
}
