package ransim

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// DefaultN3 is the gNB's N3 address in the lab topology `l25gc up` builds:
// the host end (l25gc-n3-gnb) of UPF-U's N3 veth.
var DefaultN3 = netip.MustParseAddr("10.100.0.2")

// UserPlane is the gNB's N3: one UDP socket on its N3 address, port 2152
// (TS 29.281 4.4.2.3), and the table of its tunnels by the DL TEID it
// allocated (TS 38.413 9.3.2.2). Uplink packets of a UE go out G-PDU
// encapsulated with a PDU Session Container (UL PDU SESSION INFORMATION
// and the QFI, TS 38.415 5.5.2.2); downlink G-PDUs are checked against
// the table and handed to the UE's sink.
type UserPlane struct {
	addr netip.Addr
	// PeerPort is the UPF's GTP-U port: 2152 except in tests.
	PeerPort int
	log      *slog.Logger

	conn     atomic.Pointer[net.UDPConn]
	nextTEID atomic.Uint32
	mu       sync.RWMutex
	byTEID   map[uint32]*Tunnel
	done     chan struct{}

	// Counters of the N3 traffic.
	UplinkPackets, DownlinkPackets, Dropped, ErrorIndications atomic.Int64
	// EndMarkers counts End Markers received (TS 29.281 7.3.2), Forwarded
	// the packets passed on to a handover target (forwarding.go).
	EndMarkers, Forwarded atomic.Int64

	// Echo Requests of Ping waiting for their response, by sequence number.
	echoSeq  atomic.Uint32
	echoMu   sync.Mutex
	echoWait map[uint16]chan struct{}
}

// NewUserPlane is the N3 of a gNB at addr; it allocates TEIDs at once and
// carries packets once Listen opened the socket.
func NewUserPlane(addr netip.Addr, log *slog.Logger) *UserPlane {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &UserPlane{addr: addr, PeerPort: gtpu.Port, log: log, byTEID: map[uint32]*Tunnel{}, done: make(chan struct{})}
}

// Addr is the N3 address announced in DL tunnel information.
func (p *UserPlane) Addr() netip.Addr { return p.addr }

// Listen opens the N3 socket on the address at port (2152 unless a test
// picks another, 0 for any) and starts reading downlink G-PDUs.
func (p *UserPlane) Listen(port int) error {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: p.addr.AsSlice(), Port: port})
	if err != nil {
		return fmt.Errorf("N3 socket on %v:%d: %w (is the address configured, e.g. by `l25gc up`, and the port free?)", p.addr, port, err)
	}
	if !p.conn.CompareAndSwap(nil, c) {
		c.Close()
		return errors.New("N3 socket already open")
	}
	go p.readLoop(c)
	return nil
}

// LocalPort is the UDP port of the open N3 socket, 0 when closed.
func (p *UserPlane) LocalPort() int {
	if c := p.conn.Load(); c != nil {
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	return 0
}

// Close closes the N3 socket.
func (p *UserPlane) Close() error {
	if c := p.conn.Swap(nil); c != nil {
		return c.Close()
	}
	return nil
}

// Tunnel is one PDU session's NG-U tunnel pair at the gNB.
type Tunnel struct {
	p         *UserPlane
	SessionID uint8
	DLTEID    uint32
	ul        atomic.Pointer[ngapx.Tunnel]
	rules     atomic.Pointer[qosRules]
	qfis      atomic.Pointer[[]uint8] // QoS flows set up for the session
	ranQoS    atomic.Pointer[RANQoS]  // the AMBR and flow parameters the AMF gave (gnb_qos.go)
	sink      atomic.Pointer[func([]byte)]
	// parked: the UE is CM-IDLE, the tunnel has no gNB end until a
	// Service Request sets it up again (idle.go); onParkedUplink, when
	// set, hears of uplink meanwhile (the UE wants service).
	parked         atomic.Bool
	onParkedUplink atomic.Pointer[func()]

	// Handover (forwarding.go): where a source passes packets on, the
	// target's hold, the tunnel this one is the DL forwarding tunnel of,
	// and the target's tunnel that took the session over.
	fwd          atomic.Pointer[forwarder]
	hold         atomic.Pointer[hold]
	fwdFor       atomic.Pointer[Tunnel]
	next         atomic.Pointer[Tunnel]
	sawEndMarker atomic.Bool
}

// newTunnel allocates a DL TEID (never 0, which TS 29.281 5.1 keeps for
// signalling) and enters the tunnel in the table.
func (p *UserPlane) newTunnel(sessionID uint8, ul ngapx.Tunnel, qfis []uint8) *Tunnel {
	t := &Tunnel{p: p, SessionID: sessionID}
	t.ul.Store(&ul)
	t.qfis.Store(&qfis)
	p.enter(t)
	return t
}

// enter gives t a free DL TEID and puts it in the table.
func (p *UserPlane) enter(t *Tunnel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		teid := p.nextTEID.Add(1)
		if _, taken := p.byTEID[teid]; teid != 0 && !taken {
			t.DLTEID = teid
			p.byTEID[teid] = t
			return
		}
	}
}

