// Package n2 carries NGAP between gNBs and the AMF over SCTP (TS 38.412):
// one message per NGAP PDU, PPID 60, port 38412, non-UE-associated
// signalling on stream 0 and UE-associated signalling on the others.
//
// Two transports sit behind one interface:
//
//   - kernel: the host's SCTP (github.com/ishidawataru/sctp), what real gNBs
//     speak;
//
//   - udp: SCTP in user space whose packets travel as UDP payloads, the
//     encapsulation of RFC 6951, for hosts without kernel SCTP. The
//     handshake is ours; the data path is github.com/pion/sctp's, or ours
//     when Options.SCTPImpl picks it (own_*.go: a message is sent in the
//     writer's goroutine and received by the socket's one reader). The
//     AMF listens on one UDP socket and runs one association per
//     remote UDP address. Peers must use the same encapsulation (our
//     simulator does); tshark dissects it with `-d udp.port==38412,sctp`.
//
//   - raw: the same user-space SCTP as standard packets, IP protocol 132
//     over a raw socket (CAP_NET_RAW), which kernel-SCTP gNBs speak to
//     unchanged, for hosts without the SCTP module; refused where the
//     kernel has SCTP, which would answer the same packets.
//
// auto picks kernel SCTP when the host can open an SCTP socket, else raw
// when the process may open a raw socket, else udp; Listen and Dial say
// which they picked.
package n2

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"time"
)

// NGAP over SCTP, TS 38.412 7.
const (
	DefaultPort = 38412
	PPIDNGAP    = 60
)

// Conn is one SCTP association carrying NGAP.
type Conn interface {
	// ReadMsg returns one NGAP PDU and the stream it arrived on. One reader at a time.
	ReadMsg() (pdu []byte, stream uint16, err error)
	// WriteMsg sends one NGAP PDU on a stream with PPID 60. Safe for concurrent use.
	WriteMsg(pdu []byte, stream uint16) error
	Close() error
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
	// Streams is the number of outbound streams usable (at least 1).
	Streams() uint16
}

// Listener accepts associations.
type Listener interface {
	Accept() (Conn, error)
	Close() error
	Addr() net.Addr
}

// Transport names.
const (
	Kernel = "kernel"
	UDP    = "udp"
	Raw    = "raw"
	Auto   = "auto"
)

// Options tune the transports; the zero value gives the defaults.
type Options struct {
	// Metrics counts DATA chunks dropped instead of handed up (nil: not counted).
	Metrics *Metrics
	// HeartbeatInterval is RFC 4960 HB.interval (0: DefaultHeartbeatInterval
	// over udp and the kernel's sysctl net.sctp.hb_interval over kernel;
	// negative: no heartbeats).
	HeartbeatInterval time.Duration
	// PathMaxRetrans is how many heartbeats in a row may go unanswered
	// before the association is declared failed (0: DefaultPathMaxRetrans,
	// over kernel sysctl net.sctp.path_max_retrans).
	PathMaxRetrans int
	// MaxAssociations caps the associations a udp or raw listener serves;
	// a valid COOKIE ECHO past it gets an ABORT with Out of Resource
	// (RFC 4960 3.3.10.4) (0: DefaultMaxAssociations).
	MaxAssociations int
	// MaxMessageSize is the largest NGAP PDU received or sent; a larger one
	// received is dropped and counted, the association stays
	// (0: DefaultMaxMessageSize).
	MaxMessageSize int
	// RTOMax is RFC 9260 RTO.Max, the bound on the doubling retransmission
	// timers (T1-init, T1-cookie, T3-rtx) over udp and raw (0: the RFC's
	// 60 s). A simulated gNB keeps it short, so that it tries its AMF again
	// within RTOMax of a restart even without ICMP.
	RTOMax time.Duration
	// SCTPImpl picks who runs an association's data path over udp and
	// raw: ImplOwn (our own, RFC 4960 6, sent inline and received by the
	// socket's one reader) or ImplPion (github.com/pion/sctp, the earlier
	// path); "" is DefaultSCTPImpl.
	SCTPImpl string
	// ReadInline lets a dialed association on the own data path read its
	// socket in the goroutine that calls ReadMsg, once the handshake is
	// done, instead of in a goroutine of its own that hands messages over:
	// one thread wake-up less per message received. The caller must then
	// keep a goroutine in ReadMsg for the association's whole life (the
	// simulated gNB does): SACKs, heartbeats and ABORTs are read there too.
	ReadInline bool

	onRefused func()        // tests: a dial attempt was refused by ICMP
	rtoMin    time.Duration // tests: RTO.Min of the own data path (0: RFC 4960's 1 s)
}

// SCTP data path implementations over the user-space transports.
const (
	ImplOwn  = "own"
	ImplPion = "pion"
	// DefaultSCTPImpl is the data path when Options.SCTPImpl is empty:
	// ours, with congestion control and fast retransmit (RFC 4960 7.2),
	// saves the two goroutine hand-offs pion makes per message. pion
	// stays selectable.
	DefaultSCTPImpl = ImplOwn
)

