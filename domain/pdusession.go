package domain

import (
	"fmt"
	"strconv"
)

// ParsePDUSessionID reads a PDU session id as SBI paths carry it (TS 29.571
// PduSessionId, 0-255): 0 is "no PDU session identity assigned" (TS 24.007
// 11.2.3.1b), so a session has 1 to 255.
func ParsePDUSessionID(s string) (int32, error) {
	id, err := strconv.ParseUint(s, 10, 8)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("PDU session id %q: want 1 to 255 (TS 29.571 PduSessionId, TS 24.007 11.2.3.1b)", s)
	}
	return int32(id), nil
}

// CheckPDUSessionID says whether id is a PDU session's (1 to 255).
func CheckPDUSessionID(id int32) error {
	if id < 1 || id > 255 {
		return fmt.Errorf("PDU session id %d: want 1 to 255 (TS 29.571 PduSessionId, TS 24.007 11.2.3.1b)", id)
	}
	return nil
}
