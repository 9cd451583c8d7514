package pfcpx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

// A UPF that does not answer: the SMF's establishment fails after T1 x
// (N1+1) with a TimeoutError (the SMF then rejects with 5GSM #26), and a
// UPF address that names no transport fails at once.
func TestClientUnreachableUPF(t *testing.T) {
	silent := udpSocket(t)
	c := NewClient(ClientConfig{T1: 20 * time.Millisecond, N1: 1, UDPAddr: "127.0.0.1:0"})
	defer c.Close()
	_, err := c.Establish(context.Background(), "udp:"+silent.LocalAddr().String(), aSession())
	var te *TimeoutError
	if !errors.As(err, &te) || te.Sent != 2 {
		t.Fatalf("establishment at a silent UPF: %v, want a TimeoutError after 2 sends", err)
	}
	var ce *rules.CauseError
	if errors.As(err, &ce) {
		t.Fatalf("a timeout reported as a UPF's cause: %v", err)
	}
	if _, err := c.Delete(context.Background(), "sctp:127.0.0.1:8805", 1); err == nil {
		t.Fatal("a UPF address of no known transport accepted")
	}
}
