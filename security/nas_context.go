package security

import (
	"errors"
	"sync"
)

// NASContext is one side's 5G NAS security context in use: the keys and
// algorithms, the COUNT of the next message sent, and the tracked COUNT of
// the messages received (TS 33.501 6.4.3, TS 24.501 4.4.3). Safe for
// concurrent use.
type NASContext struct {
	keys NASKeys
	send Direction // Downlink at the AMF, Uplink at the UE

	mu       sync.Mutex
	sendNext uint32
	received ReceiveCount
}

// NewNASContext derives the NAS keys from KAMF for the chosen algorithms
// (TS 33.501 A.8) and starts a context that sends in direction send
// (Downlink at the AMF, Uplink at the UE). Both COUNTs start at 0, as
// after a Security Mode Command with a new KAMF (TS 33.501 6.7.2).
func NewNASContext(kamf []byte, encAlg, intAlg uint8, send Direction) *NASContext {
	return NewNASContextWithKeys(NASKeysFromKAMF(kamf, encAlg, intAlg), send)
}

// NewNASContextWithKeys starts a context with keys already derived.
func NewNASContextWithKeys(keys NASKeys, send Direction) *NASContext {
	return &NASContext{keys: keys, send: send}
}

// Keys returns the context's algorithms and keys.
func (c *NASContext) Keys() NASKeys { return c.keys }

// Protect wraps a plain 5GMM message with security header type sht and the
// next send COUNT, then advances that COUNT (TS 24.501 4.4.3.1).
func (c *NASContext) Protect(plain []byte, sht uint8) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pdu, err := ProtectNAS(c.keys, c.sendNext, c.send, sht, plain)
	if err != nil {
		return nil, err
	}
	c.sendNext++
	return pdu, nil
}

// Unprotect parses a received protected 5GMM message, estimates its COUNT,
// rejects a replay, checks the MAC, deciphers, and only then records the
// COUNT, so a forged message cannot move the counter. It returns the plain
// 5GMM message and the security header type.
func (c *NASContext) Unprotect(pdu []byte) (plain []byte, sht uint8, err error) {
	s, err := ParseSecuredNAS(pdu)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	count := c.received.Estimate(s.SQN)
	if count < c.received.Next() {
		return nil, s.HeaderType, ErrNASReplay
	}
	if plain, err = UnprotectNAS(c.keys, count, 1-c.send, s); err != nil {
		return nil, s.HeaderType, err
	}
	if err := c.received.Accept(count); err != nil {
		return nil, s.HeaderType, err
	}
	return plain, s.HeaderType, nil
}

// LastRxCount is the COUNT of the last accepted received message (0
// before any): at the AMF, the uplink COUNT that KgNB is derived with
// (TS 33.501 A.9).
func (c *NASContext) LastRxCount() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, _ := c.received.Last()
	return last
}

// NextTxCount is the COUNT the next protected message will carry.
func (c *NASContext) NextTxCount() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sendNext
}

// ResumeCounts restores the COUNTs of a stored context (e.g. a context
// transferred between AMFs, TS 23.502 4.2.2.2.2): the next COUNT to send
// and the next one expected.
func (c *NASContext) ResumeCounts(nextSend, nextReceive uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sendNext = nextSend
	c.received = NewReceiveCount(nextReceive)
}

// CipherContainer ciphers the value of the NAS message container of an
// initial message with the COUNT the next protected message (the initial
// message carrying it) will have, without advancing it (TS 24.501 4.4.6,
// TS 33.501 6.4.6).
func (c *NASContext) CipherContainer(plain []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := clone(plain)
	if err := nasCipher(c.keys, c.sendNext, bearer3GPP, c.send, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DecipherContainer deciphers the NAS message container of the initial
// message last accepted by Unprotect (or a verification advancing the
// received COUNT), with that message's COUNT (TS 24.501 4.4.6).
func (c *NASContext) DecipherContainer(ciphered []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	count, ok := c.received.Last()
	if !ok {
		return nil, errors.New("NAS: no message received under this context")
	}
	out := clone(ciphered)
	if err := nasCipher(c.keys, count, bearer3GPP, 1-c.send, out); err != nil {
		return nil, err
	}
	return out, nil
}
