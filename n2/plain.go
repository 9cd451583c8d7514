package n2

import "net"

// PlainUDPConn is a connected UDP socket behind Conn: one datagram per
// message, no SCTP. It is the floor the user-space SCTP transports are
// measured against (BenchmarkN2PingPong, `l25gc bench n2`), never an N2
// transport of its own.
type PlainUDPConn struct{ *net.UDPConn }

// ReadMsg reads one datagram; every message is on stream 1.
func (p PlainUDPConn) ReadMsg() ([]byte, uint16, error) {
	buf := make([]byte, 64<<10)
	n, err := p.Read(buf)
	return buf[:n], 1, err
}

// WriteMsg sends pdu as one datagram; the stream is ignored.
func (p PlainUDPConn) WriteMsg(pdu []byte, _ uint16) error {
	_, err := p.Write(pdu)
	return err
}

// Streams is what an NGAP association offers: stream 0 for non-UE
// signalling, one for UEs.
func (p PlainUDPConn) Streams() uint16 { return 2 }
