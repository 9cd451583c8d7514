package xio

/*
#include <linux/futex.h>
#include "onvm_ops.h"
#include "stack.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// shmView is Go's view of the X-IO shared memory of this process's
// attachment (stack.c's struct onvm_view, read once at attach), for the
// operations made per request: taking messages from our rx ring, taking a
// buffer, delivering it and waking its receiver, and the window counters
// (shmops.go). They follow onvm_ops.h's protocol exactly; set-up, binding,
// dialing, closing, datagrams and the futex sleep stay in C.
type shmView struct {
	self       uint32
	shm        *C.struct_onvm_shm
	me         *C.struct_onvm_nf
	data       unsafe.Pointer // shm.nbufs data buffers of ONVM_MSG_SIZE
	dataAddr   uintptr
	ndata      uint32
	ctl        unsafe.Pointer // ONVM_CTL_BUFS control buffers of ONVM_CTL_SIZE
	ctlAddr    uintptr
	rx         [C.ONVM_MAX_NF]shmRing
	delivering *[C.ONVM_MAX_NF]uint32 // ours, by destination
	cview      *C.struct_onvm_view    // C's view: the eventfd copies it caches
	cursor     atomic.Uint32          // next-fit cursor of data buffer allocation
	// eventfd says senders wake our poller through its eventfd (the
	// value it arms 'sleeping' with); else the futex.
	eventfd bool
	ownEfd  int
}

// newShmView reads C's view of the attachment (set-up, once).
func newShmView() *shmView {
	cv := C.xio_nf_view()
	v := &shmView{
		self:       uint32(cv.self),
		shm:        cv.shm,
		data:       unsafe.Pointer(cv.data),
		ndata:      uint32(cv.ndata),
		ctl:        unsafe.Pointer(cv.ctl),
		delivering: (*[C.ONVM_MAX_NF]uint32)(unsafe.Pointer(cv.delivering)),
		cview:      cv,
		ownEfd:     -1,
	}
	v.dataAddr, v.ctlAddr = uintptr(v.data), uintptr(v.ctl)
	v.me = &v.shm.nf[v.self]
	for i := range v.rx {
		v.rx[i] = newShmRing(C.xio_rx_ring(C.uint32_t(i)))
	}
	return v
}

// Sizes and limits of onvm_shm.h, from C.
const (
	msgSize     = C.ONVM_MSG_SIZE
	ctlSize     = C.ONVM_CTL_SIZE
	ctlBufs     = C.ONVM_CTL_BUFS
	maxNF       = C.ONVM_MAX_NF
	maxConn     = C.ONVM_MAX_CONN
	maxSvc      = C.ONVM_MAX_SVC
	addrLen     = C.ONVM_ADDR_LEN
	connWindow  = C.ONVM_CONN_WINDOW
	allocProbes = 1024 // onvm_ops.h ONVM_ALLOC_PROBES
)

// Where an address from a ring points (onvm_buf_kind).
const (
	bufBad  = C.ONVM_BUF_BAD
	bufData = C.ONVM_BUF_DATA
	bufCtl  = C.ONVM_BUF_CTL
)

// ownWord is ONVM_OWN(state, owner, src).
func ownWord(state, owner, src uint32) uint32 { return state<<16 | src<<8 | owner }

func ownState(w uint32) uint32 { return w >> 16 & 0xff }
func ownOwner(w uint32) uint32 { return w & 0xff }

// msgAt checks that the address a is the start of one of the buffers (a
// ring entry another process wrote) and returns it as a pointer derived
// from the pool's base, or nil. Nothing is touched before this.
func (v *shmView) msgAt(a uintptr) (*C.struct_onvm_msg, int) {
	if d := a - v.dataAddr; d < uintptr(v.ndata)*msgSize {
		if d&(msgSize-1) != 0 {
			return nil, bufBad
		}
		return (*C.struct_onvm_msg)(unsafe.Add(v.data, d)), bufData
	}
	if c := a - v.ctlAddr; c < ctlBufs*ctlSize {
		if c&(ctlSize-1) != 0 {
			return nil, bufBad
		}
		return (*C.struct_onvm_msg)(unsafe.Add(v.ctl, c)), bufCtl
	}
	return nil, bufBad
}

func ownOf(m *C.struct_onvm_msg) *uint32 { return (*uint32)(unsafe.Pointer(&m.own)) }

// free gives back a buffer we hold (onvm_msg_free): one release store.
func (v *shmView) free(m *C.struct_onvm_msg) { atomic.StoreUint32(ownOf(m), 0) }

// alloc takes a free data buffer (onvm_buf_take): a CAS FREE -> HELD(self)
// on its ownership word, at most allocProbes looks from the cursor; nil
// when none is free. Its header is zeroed but for the owner and source.
func (v *shmView) alloc() *C.struct_onvm_msg {
	n := v.ndata
	if n == 0 {
		return nil
	}
	i := v.cursor.Load()
	if i >= n {
		i = 0
	}
	mine := ownWord(C.ONVM_BUF_HELD, v.self, v.self)
	for k := uint32(0); k < min(allocProbes, n); k++ {
		m := (*C.struct_onvm_msg)(unsafe.Add(v.data, uintptr(i)*msgSize))
		if i++; i == n {
			i = 0
		}
		if own := ownOf(m); atomic.LoadUint32(own) == 0 && atomic.CompareAndSwapUint32(own, 0, mine) {
			v.cursor.Store(i)
			clear(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(m), 4)), C.ONVM_MSG_HEADER-4))
			m.src_nf = C.uint16_t(v.self)
			return m
		}
	}
	v.cursor.Store(i)
	return nil
}

// payloadOf is the payload area of data buffer m, n bytes long.
func payloadOf(m *C.struct_onvm_msg, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(m), msgHeader)), n)
}

// futexWake wakes one waiter of the shared futex word w. A raw system
// call: it never blocks, and going through entersyscall would wake sysmon.
func futexWake(w *uint32) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), C.FUTEX_WAKE, 1, 0, 0, 0)
}

// eventfdWrite adds one to eventfd fd; false if the write failed.
func eventfdWrite(fd int) bool {
	one := uint64(1)
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&one)), 8)
	return errno == 0 && n == 8
}

// schedYield gives up the core once (sched_yield), raw like futexWake: it
// returns at once or after another thread's turn, never blocks.
func schedYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
