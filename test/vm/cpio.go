package vm

import (
	"fmt"
	"io"
)

// cpioWriter writes the "newc" cpio format the kernel unpacks as an
// initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
type cpioWriter struct {
	w     io.Writer
	ino   uint32
	err   error
	dirs  map[string]bool
	wrote int64
}

const (
	modeDir     = 0o040000
	modeFile    = 0o100000
	modeSymlink = 0o120000
	modeCharDev = 0o020000
)

func newCPIO(w io.Writer) *cpioWriter { return &cpioWriter{w: w, dirs: map[string]bool{}} }

func (c *cpioWriter) entry(name string, mode uint32, major, minor uint32, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, len(data), 0, 0, major, minor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.wrote += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.wrote % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// mkdirAll adds a directory and its parents, once each.
func (c *cpioWriter) mkdirAll(dir string) {
	if dir == "" || dir == "." || dir == "/" || c.dirs[dir] {
		return
	}
	c.mkdirAll(parent(dir))
	c.dirs[dir] = true
	c.entry(dir, modeDir|0o755, 0, 0, nil)
}

func (c *cpioWriter) file(name string, perm uint32, data []byte) {
	c.mkdirAll(parent(name))
	c.entry(name, modeFile|perm, 0, 0, data)
}

func (c *cpioWriter) symlink(name, target string) {
	c.mkdirAll(parent(name))
	c.entry(name, modeSymlink|0o777, 0, 0, []byte(target))
}

func (c *cpioWriter) charDev(name string, major, minor uint32) {
	c.mkdirAll(parent(name))
	c.entry(name, modeCharDev|0o600, major, minor, nil)
}

// close writes the trailer.
func (c *cpioWriter) close() error {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	return c.err
}

func parent(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
