//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() {
	roles["echoer"] = echoerRole
	roles["reader"] = readerRole
	roles["halfreaper"] = halfReaperRole
	roles["mgrleaker"] = mgrLeakerRole
}

// mgrLeakerRole leaves control buffers as the manager would if killed
// while sending RSTs to the NF serving $XIO_PEER_ADDR.
func mgrLeakerRole(ctx context.Context) error {
	if err := xio.Init(xio.Config{}); err != nil {
		return err
	}
	if err := xio.LeakAsManagerForTest(os.Getenv("XIO_PEER_ADDR"), 8); err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// readerRole dials $XIO_PEER_ADDR and waits in a read, which only a FIN
// or RST can end; it prints how it ended.
func readerRole(ctx context.Context) error {
	c, err := xio.Dial(os.Getenv("XIO_PEER_ADDR"))
	if err != nil {
		return err
	}
	xioproc.Ready()
	_, err = c.Read(make([]byte, 1))
	fmt.Printf("read failed: %v\n", err)
	<-ctx.Done()
	return nil
}

// halfReaperRole plays a manager killed inside the reap of the dead NF
// that served $XIO_PEER_ADDR.
func halfReaperRole(ctx context.Context) error {
	if err := xio.Init(xio.Config{}); err != nil {
		return err
	}
	if err := xio.HalfReapForTest(os.Getenv("XIO_PEER_ADDR")); err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// echoerRole is a new NF: it is ready once one 64 KiB echo through the
// server at $XIO_PEER_ADDR came back right.
func echoerRole(ctx context.Context) error {
	c, err := xio.Dial(os.Getenv("XIO_PEER_ADDR"))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	out, in := make([]byte, 64<<10), make([]byte, 64<<10)
	rand.Read(out)
	go c.Write(out)
	if _, err := io.ReadFull(c, in); err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	if !bytes.Equal(in, out) {
		return errors.New("echo came back different")
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// startSplitManager starts X-IO as a node runs it: a primary that only
// holds the shared memory (the returned privateManager's process) and a
// manager that adopts it.
func startSplitManager(t *testing.T) (holder *privateManager, mgr *xioproc.Proc, mgrOut *testio.SyncBuffer) {
	t.Helper()
	if err := xioproc.EnsureHugepages(128); err != nil {
		t.Fatal(err)
	}
	prefix := xioproc.PrefixForNth(os.Getpid(), int(privateManagers.Add(1)))
	out := &testio.SyncBuffer{}
	holder = &privateManager{prefix: prefix, out: out}
	holder.Proc = startInto(t, xioproc.RoleHolder, out, out, holder.env())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("holder said:\n%s", out.String())
		}
		holder.Stop()
		xioproc.RemoveLeftovers(prefix)
	})
	mgr, mgrOut = startAdopter(t, holder)
	return holder, mgr, mgrOut
}

// startAdopter starts a manager for holder's shared memory.
func startAdopter(t *testing.T, holder *privateManager) (*xioproc.Proc, *testio.SyncBuffer) {
	t.Helper()
	out := &testio.SyncBuffer{}
	p := startInto(t, xioproc.RoleAdopter, out, out, holder.env())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager pid %d said:\n%s", p.Cmd.Process.Pid, out.String())
		}
		select {
		case <-p.Exited():
		default:
			p.Stop()
		}
	})
	return p, out
}

