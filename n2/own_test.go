package n2

import "testing"

// negotiationOf is what a udp association knows of its handshake and
// heartbeats, on either data path.
func negotiationOf(c Conn) *negotiation {
	switch c := c.(type) {
	case *ownAssoc:
		return c.neg
	case *assocConn:
		return c.neg
	}
	panic("not a user-space association")
}

var _ = testing.Short
