package shm

/*
#include "tables.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/l25gc/l25gc/upf/rules"
)

// The rings between UPF-C and UPF-U (upf_shm.h): UPF-U's notes of
// buffered downlink data, and UPF-C's commands about a session's buffer
// and End Markers.

// doorbellSuffix is UPF_DOORBELL_SUFFIX: UPF-C's doorbell socket is the
// tables file's path plus it.
const doorbellSuffix = ".bell"

// wakeSuffix is UPF_WAKE_SUFFIX: UPF-U's doorbell, rung after a command.
const wakeSuffix = ".wake"

// Note is UPF-U's news that it buffered the first downlink packet of a
// session whose FAR says BUFF|NOCP (TS 29.244 5.2.3.1): UPF-C sends the
// SMF a Downlink Data Report. One per session until the SMF rewrites a
// FAR of it.
type Note struct {
	UPSEID uint64
	PDRID  uint16 // the PDR that detected the packet
	QFI    uint8  // its QoS flow, 0 when unknown
}

// ErrRingFull is a command UPF-U did not take: it is not running.
var ErrRingFull = errors.New("upf tables: UPF-U's command ring is full (is upf-u running?)")

// Notes takes every note UPF-U queued.
func (t *Table) Notes() []Note {
	t.notesMu.Lock()
	defer t.notesMu.Unlock()
	var out []Note
	var n C.struct_upf_note
	for C.upft_note(t.h, &n) == 1 {
		out = append(out, Note{UPSEID: uint64(n.up_seid), PDRID: uint16(n.pdr_id), QFI: uint8(n.qfi)})
	}
	return out
}

// WatchDownlinkData calls f with each of UPF-U's notes until ctx ends:
// those queued before (UPF-C was down), then each as UPF-U rings the
// doorbell, a unix datagram socket next to the tables file. It sleeps in
// between: an idle user plane costs nothing here.
func (t *Table) WatchDownlinkData(ctx context.Context, f func(Note)) error {
	path := t.path + doorbellSuffix
	_ = os.Remove(path) // a killed UPF-C's
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("upf tables: doorbell %s: %w", path, err)
	}
	defer os.Remove(path)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	buf := make([]byte, 16)
	for {
		for _, n := range t.Notes() {
			f(n)
		}
		if _, _, err := conn.ReadFrom(buf); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("upf tables: doorbell %s: %w", path, err)
		}
	}
}

// Discard has UPF-U drop what it buffered for the session (the SMF did
// not know it: PFCP cause 65, TS 29.244 7.5.9).
func (t *Table) Discard(upSEID uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	slot, ok := t.bySEID[upSEID]
	if !ok {
		return notFound(upSEID)
	}
	return t.command(C.struct_upf_cmd{up_seid: C.uint64_t(upSEID), slot: C.uint32_t(slot), _type: C.UPF_CMD_DISCARD})
}

// SendEndMarker has UPF-U send GTP-U End Marker (TS 29.281 7.3.2) into
// the session's old tunnel, after the packets it sent there.
func (t *Table) SendEndMarker(upSEID uint64, old rules.OuterHeader) error {
	if !old.PeerIPv4.Is4() {
		return fmt.Errorf("upf tables: End Marker toward %v, not IPv4", old.PeerIPv4)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	slot, ok := t.bySEID[upSEID]
	if !ok {
		return notFound(upSEID)
	}
	return t.command(C.struct_upf_cmd{up_seid: C.uint64_t(upSEID), slot: C.uint32_t(slot), _type: C.UPF_CMD_END_MARKER,
		teid: C.uint32_t(old.TEID), addr: C.uint32_t(v4(old.PeerIPv4))})
}

// changed tells UPF-U that slot's session was rewritten (flush when its
// FAR forwards now, discard when it drops), re-arming the note when a FAR
// changed. The caller holds t.mu.
func (t *Table) changed(upSEID uint64, slot uint32, rearm bool) error {
	c := C.struct_upf_cmd{up_seid: C.uint64_t(upSEID), slot: C.uint32_t(slot), _type: C.UPF_CMD_CHANGED}
	if rearm {
		c.flags = C.UPF_CMD_REARM
	}
	return t.command(c)
}

func (t *Table) command(c C.struct_upf_cmd) error {
	if C.upft_command(t.h, &c) != 0 {
		return ErrRingFull
	}
	t.wake()
	return nil
}

// wake rings UPF-U's doorbell so that a napping UPF-U takes the command at
// once (a paged UE's buffered packets go out without waiting up to
// upf-u's sleep). Never blocks: a busy UPF-U whose doorbell is full, or
// none listening, costs one failed send; the command waits in the ring
// either way. The caller holds t.mu.
func (t *Table) wake() {
	if t.wakeFD < 0 {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return
		}
		t.wakeFD = fd
	}
	_ = syscall.Sendto(t.wakeFD, []byte{1}, syscall.MSG_DONTWAIT, &syscall.SockaddrUnix{Name: t.path + wakeSuffix})
}
