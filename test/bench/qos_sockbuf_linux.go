package bench

import (
	"net"

	"golang.org/x/sys/unix"
)

// udpBufferBytes is each flow socket's kernel buffer: a receiver
// descheduled for 100 ms on a loaded machine meets 100 ms of its flow at
// once (1 MB at 80 Mbit/s), and the default 208 KB would drop it there,
// after UPF-U, where it counts against the shaper's rate.
const udpBufferBytes = 8 << 20

// growBuffers raises c's receive and send buffers to udpBufferBytes: past
// net.core.rmem_max/wmem_max when root (SO_*BUFFORCE), else as far as the
// limits allow.
func growBuffers(c *net.UDPConn) {
	_ = c.SetReadBuffer(udpBufferBytes)
	_ = c.SetWriteBuffer(udpBufferBytes)
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, udpBufferBytes)
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, udpBufferBytes)
	})
}