func (p *UserPlane) remove(t *Tunnel) {
	p.mu.Lock()
	delete(p.byTEID, t.DLTEID)
	p.mu.Unlock()
}

// Tunnels is how many tunnels the gNB holds.
func (p *UserPlane) Tunnels() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.byTEID)
}

// DL is the gNB's end of the tunnel, as Setup Response announces it.
func (t *Tunnel) DL() ngapx.Tunnel { return ngapx.Tunnel{IPv4: t.p.addr, TEID: t.DLTEID} }

// UL is the UPF's end.
func (t *Tunnel) UL() ngapx.Tunnel { return *t.ul.Load() }

// QFIs are the QoS flows set up for the session.
func (t *Tunnel) QFIs() []uint8 { return *t.qfis.Load() }

// SetSink names where downlink packets of the tunnel go (the UE's TUN);
// pkt is valid only during the call. Without one (nil) they are counted
// and dropped.
func (t *Tunnel) SetSink(f func(pkt []byte)) {
	if f == nil {
		t.sink.Store(nil)
		return
	}
	t.sink.Store(&f)
}

// setRules gives the tunnel the UE's QoS rules for marking uplink packets.
func (t *Tunnel) setRules(r qosRules) { t.rules.Store(&r) }

// QFI is the QFI an uplink packet carries: by the UE's QoS rules, else the
// session's first QoS flow.
func (t *Tunnel) QFI(pkt []byte) uint8 {
	if r := t.rules.Load(); r != nil && len(*r) > 0 {
		return r.uplinkQFI(pkt)
	}
	if q := t.QFIs(); len(q) > 0 {
		return q[0]
	}
	return 1
}

// SendUplink encapsulates one IP packet of the UE into a G-PDU to the UPF.
func (t *Tunnel) SendUplink(pkt []byte) error {
	if t.parked.Load() {
		if f := t.onParkedUplink.Load(); f != nil {
			(*f)()
		}
		return ErrIdle
	}
	c := t.p.conn.Load()
	if c == nil {
		return errors.New("N3 is not open")
	}
	ul := t.UL()
	b, err := gtpu.GPDU(ul.TEID, gtpu.ULPDUSessionInformation, t.QFI(pkt), pkt).Marshal()
	if err != nil {
		return err
	}
	_, err = c.WriteToUDPAddrPort(b, netip.AddrPortFrom(ul.IPv4, uint16(t.p.PeerPort)))
	if err == nil {
		t.p.UplinkPackets.Add(1)
	}
	return err
}

func (p *UserPlane) readLoop(c *net.UDPConn) {
	buf := make([]byte, 65535)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed
		}
		p.receive(c, buf[:n], from)
	}
}

// receive handles one datagram on N3: G-PDUs to their tunnel, Echo
// Requests answered (TS 29.281 7.2.2), G-PDUs for an unknown TEID answered
// with Error Indication (7.3.1), the rest counted and dropped.
func (p *UserPlane) receive(c *net.UDPConn, b []byte, from netip.AddrPort) {
	m, err := gtpu.Parse(b)
	if err != nil {
		p.Dropped.Add(1)
		p.log.Debug("N3: malformed GTP-U dropped", "from", from, "err", err)
		return
	}
	switch m.Type {
	case gtpu.TypeGPDU:
		p.downlink(c, m, from)
	case gtpu.TypeEchoRequest:
		if resp, err := gtpu.EchoResponse(m).Marshal(); err == nil {
			_, _ = c.WriteToUDPAddrPort(resp, from)
		}
	case gtpu.TypeEchoResponse:
		p.echoed(m)
	case gtpu.TypeEndMarker:
		p.endMarker(m)
	case gtpu.TypeErrorIndication:
		p.ErrorIndications.Add(1)
		p.log.Warn("N3: Error Indication from the UPF", "teid", m.TEIDDataI, "peer", m.PeerAddress)
	default:
		p.Dropped.Add(1)
	}
}

func (p *UserPlane) downlink(c *net.UDPConn, m *gtpu.Message, from netip.AddrPort) {
	p.mu.RLock()
	t := p.byTEID[m.TEID]
	p.mu.RUnlock()
	if t == nil {
		p.Dropped.Add(1)
		if ind, err := gtpu.ErrorIndication(m.TEID, p.addr).Marshal(); err == nil {
			_, _ = c.WriteToUDPAddrPort(ind, from)
		}
		return
	}
	t.deliverDownlink(m.Payload)
}

// endMarker is an End Marker on one of the gNB's tunnels (TS 29.281
// 7.3.2); on an unknown TEID it is counted and dropped.
func (p *UserPlane) endMarker(m *gtpu.Message) {
	p.mu.RLock()
	t := p.byTEID[m.TEID]
	p.mu.RUnlock()
	if t == nil {
		p.Dropped.Add(1)
		return
	}
	t.endMarker()
}
