// Package ngapx is L25GC+'s one NGAP helper layer on top of
// github.com/free5gc/ngap: IE conversions shared by the AMF and the gNB
// simulator (ie_*.go), the AMF's builders of downlink messages and parsers of
// uplink ones (amf_*.go), the simulator's uplink builders (ran_*.go), and a
// decoder that never panics on network input (decode.go). Encode and Decode
// take a hand-written aligned-PER path for the messages of a registration
// and a PDU session setup (fast_*.go, on protocol/perbits), octet- and
// value-identical to the library, and the library for everything else.
package ngapx
