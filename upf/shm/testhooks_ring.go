//go:build l25gc_testhooks

package shm

/*
#include "upf_shm_ops.h"

static void queue_note(struct upf_shm *h, uint64_t seid, uint16_t pdr, uint8_t qfi)
{
	struct upf_rings *r = upf_rings_of(h);
	int64_t i = upf_ring_reserve(&r->note_idx);
	if (i < 0)
		return;
	r->note[i].up_seid = seid;
	r->note[i].pdr_id = pdr;
	r->note[i].qfi = qfi;
	upf_ring_publish(&r->note_idx);
}
*/
import "C"

// ringEntries is UPF_RING_N.
const ringEntries = int(C.UPF_RING_N)

// queueNote queues a note as UPF-U does (tests of UPF-C's side).
func queueNote(t *Table, n Note) {
	C.queue_note(t.h, C.uint64_t(n.UPSEID), C.uint16_t(n.PDRID), C.uint8_t(n.QFI))
}
