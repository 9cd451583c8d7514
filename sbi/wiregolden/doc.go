// Package wiregolden holds only a test: it pins the bytes the SBI puts on
// the wire for a few bodies of the registration and PDU session procedures
// (free5GC openapi models encoded with encoding/json), and what decoding odd
// but legal input gives. The build switches encoding/json's implementation
// (GOEXPERIMENT=jsonv2 in the Makefile, Go >= 1.25); the golden files were
// written by the classic implementation, so a run under either build shows
// whether a peer (free5GC, open5gs) would see a different body from ours.
package wiregolden
