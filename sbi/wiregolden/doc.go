// Package wiregolden holds only a test: it pins the bytes the SBI puts on
// the wire for a few bodies of the registration and PDU session procedures
// (free5GC openapi models encoded with encoding/json), and what decoding odd
// but legal input gives. GOEXPERIMENT=jsonv2 (Go >= 1.25) switches
// encoding/json's implementation build-wide; the golden files were written
// by the classic one, so a run under either build shows whether a peer
// (free5GC, open5gs) would see a different body from ours
// (DEVELOPERS.md: why the Makefile does not set it).
package wiregolden
