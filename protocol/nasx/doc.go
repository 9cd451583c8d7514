// Package nasx is L25GC+'s one NAS-5GS helper layer on top of
// github.com/free5gc/nas: information-element conversions shared by the AMF
// and the UE simulator (files ie_*.go), the AMF's downlink message builders
// (amf_*.go), the simulator's uplink builders (ue_*.go), both sides of the
// NAS transport messages and the 5GSM payload a UE sends first
// (transport.go), and a decoder that never panics on network input
// (decode.go).
package nasx
