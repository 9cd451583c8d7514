package xiohttp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

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

// readBody appends a field read from r to EOF: its length is filled in
// once known. The bytes go straight into the frame (io.Copy uses the
// body's WriteTo, or our ReadFrom): no copy of the body of its own.
func (e *encoder) readBody(r io.Reader) error {
	at := len(e.b)
	e.u32(0)
	if _, err := io.Copy(e, r); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(e.b[at:], uint32(len(e.b)-at-4))
	return nil
}

// Write appends p to the frame (io.Copy from a body's WriteTo).
func (e *encoder) Write(p []byte) (int, error) {
	e.b = append(e.b, p...)
	return len(p), nil
}

// ReadFrom reads r into the frame's spare room, growing it as needed.
func (e *encoder) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if len(e.b) == cap(e.b) {
			e.b = append(e.b, 0)[:len(e.b)]
		}
		n, err := r.Read(e.b[len(e.b):cap(e.b)])
		e.b = e.b[:len(e.b)+n]
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
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

// maxPooled bounds the frames kept for reuse: a rare large one is left to
// the collector instead of pinning its memory in the pool.
const maxPooled = 64 << 10

// framePool recycles frame buffers: a frame is copied into shared memory
// by the conn's Write, after which nothing refers to it.
var framePool = sync.Pool{New: func() any { return new(encoder) }}

// newFrame starts a frame in a recycled buffer; finish fills in its
// length, release hands the buffer back once the frame is written.
func newFrame(sizeHint int) *encoder {
	e := framePool.Get().(*encoder)
	if need := sizeHint + 64; cap(e.b) < need {
		e.b = make([]byte, 0, need)
	}
	e.b = append(e.b[:0], 0, 0, 0, 0)
	e.u8(wireVersion)
	return e
}

func (e *encoder) finish() []byte {
	binary.LittleEndian.PutUint32(e.b, uint32(len(e.b)-4))
	return e.b
}

// release returns the frame's buffer for reuse: the caller no longer
// refers to any of its bytes.
func (e *encoder) release() {
	if cap(e.b) > maxPooled {
		e.b = nil
	}
	framePool.Put(e)
}

// A decoder reads fields at off in b. Variable fields are spans of b:
// the string fields of a frame become one string (one allocation), of
// which every method, URI, host, header name and value is a substring.
type decoder struct {
	b   []byte
	off int
	err error
}

// span is a variable field: n bytes at off.
type span struct{ off, n int }

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b)-d.off {
		d.err = errBadFrame
		return nil
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
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

// field skips a variable field and returns where it is.
func (d *decoder) field() span {
	n := d.u32()
	if d.err != nil || n > uint32(len(d.b)-d.off) {
		d.err = errBadFrame
		return span{}
	}
	s := span{d.off, int(n)}
	d.off += int(n)
	return s
}

func (d *decoder) bytes() []byte {
	s := d.field()
	if d.err != nil {
		return nil
	}
	return d.b[s.off : s.off+s.n : s.off+s.n]
}

// fieldStrings holds the string fields of b[from:to] as one string.
type fieldStrings struct {
	s    string
	from int
}

func (d *decoder) strings(from int) fieldStrings {
	if d.err != nil {
		return fieldStrings{}
	}
	return fieldStrings{s: string(d.b[from:d.off]), from: from}
}

func (ss fieldStrings) at(s span) string { return ss.s[s.off-ss.from : s.off-ss.from+s.n] }

// spansHint is how many header fields are located without allocating.
const spansHint = 2 * headerHint

// headerSpans locates a header block's names and values (alternating) in
// spans, a buffer reused when it is large enough.
func (d *decoder) headerSpans(spans []span) []span {
	n := d.u32()
	if d.err != nil || n > maxHeaderCnt || uint64(n)*minHeaderLen > uint64(len(d.b)-d.off) {
		d.err = errBadFrame
		return nil
	}
	spans = spans[:0]
	for i := uint32(0); i < n && d.err == nil; i++ {
		spans = append(spans, d.field(), d.field())
	}
	return spans
}

// header builds the header block located by spans as Go's HTTP/2 server
// and client would accept it: names canonical (handlers look them up with
// Header.Get), invalid names or values (CR, LF, NUL...) refused. All
// values share one backing array, each capped so that an append copies.
func (d *decoder) header(ss fieldStrings, spans []span) http.Header {
	if d.err != nil {
		return nil
	}
	n := len(spans) / 2
	h := make(http.Header, min(n, headerHint))
	vals := make([]string, n)
	for i := 0; i < n; i++ {
		k, v := ss.at(spans[2*i]), ss.at(spans[2*i+1])
		if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			d.err = errBadFrame
			return nil
		}
		k = http.CanonicalHeaderKey(k)
		vals[i] = v
		if vs, ok := h[k]; ok {
			h[k] = append(vs, v)
		} else {
			h[k] = vals[i : i+1 : i+1]
		}
	}
	return h
}

// version checks the frame's first byte.
func (d *decoder) version() {
	if v := d.u8(); d.err == nil && v != wireVersion {
		d.err = fmt.Errorf("xiohttp: frame version %d, want %d", v, wireVersion)
	}
}

// readFrame reads one frame body from r into a buffer of its own.
func readFrame(r io.Reader) ([]byte, error) {
	n, err := readFrameLen(r)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := readFrameBody(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readFrameLen reads a frame's length, refusing one beyond maxFrame.
func readFrameLen(r io.Reader) (uint32, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return 0, err
	}
	n := binary.LittleEndian.Uint32(lb[:])
	if n > maxFrame {
		return 0, fmt.Errorf("xiohttp: frame of %d bytes exceeds %d", n, maxFrame)
	}
	return n, nil
}

func readFrameBody(r io.Reader, b []byte) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
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
	from := d.off
	method, uri, host := d.field(), d.field(), d.field()
	var buf [spansHint]span
	spans := d.headerSpans(buf[:])
	ss := d.strings(from)
	r := &wireRequest{}
	if d.err == nil {
		r.method, r.uri, r.host = ss.at(method), ss.at(uri), ss.at(host)
		// RFC 9110 9.1 (a method is a token) and 7.2 (Host), as Go's servers check them.
		if !httpguts.ValidHeaderFieldName(r.method) || !httpguts.ValidHostHeader(r.host) {
			d.err = errBadFrame
		}
	}
	r.header = d.header(ss, spans)
	r.body = d.bytes()
	return r, d.err
}

type wireResponse struct {
	status int
	header http.Header
	body   []byte
	frame  *inFrame // the received frame body lies in, if pooled
}

func encodeResponse(r *wireResponse) []byte { return appendResponse(newFrame(len(r.body)), r) }

func appendResponse(e *encoder, r *wireResponse) []byte {
	e.u16(uint16(r.status))
	e.header(r.header)
	e.bytes(r.body)
	return e.finish()
}

func decodeResponse(b []byte) (*wireResponse, error) {
	d := &decoder{b: b}
	d.version()
	r := &wireResponse{status: int(d.u16())}
	from := d.off
	var buf [spansHint]span
	spans := d.headerSpans(buf[:])
	r.header = d.header(d.strings(from), spans)
	r.body = d.bytes()
	if d.err == nil && (r.status < 100 || r.status > 999) {
		d.err = errBadFrame
	}
	return r, d.err
}
