package n2

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"time"
)

// The dialing side of the own data path over a connected UDP socket: our
// INIT and COOKIE ECHO, repeated on T1-init and T1-cookie (RFC 4960 5.1,
// 6.3), and the socket's one reader goroutine that runs every packet of
// the association, handshake and data alike.

// packetConn is a connection that carries whole SCTP packets to and from
// one peer (a connected UDP socket, RFC 6951, or raw IP filtered to our
// association), with the SCTP ports our packets carry.
type packetConn struct {
	net.Conn
	localPort, peerPort uint16
}

// udpPacketConn numbers an encapsulated association by its UDP ports.
func udpPacketConn(uc *net.UDPConn) packetConn {
	la, ra := uc.LocalAddr().(*net.UDPAddr), uc.RemoteAddr().(*net.UDPAddr)
	return packetConn{uc, uint16(la.Port), uint16(ra.Port)}
}

// associateOwn sets up an association over pc; on failure it closes pc.
// icmp is the UDP socket's error queue (nil: ICMP ignored).
func associateOwn(ctx context.Context, addr string, pc packetConn, icmp *errorQueue, o Options) (Conn, error) {
	neg := &negotiation{}
	rc := &refusalConn{Conn: pc.Conn, icmp: icmp, neg: neg}
	a := newOwnAssoc(ownConfig{send: func(p []byte) error { _, err := rc.Write(p); return err },
		release: func() { pc.Close() }, neg: neg, localPort: pc.localPort, peerPort: pc.peerPort,
		local: pc.LocalAddr(), remote: pc.RemoteAddr(), cause: rc.cause}, o)
	ours := initChunk{tag: nonzeroTag(), rwnd: a.rwnd, outbound: ownStreams, inbound: ownStreams, initialTSN: rand.Uint32()}
	neg.mu.Lock()
	neg.localTag, neg.ourOS = ours.tag, ours.outbound
	neg.mu.Unlock()
	a.mu.Lock()
	a.ours, a.opts, a.rc = ours, o, rc
	a.handshakePkt = buildPacket(a.localPort, a.peerPort, 0, encodeInit(chunkInit, ours, nil))
	a.mu.Unlock()
	if o.ReadInline {
		a.inline, a.buf = true, make([]byte, maxDatagram)
	}
	go a.readSocket(rc)
	if err := a.handshake(ctx); err != nil {
		a.drop(err)
		return nil, fmt.Errorf("n2: SCTP association with %s: %w", addr, err)
	}
	return a, nil
}

// nonzeroTag is a random Initiate Tag; 0 is not one (RFC 4960 3.3.2).
func nonzeroTag() uint32 {
	for {
		if t := rand.Uint32(); t != 0 {
			return t
		}
	}
}

// readSocket runs every packet the connected socket receives through the
// association, until the socket closes or the peer refuses us (ICMP).
func (a *ownAssoc) readSocket(rc *refusalConn) {
	buf := make([]byte, maxDatagram)
	for {
		n, err := rc.Read(buf)
		if err != nil {
			a.drop(err)
			return
		}
		pkt, err := parseSCTP(buf[:n])
		if err != nil || !ownsTag(a.neg, pkt) {
			continue // 6.8 bad checksum, 8.5 not our tag: discarded
		}
		a.receive(pkt, 0)
		if a.handedToReadMsg() {
			return
		}
	}
}

// handedToReadMsg says whether the socket is ReadMsg's to read from now
// on: with ReadInline, once the COOKIE ACK has come (and not while Close
// waits for the SHUTDOWN ACK).
func (a *ownAssoc) handedToReadMsg() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inline && a.state == stateEstablished && !a.closing
}

// readInline is ReadMsg reading the socket itself (ReadInline): a message
// already complete first, else the next packets until one completes a
// message or the association ends. While the sender's drainer
// (drainInline) holds the socket, ReadMsg waits for it to hand over.
func (a *ownAssoc) readInline() ([]byte, uint16, error) {
	a.mu.Lock()
	for {
		if m, ok := a.popInbox(); ok {
			a.mu.Unlock()
			return m.pdu, m.stream, nil
		}
		select {
		case <-a.done:
			defer a.mu.Unlock()
			return nil, 0, a.err
		default:
		}
		if !a.socketBusy {
			break
		}
		a.readWaiters++
		a.space.Wait()
		a.readWaiters--
	}
	a.socketBusy = true
	a.mu.Unlock()
	defer a.releaseSocket()
	for {
		a.mu.Lock()
		m, ok := a.popInbox()
		a.mu.Unlock()
		if ok {
			return m.pdu, m.stream, nil
		}
		select {
		case <-a.done:
			a.mu.Lock()
			defer a.mu.Unlock()
			return nil, 0, a.err
		default:
		}
		n, err := a.rc.Read(a.buf)
		if err != nil {
			a.drop(err)
			continue
		}
		if pkt, err := parseSCTP(a.buf[:n]); err == nil && ownsTag(a.neg, pkt) {
			a.receive(pkt, 0)
		}
	}
}