func running(p *xioproc.Proc) bool {
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

// Issue 10 item 7: the onvm manager SIGKILLed under load costs the NFs
// nothing. While no manager runs, their connections carry every byte, a
// new NF attaches and is served, and an NF that dies waits to be reaped; a
// manager started again adopts the tables, reaps that NF and later deaths
// (every buffer comes back), and a second manager is refused while it runs.
func TestKilledManagerIsAdoptedUnderRunningNFs(t *testing.T) {
	holder, mgr, _ := startSplitManager(t)
	addr := "adopt-sink"
	sink := startCaptured(t, "peer", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr)
	defer sink.Kill()
	loadOut := &testio.SyncBuffer{}
	loader := startCaptured(t, "loader", loadOut, holder.env(), "XIO_PEER_ADDR="+addr)
	defer loader.Kill()

	mgr.Kill()
	time.Sleep(300 * time.Millisecond) // three scan periods without a manager
	if !running(loader) {
		t.Fatalf("the loader's echoes failed while the manager was down: %v\n%s", loader.Err(), loadOut.String())
	}
	echoer := startCaptured(t, "echoer", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr)
	echoer.Kill() // its conn and buffers wait for the next manager
	holding := startCaptured(t, "peer", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR=adopt-holder", "XIO_PEER_HOLD=64")
	holding.Kill()

	next, _ := startAdopter(t, holder)
	refused := &testio.SyncBuffer{}
	if second, err := startAdopterErr(holder, refused); err == nil {
		second.Kill()
		t.Fatal("a second manager adopted the tables while one runs")
	}
	if want := fmt.Sprintf("another onvm manager (pid %d)", next.Cmd.Process.Pid); !strings.Contains(refused.String(), want) {
		t.Fatalf("second manager's refusal does not say %q:\n%s", want, refused.String())
	}
	time.Sleep(300 * time.Millisecond)
	if !running(loader) || !running(sink) {
		t.Fatalf("an NF stopped under the new manager (loader %v, sink %v):\n%s", running(loader), running(sink), loadOut.String())
	}
	loader.Kill() // a death the new manager must reap like the others
	out := &testio.SyncBuffer{}
	prober, err := startProber(holder, out, addr)
	if err != nil {
		t.Fatalf("after the manager's restart: %v\n%s", err, out.String())
	}
	prober.Kill()
}

func startAdopterErr(holder *privateManager, out *testio.SyncBuffer) (*xioproc.Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), holder.env())
	cmd.Stdout, cmd.Stderr = out, out
	return xioproc.StartCmd(cmd, xioproc.RoleAdopter)
}

// A manager asked to adopt shared memory nobody holds says what is missing
// instead of creating memory the NFs would not share.
func TestAdoptWithoutHolderSaysSo(t *testing.T) {
	nobody := &privateManager{prefix: fmt.Sprintf("xio-noholder-%d", os.Getpid())}
	defer xioproc.RemoveLeftovers(nobody.prefix)
	out := &testio.SyncBuffer{}
	if p, err := startAdopterErr(nobody, out); err == nil {
		p.Kill()
		t.Fatal("a manager adopted shared memory that nobody holds")
	}
	if want := "does its holder run?"; !strings.Contains(out.String(), want) {
		t.Fatalf("the refusal does not ask %q:\n%s", want, out.String())
	}
}

// A manager killed inside the reap of a dead NF, after resetting its conns
// in the table but before sending the RSTs, leaves their other sides
// waiting in reads that nothing else ends; the next manager takes the reap
// over from its record and sends the RSTs again.
func TestAdoptedReapResendsResets(t *testing.T) {
	holder, mgr, _ := startSplitManager(t)
	addr := "half-reaped"
	victim := startCaptured(t, "peer", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr)
	readOut := &testio.SyncBuffer{}
	reader := startCaptured(t, "reader", readOut, holder.env(), "XIO_PEER_ADDR="+addr)
	defer reader.Kill()
	mgr.Kill()
	victim.Kill()
	startCaptured(t, "halfreaper", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr).Kill()
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(readOut.String(), "read failed") {
		t.Fatalf("the read ended before any manager sent an RST: %s", readOut.String())
	}
	startAdopter(t, holder)
	waitOutput(t, readOut, "read failed", 20*time.Second)
	if !strings.Contains(readOut.String(), "reset") {
		t.Fatalf("the reader's read ended, but not by a reset: %s", readOut.String())
	}
}

// Control buffers a killed manager had taken, or handed to an NF without
// enqueueing them, belong to no NF, so no NF's reap frees them; the next
// manager takes them back (every buffer is free once the NFs are idle).
func TestAdoptingManagerReclaimsItsPredecessorsBuffers(t *testing.T) {
	holder, mgr, _ := startSplitManager(t)
	addr := "mgr-leak-sink"
	sink := startCaptured(t, "peer", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr)
	defer sink.Kill()
	startCaptured(t, "mgrleaker", &testio.SyncBuffer{}, holder.env(), "XIO_PEER_ADDR="+addr).Kill()
	mgr.Kill()
	startAdopter(t, holder)
	out := &testio.SyncBuffer{}
	prober, err := startProber(holder, out, addr)
	if err != nil {
		t.Fatalf("after the manager's restart: %v\n%s", err, out.String())
	}
	prober.Kill()
}
