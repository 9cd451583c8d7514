// Command sctpcap checks NGAP's SCTP on the wire inside the VM: it reads
// every SCTP packet the host receives (a raw IP socket for protocol 132 gets
// a copy of each) until SIGTERM, then says how many DATA chunks it saw and
// how many broke TS 38.412 7 (PPID other than 60) or RFC 4960 (a stream the
// association did not grant), exiting 1 if any did or none was seen.
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
)

// direction is one way of an association, by SCTP ports (all loopback).
type direction struct{ src, dst uint16 }

// announced is what one side said in its INIT or INIT ACK (RFC 4960 3.3.2).
type announced struct{ os, mis uint16 }

type checker struct {
	said                          map[direction]announced
	data, badPPID, badStream, raw int
}

func main() {
	c, err := net.ListenIP("ip4:132", &net.IPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sctpcap:", err)
		os.Exit(2)
	}
	ck := &checker{said: map[direction]announced{}}
	packets := make(chan []byte, 1024)
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				close(packets)
				return
			}
			packets <- append([]byte(nil), buf[:n]...)
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("sctpcap: listening")
	for {
		select {
		case p, ok := <-packets:
			if ok {
				ck.packet(p)
				continue
			}
		case <-stop:
			c.Close()
			for p := range packets {
				ck.packet(p)
			}
		}
		break
	}
	fmt.Printf("sctpcap: %d packets, %d DATA chunks, %d with a PPID other than 60, %d on a stream not granted\n",
		ck.raw, ck.data, ck.badPPID, ck.badStream)
	if ck.data == 0 || ck.badPPID > 0 || ck.badStream > 0 {
		os.Exit(1)
	}
}

func (ck *checker) packet(p []byte) {
	if len(p) < 12 {
		return
	}
	ck.raw++
	dir := direction{binary.BigEndian.Uint16(p[0:]), binary.BigEndian.Uint16(p[2:])}
	for off := 12; off+4 <= len(p); {
		typ, l := p[off], int(binary.BigEndian.Uint16(p[off+2:]))
		if l < 4 || off+l > len(p) {
			return
		}
		v := p[off+4 : off+l]
		switch {
		case (typ == 1 || typ == 2) && len(v) >= 16: // INIT, INIT ACK
			ck.said[dir] = announced{os: binary.BigEndian.Uint16(v[8:]), mis: binary.BigEndian.Uint16(v[10:])}
		case typ == 0 && len(v) >= 12: // DATA
			ck.dataChunk(dir, binary.BigEndian.Uint16(v[4:]), binary.BigEndian.Uint32(v[8:]))
		}
		off += (l + 3) &^ 3
	}
}

// dataChunk checks one DATA chunk: PPID 60, and a stream below
// min(sender's OS, receiver's MIS) (RFC 4960 5.1.1).
func (ck *checker) dataChunk(dir direction, stream uint16, ppid uint32) {
	ck.data++
	if ppid != 60 {
		ck.badPPID++
		fmt.Printf("sctpcap: DATA %d->%d PPID %d (0x%08x)\n", dir.src, dir.dst, ppid, ppid)
	}
	sender, ok1 := ck.said[dir]
	receiver, ok2 := ck.said[direction{dir.dst, dir.src}]
	if !ok1 || !ok2 || stream >= min(sender.os, receiver.mis) {
		ck.badStream++
		fmt.Printf("sctpcap: DATA %d->%d on stream %d, granted %d (handshake seen: %v)\n",
			dir.src, dir.dst, stream, min(sender.os, receiver.mis), ok1 && ok2)
	}
}
