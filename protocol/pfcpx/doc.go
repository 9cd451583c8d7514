// Package pfcpx is the one PFCP helper layer of L25GC+ (TS 29.244), on
// github.com/free5gc/pfcp: it converts the user plane's rule model
// (package upf/rules) to and from PFCP IEs and messages, carries PFCP
// between nodes (Node: sequence numbers, T1/N1 retransmission, duplicate
// request detection, heartbeats, association setup and release; over UDP
// or an X-IO PacketConn), and implements rules.N4 (Client), what the SMF
// calls.
//
// Session messages use this package's own IE structs (messages.go): the
// library's allow one SDF Filter per PDI and one Created PDR per response,
// where TS 29.244 7.5.2.2 and 7.5.3.1 allow several. Node messages
// (heartbeat, association) use the library's.
//
// N4 addresses name their transport: "udp:IP:port" (UDP, port 8805 by TS
// 29.244 4.2.2) or "xio:NAME" (an X-IO datagram socket, xio.ListenPacket;
// UPF-C binds its upf.c.pfcp_addr there too, so "xio:127.0.0.1:8805").
// Addr picks the one an SMF uses from the node config.
package pfcpx
