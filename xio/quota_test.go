//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// An NF that stops reading (SIGSTOP) while 300 conns write full windows at
// it (75 MiB: more than the whole pool) holds at most its quota of buffers.
// Meanwhile another NF process and this one go on talking, dials work, and
// control messages still arrive: FIN within this process, RSTs from the
// manager when the other NF dies. Once the stalled NF runs again it gets
// every byte of a conn that wrote through the stall.
func TestStalledNFCannotStarveTheNode(t *testing.T) {
	base := settledPool(t)
	quota := xio.QuotaForTest()
	addrS, addrE := uniqueAddr(t), uniqueAddr(t)
	stalled, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addrS)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Kill()
	echo, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addrE)
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Kill()

	keep := dial(t, addrS)
	roundTrip(t, keep, []byte("before the stall"))
	stopProc(t, stalled)
	kept := make([]byte, 64<<10)
	rand.Read(kept)
	keptWritten := make(chan error, 1)
	go func() { _, err := keep.Write(kept); keptWritten <- err }()

	flood := make([]net.Conn, 300)
	for i := range flood {
		flood[i] = dial(t, addrS)
	}
	var wg sync.WaitGroup
	for _, c := range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			c.Write(make([]byte, 256<<10))
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if inUse, _, _ := xio.PoolInUse(); int(inUse) > int(base)+quota+64 {
		t.Fatalf("%d buffers taken with one NF stalled; its quota is %d", inUse-base, quota)
	}

	// Two processes talk through it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var toEcho []net.Conn
	for i := 0; i < 4; i++ {
		c, err := xio.DialContext(ctx, addrE)
		if err != nil {
			t.Fatalf("dial another NF while one is stalled: %v", err)
		}
		defer c.Close()
		toEcho = append(toEcho, c)
	}
	msg := make([]byte, 200<<10)
	rand.Read(msg)
	toEcho[0].SetDeadline(time.Now().Add(2 * time.Second))
	roundTrip(t, toEcho[0], msg)
	toEcho[0].SetDeadline(time.Time{})

	// FIN within this process.
	_, c, s := connectedPair(t)
	c.Write([]byte("bye"))
	c.Close()
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	if got, err := io.ReadAll(s); err != nil || string(got) != "bye" {
		t.Fatalf("read %q, %v; want \"bye\" then EOF", got, err)
	}
	s.Close()

	// RSTs from the manager for a dead NF.
	echo.Kill()
	for _, c := range toEcho {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read from a killed NF while another is stalled: %v, want ECONNRESET", err)
		}
	}

	// The stall ends: the kept conn's bytes all arrive, in order.
	wg.Wait()
	for _, c := range flood {
		c.Close()
	}
	stalled.Cmd.Process.Signal(syscall.SIGCONT)
	got := make([]byte, len(kept))
	keep.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(keep, got); err != nil || !bytes.Equal(got, kept) {
		t.Fatalf("echo of what was written during the stall: %v (equal %v)", err, bytes.Equal(got, kept))
	}
	if err := <-keptWritten; err != nil {
		t.Fatal(err)
	}
	keep.Close()
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
}
