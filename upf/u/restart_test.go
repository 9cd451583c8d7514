package u_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/xio/xioproc"
)

const roleUPFC = "upfc"

// runUPFC stands in for UPF-C: it installs the session and waits to be
// killed.
func runUPFC(ctx context.Context) error {
	t, err := shm.Open(tablesConfig())
	if err != nil {
		return err
	}
	if err := t.Install(session(7, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// Killing UPF-C (SIGKILL) does not stop forwarding of the sessions it
// installed, and the next UPF-C reads them back (issue 11, faults).
func TestForwardingOutlivesUPFC(t *testing.T) {
	l := newLab(t)
	n3, _ := l.ready()
	upfc, err := xioproc.Start(roleUPFC)
	if err != nil {
		t.Fatal(err)
	}
	upfc.Cmd.Process.Signal(syscall.SIGKILL)
	<-upfc.Exited()
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, ueUDP("after the kill"))))
	if _, err := l.dn.recv(wait, isIPv4); err != nil {
		t.Fatalf("no forwarding after UPF-C died: %v", err)
	}
	again, err := shm.Open(tablesConfig())
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := again.Sessions()
	if len(sessions) != 1 || sessions[0].UPSEID != 7 || again.Broken != 0 {
		t.Fatalf("restarted UPF-C found %+v (broken %d), want session 7", sessions, again.Broken)
	}
	usage, _ := again.Usage(7)
	if len(usage) != 1 || usage[0].UplinkPackets != 1 {
		t.Errorf("usage %+v: want the packet forwarded after the kill", usage)
	}
}
