// Package vm boots a small Linux VM under QEMU whose kernel has SCTP, runs
// one shell command in it and returns the command's output and exit code,
// for tests of what this host's kernel cannot do (it has no SCTP).
//
// The kernel is Debian's linux-image-cloud-amd64, unpacked by
// scripts/vm-kernel.sh (cached, run on first use); the initramfs is built
// per run: busybox-static, the sctp module and its dependencies (loaded
// before the command), and the files the test hands in. QEMU runs with TCG
// and -cpu max (no KVM needed; the DPDK-linked l25gc needs more than QEMU's
// default CPU model). The serial console carries the output back.
package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Image is a kernel with the modules SCTP needs.
type Image struct {
	Kernel  string   // vmlinuz
	Modules []string // .ko files, in load order
	Release string   // what scripts/vm-kernel.sh unpacked
	// Tap, when set, is a host TAP device the VM's eth0 (virtio-net) is
	// plugged into, for tests where the VM talks to the host.
	Tap string
}

// File is a host file put into the VM.
type File struct {
	Path string // in the VM, absolute
	Src  string // on the host
}

// Result is what the command did.
type Result struct {
	Output   string // its stdout and stderr, then nothing of the VM's own
	ExitCode int
	Console  string // the whole serial console, for diagnosing
}

const qemu = "qemu-system-x86_64"

// Prepare returns the image, unpacking the kernel on first use. It skips
// the test only when QEMU is not installed (scripts/install-deps.sh
// installs it); any other problem fails the test.
func Prepare(t testing.TB) Image {
	t.Helper()
	if _, err := exec.LookPath(qemu); err != nil {
		t.Skipf("%s is not installed (scripts/install-deps.sh installs qemu-system-x86): the kernel SCTP tests did not run", qemu)
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Fatalf("busybox-static is not installed (scripts/install-deps.sh installs it): %v", err)
	}
	img, err := prepare()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func prepare() (Image, error) {
	script := filepath.Join(RepoRoot(), "scripts", "vm-kernel.sh")
	var stderr bytes.Buffer
	cmd := exec.Command(script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Image{}, fmt.Errorf("vm: %s: %v\n%s", script, err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	order, err := os.ReadFile(filepath.Join(dir, "modules", "order"))
	if err != nil {
		return Image{}, fmt.Errorf("vm: %w (remove %s and run %s again)", err, dir, script)
	}
	release, _ := os.ReadFile(filepath.Join(dir, "ready"))
	img := Image{Kernel: filepath.Join(dir, "vmlinuz"), Release: strings.TrimSpace(string(release))}
	for _, m := range strings.Fields(string(order)) {
		img.Modules = append(img.Modules, filepath.Join(dir, "modules", m))
	}
	return img, nil
}

// RepoRoot is the repository this package sits in.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Run boots the VM with files, runs command with sh in /root and powers off.
func (img Image) Run(ctx context.Context, files []File, command string) (Result, error) {
	dir, err := os.MkdirTemp("", "l25gc-vm-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	initrd := filepath.Join(dir, "initramfs.cpio")
	if err := img.writeInitramfs(initrd, files, command); err != nil {
		return Result{}, err
	}
	var console bytes.Buffer
	args := []string{"-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", "1024",
		"-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", img.Kernel, "-initrd", initrd,
		"-append", "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init"}
	if img.Tap != "" {
		args = append(args, "-netdev", "tap,id=n0,ifname="+img.Tap+",script=no,downscript=no",
			"-device", "virtio-net-pci,netdev=n0")
	}
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdout, cmd.Stderr = &console, &console
	runErr := cmd.Run()
	return parseConsole(console.String(), runErr)
}

var exitLine = regexp.MustCompile(`(?m)^` + markerExit + `(\d+)\s*$`)

const (
	markerBegin = "L25GC-VM-BEGIN"
	markerExit  = "L25GC-VM-EXIT="
)

// parseConsole finds the command's output between the markers /init prints.
func parseConsole(console string, runErr error) (Result, error) {
	console = strings.ReplaceAll(console, "\r\n", "\n")
	r := Result{Console: console, ExitCode: -1}
	begin := strings.Index(console, markerBegin+"\n")
	m := exitLine.FindStringSubmatchIndex(console)
	if begin < 0 || m == nil {
		if runErr == nil {
			runErr = errors.New("the VM powered off without running the command")
		}
		return r, fmt.Errorf("vm: %w; console:\n%s", runErr, tail(console, 4000))
	}
	r.Output = console[begin+len(markerBegin)+1 : m[0]]
	r.ExitCode, _ = strconv.Atoi(console[m[2]:m[3]])
	return r, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// initScript mounts what a program expects, loads SCTP, runs the command
// and powers off; the markers delimit the command's output on the console.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /run
for m in $(cat /modules/order); do
	insmod /modules/$m || echo "vm: insmod $m failed"
done
ip link set lo up
echo ` + markerBegin + `
cd /root && sh /cmd.sh 2>&1
echo ` + markerExit + `$?
poweroff -f
`

func (img Image) writeInitramfs(path string, files []File, command string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c := newCPIO(f)
	for _, d := range []string{"proc", "sys", "dev", "tmp", "root", "bin", "sbin", "usr/bin", "usr/sbin"} {
		c.mkdirAll(d)
	}
	c.charDev("dev/console", 5, 1) // init's stdio, before devtmpfs is mounted
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return fmt.Errorf("vm: busybox-static: %w", err)
	}
	c.file("bin/busybox", 0o755, busybox)
	c.symlink("bin/sh", "busybox")
	c.file("init", 0o755, []byte(initScript))
	c.file("cmd.sh", 0o644, []byte(command+"\n"))
	var order []string
	for _, m := range img.Modules {
		b, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		c.file("modules/"+filepath.Base(m), 0o644, b)
		order = append(order, filepath.Base(m))
	}
	c.file("modules/order", 0o644, []byte(strings.Join(order, "\n")+"\n"))
	for _, fl := range files {
		b, err := os.ReadFile(fl.Src)
		if err != nil {
			return fmt.Errorf("vm: %w", err)
		}
		c.file(strings.TrimPrefix(fl.Path, "/"), 0o755, b)
	}
	if err := c.close(); err != nil {
		return err
	}
	return f.Close()
}

// WithLibs is bin at path plus the shared libraries ldd lists for it, at
// their own paths (a dynamically linked program and what it re-executes
// find them where they are on this host).
func WithLibs(path, bin string) ([]File, error) {
	files := []File{{Path: path, Src: bin}}
	out, err := exec.Command("ldd", bin).Output()
	if err != nil { // "not a dynamic executable": static, nothing to add
		return files, nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "/") {
				files = append(files, File{Path: field, Src: field})
				break
			}
		}
	}
	return files, nil
}

// Timeout is how long one VM run may take before the test gives up: TCG
// boots in seconds here; the rest is the command.
const Timeout = 5 * time.Minute