func (a *ownAssoc) popInbox() (message, bool) {
	if len(a.inbox) == 0 {
		return message{}, false
	}
	m := a.inbox[0]
	a.inbox = a.inbox[1:]
	return m, true
}

// releaseSocket ends ReadMsg's turn at the socket; if chunks still wait
// for the peer's SACKs, the drainer takes over reading them.
func (a *ownAssoc) releaseSocket() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.socketBusy = false
	a.space.Broadcast()
	a.drainQueueLocked()
}

// drainQueueLocked starts the drainer when, with ReadInline, chunks wait
// to be sent (queued beyond cwnd, or marked for retransmission) and nobody
// reads the socket: the SACKs that let them go arrive on it. A lone NGAP
// message fits cwnd and never gets here, so the inline path keeps its one
// goroutine.
func (a *ownAssoc) drainQueueLocked() {
	if a.inline && !a.socketBusy && !a.closing && a.state == stateEstablished && a.snd.hasUnsent() {
		a.socketBusy = true
		go a.drainInline()
	}
}

// drainInline reads the socket for ReadInline until all that was queued
// is sent and acknowledged, or a ReadMsg wants the socket; what it
// completes waits in the inbox for ReadMsg.
func (a *ownAssoc) drainInline() {
	buf := make([]byte, maxDatagram)
	for {
		n, err := a.rc.Read(buf)
		if err != nil {
			a.drop(err)
		} else if pkt, err := parseSCTP(buf[:n]); err == nil && ownsTag(a.neg, pkt) {
			a.receive(pkt, 0)
		}
		a.mu.Lock()
		a.space.Broadcast() // a message may be in the inbox now
		idle := len(a.snd.queue) == 0 && len(a.snd.outstanding) == 0
		if idle || a.readWaiters > 0 || a.closing || a.state != stateEstablished {
			a.socketBusy = false
			a.space.Broadcast()
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
}

// handshake sends our INIT, then the COOKIE ECHO, each again on its T1
// timer doubling to RTO.Max, until the COOKIE ACK, Max.Init.Retransmits,
// the end of ctx, or the peer's refusal.
func (a *ownAssoc) handshake(ctx context.Context) error {
	a.mu.Lock()
	initial := a.snd.rto
	a.mu.Unlock()
	rto, tries := initial, 0
	a.resendHandshake()
	timer := time.NewTimer(rto)
	defer timer.Stop()
	for {
		select {
		case <-a.established:
			return nil
		case <-a.progress: // INIT ACK: the COOKIE ECHO went out; T1-cookie starts
			rto, tries = initial, 0
			timer.Reset(rto) // Go 1.23 timers: no stale expiry survives Reset
		case <-timer.C:
			if tries++; tries > maxInitRetrans {
				return fmt.Errorf("no answer after %d retransmissions (RFC 4960 5.1 Max.Init.Retransmits)", maxInitRetrans)
			}
			rto = min(2*rto, a.rtoMax)
			a.resendHandshake()
			timer.Reset(rto)
		case <-a.done:
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *ownAssoc) resendHandshake() {
	a.mu.Lock()
	pkt := a.handshakePkt
	a.mu.Unlock()
	_ = a.send(pkt)
}

// onInitAck takes the peer's INIT ACK in COOKIE-WAIT (5.1 C): its
// parameters start the data path, and its State Cookie goes back in a
// COOKIE ECHO.
func (a *ownAssoc) onInitAck(raw []byte) {
	if a.state != stateCookieWait {
		return // 5.2.3: an INIT ACK in any other state is discarded
	}
	peer, err := readInitChunk(raw)
	ck, ok := initAckCookie(raw)
	if err != nil || !ok || peer.tag == 0 || peer.outbound == 0 || peer.inbound == 0 {
		return // 3.3.3: invalid; T1-init sends our INIT again
	}
	a.begin(a.ours, peer, a.opts)
	a.state = stateCookieEchoed
	a.handshakePkt = buildPacket(a.localPort, a.peerPort, peer.tag, encodeChunk(chunkCookieEcho, 0, ck))
	_ = a.send(a.handshakePkt)
	select {
	case a.progress <- struct{}{}:
	default:
	}
}

// onCookieAck completes the handshake (5.1 E).
func (a *ownAssoc) onCookieAck() {
	if a.state != stateCookieEchoed {
		return
	}
	a.state = stateEstablished
	close(a.established)
}
