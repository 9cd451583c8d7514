package n2

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"time"
)

// cookieJar makes and checks State Cookies (RFC 4960 5.1.3): everything the
// association will need is in the cookie, signed with a secret only this
// listener knows and bound to the address the INIT came from, so an INIT
// leaves no state behind (5.1.3, 5.1.5) and a flood of them costs nothing
// but the INIT ACKs.
type cookieJar struct {
	key  [32]byte
	life time.Duration // Valid.Cookie.Life, RFC 4960 15
}

// DefaultCookieLife is RFC 4960 15's Valid.Cookie.Life.
const DefaultCookieLife = 60 * time.Second

func newCookieJar() cookieJar {
	j := cookieJar{life: DefaultCookieLife}
	if _, err := rand.Read(j.key[:]); err != nil {
		panic("n2: no randomness for the State Cookie key: " + err.Error()) // crypto/rand never fails on Linux
	}
	return j
}

// cookie is what a State Cookie carries.
type cookie struct {
	created             time.Time
	localPort, peerPort uint16
	// local is our INIT chunk as pion's SNAP takes it (Initiate Tag,
	// initial TSN, streams, extensions), the fixed part of our INIT ACK.
	local []byte
	// remote is the peer's INIT chunk without the parameters pion rejects.
	remote []byte
}

const (
	cookieVersion   = 1
	cookieHeaderLen = 20
	cookieMACLen    = sha256.Size
	// maxInitChunk bounds the peer's INIT kept in a cookie; a real INIT
	// without its addresses is well under this.
	maxInitChunk = 512
)

var (
	errCookieForged = errors.New("State Cookie signature mismatch")
	errCookieStale  = errors.New("State Cookie older than Valid.Cookie.Life (RFC 4960 5.1.5)")
	errCookieShape  = errors.New("State Cookie malformed")
)

// seal signs c for the peer at from.
func (j *cookieJar) seal(from netip.AddrPort, c cookie) []byte {
	b := make([]byte, cookieHeaderLen, cookieHeaderLen+len(c.local)+len(c.remote)+cookieMACLen)
	b[0] = cookieVersion
	binary.BigEndian.PutUint16(b[2:], c.localPort)
	binary.BigEndian.PutUint16(b[4:], c.peerPort)
	binary.BigEndian.PutUint16(b[6:], uint16(len(c.local)))
	binary.BigEndian.PutUint16(b[8:], uint16(len(c.remote)))
	binary.BigEndian.PutUint64(b[12:], uint64(c.created.UnixNano()))
	b = append(b, c.local...)
	b = append(b, c.remote...)
	return append(b, j.mac(from, b)...)
}

func (j *cookieJar) mac(from netip.AddrPort, body []byte) []byte {
	m := hmac.New(sha256.New, j.key[:])
	a := from.Addr().As16()
	m.Write(a[:])
	var port [2]byte
	binary.BigEndian.PutUint16(port[:], from.Port())
	m.Write(port[:])
	m.Write(body)
	return m.Sum(nil)
}

// open checks a cookie echoed from from at now and returns what it carries.
func (j *cookieJar) open(from netip.AddrPort, b []byte, now time.Time) (cookie, error) {
	var c cookie
	if len(b) < cookieHeaderLen+cookieMACLen || b[0] != cookieVersion {
		return c, errCookieShape
	}
	body, sum := b[:len(b)-cookieMACLen], b[len(b)-cookieMACLen:]
	if !hmac.Equal(sum, j.mac(from, body)) {
		return c, errCookieForged
	}
	nl, nr := int(binary.BigEndian.Uint16(body[6:])), int(binary.BigEndian.Uint16(body[8:]))
	if cookieHeaderLen+nl+nr != len(body) || nl < initChunkLen || nr < initChunkLen {
		return c, errCookieShape
	}
	c.localPort = binary.BigEndian.Uint16(body[2:])
	c.peerPort = binary.BigEndian.Uint16(body[4:])
	c.created = time.Unix(0, int64(binary.BigEndian.Uint64(body[12:])))
	if age := now.Sub(c.created); age > j.life || age < -time.Second {
		return c, errCookieStale
	}
	c.local = body[cookieHeaderLen : cookieHeaderLen+nl]
	c.remote = body[cookieHeaderLen+nl:]
	return c, nil
}

// initChunkLen is an INIT chunk's header and fixed part (RFC 4960 3.3.2).
const initChunkLen = 20

// readInit reads the fixed part of an INIT or INIT ACK chunk.
func readInit(chunk []byte) initInfo {
	return initInfo{tag: binary.BigEndian.Uint32(chunk[4:]),
		outbound: binary.BigEndian.Uint16(chunk[12:]), inbound: binary.BigEndian.Uint16(chunk[14:])}
}

func (c cookie) localInit() initInfo  { return readInit(c.local) }
func (c cookie) remoteInit() initInfo { return readInit(c.remote) }
