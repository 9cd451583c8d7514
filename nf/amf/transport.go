package amf

import "net"

// Conn is one SCTP association with a gNB, as package n2 provides it (kernel
// SCTP or SCTP over UDP): whole NGAP PDUs with their stream, PPID 60.
type Conn interface {
	ReadMsg() (pdu []byte, stream uint16, err error)
	WriteMsg(pdu []byte, stream uint16) error // safe for concurrent use
	Close() error
	RemoteAddr() net.Addr
	Streams() uint16
}

// Listener accepts gNB associations.
type Listener interface {
	Accept() (Conn, error)
	Close() error
}

// ListenFunc opens the N2 listener with transport "kernel", "udp" or "auto"
// and says which transport it picked.
type ListenFunc func(transport, addr string) (ln Listener, picked string, err error)
