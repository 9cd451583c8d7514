package ransim

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/l25gc/l25gc/protocol/gtpu"
)

// Ping is GTP-U path management (TS 29.281 7.2.1): an Echo Request to a
// peer's GTP-U port and the time until its Echo Response. Besides telling
// that the peer is there, it makes both ends learn each other's link
// address, so that the first packets a UPF sends a gNB it never sent to
// (a handover target) do not wait for address resolution.
func (p *UserPlane) Ping(ctx context.Context, peer netip.Addr) (time.Duration, error) {
	c := p.conn.Load()
	if c == nil {
		return 0, errors.New("N3 is not open")
	}
	seq := uint16(p.echoSeq.Add(1))
	answer := make(chan struct{})
	p.echoMu.Lock()
	if p.echoWait == nil {
		p.echoWait = map[uint16]chan struct{}{}
	}
	p.echoWait[seq] = answer
	p.echoMu.Unlock()
	defer func() {
		p.echoMu.Lock()
		delete(p.echoWait, seq)
		p.echoMu.Unlock()
	}()
	b, err := gtpu.EchoRequest(seq).Marshal()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := c.WriteToUDPAddrPort(b, netip.AddrPortFrom(peer, uint16(p.PeerPort))); err != nil {
		return 0, fmt.Errorf("GTP-U Echo Request to %v: %w", peer, err)
	}
	select {
	case <-answer:
		return time.Since(start), nil
	case <-ctx.Done():
		return 0, fmt.Errorf("GTP-U Echo Request to %v: %w", peer, ctx.Err())
	}
}

// echoed is an Echo Response: the Ping waiting for it is done.
func (p *UserPlane) echoed(m *gtpu.Message) {
	p.echoMu.Lock()
	ch, ok := p.echoWait[m.Seq]
	delete(p.echoWait, m.Seq)
	p.echoMu.Unlock()
	if ok {
		close(ch)
	}
}