// ownDataPath says whether user-space associations run our own data path;
// an unknown name is refused by CheckSCTPImpl before it gets here.
func (o Options) ownDataPath() bool {
	return o.SCTPImpl == ImplOwn || (o.SCTPImpl == "" && DefaultSCTPImpl == ImplOwn)
}

// CheckSCTPImpl refuses a data path name other than own, pion or "".
func CheckSCTPImpl(name string) error {
	switch name {
	case "", ImplOwn, ImplPion:
		return nil
	}
	return fmt.Errorf("n2: unknown SCTP implementation %q (want own or pion)", name)
}

func (o Options) maxAssociations() int {
	if o.MaxAssociations <= 0 {
		return DefaultMaxAssociations
	}
	return o.MaxAssociations
}

func (o Options) maxMessageSize() uint32 {
	if o.MaxMessageSize <= 0 {
		return DefaultMaxMessageSize
	}
	return uint32(o.MaxMessageSize)
}

// rtoMaxMillis is RTOMax as pion takes it (0: pion's default, 60 s).
func (o Options) rtoMaxMillis() float64 {
	if o.RTOMax <= 0 {
		return 0
	}
	return float64(o.RTOMax.Milliseconds())
}

// firstRefusalPause is how long a dial refused by ICMP waits before trying
// again; it doubles up to refusalPauseMax.
const firstRefusalPause = 50 * time.Millisecond

// refusalPauseMax bounds the pause between refused dial attempts: a second,
// or RTOMax when shorter, as T1-init's own retransmissions would be.
func (o Options) refusalPauseMax() time.Duration {
	if o.RTOMax > 0 {
		return max(firstRefusalPause, min(time.Second, o.RTOMax))
	}
	return time.Second
}

// receiveBuffer is pion's receive window: room for a few of the largest messages.
func (o Options) receiveBuffer() uint32 {
	return max(4<<20, 4*o.maxMessageSize())
}

// RFC 4960 15 protocol parameters: a silent peer is given up on after about
// (PathMaxRetrans+1) x HeartbeatInterval, three minutes, like kernel SCTP.
const (
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultPathMaxRetrans    = 5
)

func (o Options) heartbeat() (interval time.Duration, maxRetrans int) {
	interval, maxRetrans = o.HeartbeatInterval, o.PathMaxRetrans
	if interval == 0 {
		interval = DefaultHeartbeatInterval
	}
	if maxRetrans <= 0 {
		maxRetrans = DefaultPathMaxRetrans
	}
	return interval, maxRetrans
}

// Listen opens an N2 listener on addr with the named transport and returns
// the transport actually used.
func Listen(transport, addr string) (Listener, string, error) {
	return Options{}.Listen(transport, addr)
}

// Listen is the package Listen with these options; it fits amf.AdaptListen.
func (o Options) Listen(transport, addr string) (Listener, string, error) {
	picked, err := pick(transport)
	if err != nil {
		return nil, "", err
	}
	if err := CheckSCTPImpl(o.SCTPImpl); err != nil {
		return nil, picked, err
	}
	var ln Listener
	switch picked {
	case Kernel:
		ln, err = listenKernel(addr, o)
	case Raw:
		ln, err = listenRaw(addr, o)
	default:
		ln, err = listenUDP(addr, o)
	}
	if err != nil {
		return nil, picked, err
	}
	return ln, picked, nil
}

// Dial connects to an AMF at addr with the named transport.
func Dial(ctx context.Context, transport, addr string) (Conn, string, error) {
	return Options{}.Dial(ctx, transport, addr)
}

// Dial is the package Dial with these options.
func (o Options) Dial(ctx context.Context, transport, addr string) (Conn, string, error) {
	picked, err := pick(transport)
	if err != nil {
		return nil, "", err
	}
	if err := CheckSCTPImpl(o.SCTPImpl); err != nil {
		return nil, picked, err
	}
	var c Conn
	switch picked {
	case Kernel:
		c, err = dialKernel(ctx, addr, o)
	case Raw:
		c, err = dialRawIP(ctx, addr, o)
	default:
		c, err = dialUDP(ctx, addr, o)
	}
	if err != nil {
		return nil, picked, err
	}
	return c, picked, nil
}

func pick(transport string) (string, error) {
	switch transport {
	case Kernel, UDP, Raw:
		return transport, nil
	case Auto, "":
		switch {
		case KernelSCTPAvailable():
			return Kernel, nil
		case RawSCTPPermitted():
			return Raw, nil
		}
		return UDP, nil
	}
	return "", fmt.Errorf("n2: unknown transport %q (want kernel, raw, udp or auto)", transport)
}

// KernelSCTPAvailable reports whether this host can open an SCTP socket.
func KernelSCTPAvailable() bool {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_SCTP)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}
