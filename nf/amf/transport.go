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

// AdaptListen turns a transport's Listen (e.g. n2.Listen, whose Accept
// returns its own Conn interface) into a ListenFunc, so the AMF needs no
// import of the transport: amf.Options{Listen: amf.AdaptListen(n2.Listen)}.
func AdaptListen[L interface {
	Accept() (C, error)
	Close() error
}, C Conn](listen func(transport, addr string) (L, string, error)) ListenFunc {
	return func(transport, addr string) (Listener, string, error) {
		ln, picked, err := listen(transport, addr)
		if err != nil {
			return nil, "", err
		}
		return adapted[L, C]{ln}, picked, nil
	}
}

type adapted[L interface {
	Accept() (C, error)
	Close() error
}, C Conn] struct{ ln L }

func (a adapted[L, C]) Accept() (Conn, error) {
	c, err := a.ln.Accept()
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (a adapted[L, C]) Close() error { return a.ln.Close() }
