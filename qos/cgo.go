package qos

/*
#cgo CFLAGS: -O3 -Wall -Wextra -Wno-unused-parameter
#include "qos.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// The errors of the C API (enum qos_err), for errors.Is.
var (
	ErrClock       = errors.New("clock rate must be 1..1e11 ticks per second")
	ErrAMBR        = errors.New("session AMBR must be above 0 bit/s")
	ErrFlows       = fmt.Errorf("more than %d QoS flows in one session", MaxFlows)
	ErrBurst       = errors.New("burst or queue size too large")
	ErrBusy        = errors.New("a removed flow still has queued packets (Flush it first)")
	ErrCIRAbovePIR = errors.New("committed rate (GBR) above peak rate (MBR)")
)

// MaxFlows is how many flows (QoS and non-QoS) one session has per direction.
const MaxFlows = C.QOS_MAX_FLOWS

// QueueSlots is how many packets one flow's queue holds at most.
const QueueSlots = C.QOS_QUEUE_SLOTS

// errFrom turns an enum qos_err into one of the errors above.
func errFrom(code C.int) error {
	switch code {
	case C.QOS_OK:
		return nil
	case C.QOS_ERR_HZ:
		return ErrClock
	case C.QOS_ERR_AMBR:
		return ErrAMBR
	case C.QOS_ERR_NFLOWS:
		return ErrFlows
	case C.QOS_ERR_BURST:
		return ErrBurst
	case C.QOS_ERR_BUSY:
		return ErrBusy
	case C.QOS_ERR_GBR_MBR:
		return ErrCIRAbovePIR
	}
	return fmt.Errorf("qos: %s (%d)", C.GoString(C.qos_strerror(code)), int(code))
}

// Colour is a packet's colour (RFC 2698).
type Colour uint8

const (
	Green  Colour = C.QOS_GREEN  // within the committed rate (GBR)
	Yellow Colour = C.QOS_YELLOW // above the committed, within the peak rate (MBR)
	Red    Colour = C.QOS_RED    // above the peak rate: dropped
)

func (c Colour) String() string {
	switch c {
	case Green:
		return "green"
	case Yellow:
		return "yellow"
	case Red:
		return "red"
	}
	return fmt.Sprintf("colour(%d)", uint8(c))
}
