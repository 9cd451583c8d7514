package u

/*
#include "upf_shm.h"
#include "upfu.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/l25gc/l25gc/upf/shm"
)

// Parsed is what UPF-U's C parser read from a frame (struct upfu_pkt).
type Parsed struct {
	ARP        bool
	Proto      uint8  // outer IPv4 protocol
	Src, Dst   uint32 // outer IPv4 addresses
	GTP        bool   // a GTP-U message
	GTPType    uint8
	TEID       uint32
	QFI        uint8 // from the PDU Session Container
	Inner      int   // offset of the forwarded IPv4 packet (G-PDU, N6)
	InnerLen   int
	InnerProto uint8
}

// DropError is the drop reason the parser gave a frame.
type DropError struct{ Reason string }

func (e *DropError) Error() string { return "dropped: " + e.Reason }

// Parse runs UPF-U's parser on a frame as received on N3 (n3) or N6: for
// tests and the fuzz target. It never reads past the frame.
func Parse(n3 bool, frame []byte) (Parsed, error) {
	var k C.struct_upfu_pkt
	var p *C.uint8_t
	if len(frame) > 0 {
		p = (*C.uint8_t)(unsafe.Pointer(&frame[0]))
	}
	var r C.int
	if n3 {
		r = C.upfu_parse_n3(p, C.uint32_t(len(frame)), &k)
	} else {
		r = C.upfu_parse_n6(p, C.uint32_t(len(frame)), &k)
	}
	if r != 0 {
		if int(r) > 0 && int(r) < len(shm.DropReasons) {
			return Parsed{}, &DropError{shm.DropReasons[r]}
		}
		return Parsed{}, fmt.Errorf("parser returned unknown reason %d", r)
	}
	out := Parsed{ARP: k.l3type == C.UPFU_L3_ARP, Proto: uint8(k.proto), Src: uint32(k.src), Dst: uint32(k.dst),
		GTP: k.gtp != 0, GTPType: uint8(k.gtp_type), TEID: uint32(k.teid), QFI: uint8(k.qfi),
		Inner: int(k.inner), InnerLen: int(k.inner_len), InnerProto: uint8(k.fproto)}
	if out.Inner+out.InnerLen > len(frame) {
		return out, fmt.Errorf("parser put the inner packet at %d+%d in a %d-byte frame", out.Inner, out.InnerLen, len(frame))
	}
	return out, nil
}
