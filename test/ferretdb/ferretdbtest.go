// Package ferretdbtest gives tests a real MongoDB-wire server: FerretDB
// v1.24.0 with its SQLite backend, built from the Go module proxy and cached,
// so the UDR's mongodb backend is tested against the wire protocol and query
// semantics it meets in production, with nothing to install.
//
// Building (once per machine, about a minute; later runs reuse the binary):
//
//	go mod download -json github.com/FerretDB/FerretDB@v1.24.0
//	cp -r <Dir> <tmp>/src && echo v1.24.0 > <tmp>/src/build/version/version.txt
//	cd <tmp>/src && CGO_ENABLED=0 go build -trimpath -tags ferretdb_no_postgresql -o <cache>/ferretdb ./cmd/ferretdb
//
// FerretDB embeds build/version/version.txt and refuses to start without it;
// the module zip does not carry it because FerretDB's release tooling writes
// it from git. <cache> is $L25GC_FERRETDB_CACHE, or the user cache dir
// ($HOME/.cache/l25gc/ferretdb/v1.24.0). Build also works outside tests, for
// running the UDR against FerretDB by hand (see Command).
package ferretdbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Version is the FerretDB release the tests run against.
const (
	Module  = "github.com/FerretDB/FerretDB"
	Version = "v1.24.0"
)

// CacheDir is where the built binary is kept.
func CacheDir() (string, error) {
	if d := os.Getenv("L25GC_FERRETDB_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("ferretdb: no cache dir (set L25GC_FERRETDB_CACHE): %w", err)
	}
	return filepath.Join(base, "l25gc", "ferretdb", Version), nil
}

// Build returns the path of the FerretDB binary, building it first if the
// cache does not hold it. Concurrent builders (test binaries of several
// packages) serialise on a lock file; the binary appears by rename, whole.
func Build() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "ferretdb")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("ferretdb: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) { // built by another process while we waited
		return bin, nil
	}
	return bin, build(dir, bin)
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ferretdb: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("ferretdb: lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// build downloads the module source, copies it to a writable tree, writes
// the version file and builds cmd/ferretdb into bin.
func build(dir, bin string) error {
	src, err := download()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	defer os.RemoveAll(work)
	tree := filepath.Join(work, "src")
	if err := copyTree(src, tree); err != nil {
		return fmt.Errorf("ferretdb: copy module source: %w", err)
	}
	version := filepath.Join(tree, "build", "version", "version.txt")
	if err := os.WriteFile(version, []byte(Version+"\n"), 0o644); err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	tmpBin := filepath.Join(work, "ferretdb")
	// The PostgreSQL backend is left out: the tests use SQLite only, and
	// it halves the build. SQLite is modernc.org/sqlite, pure Go: no cgo.
	cmd := goCmd(tree, "build", "-trimpath", "-tags", "ferretdb_no_postgresql", "-o", tmpBin, "./cmd/ferretdb")
	cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ferretdb: go build in %s: %w\n%s", tree, err, out)
	}
	if err := os.Rename(tmpBin, bin); err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	return nil
}

// download fetches the module into the module cache and returns its directory.
func download() (string, error) {
	cmd := goCmd("", "mod", "download", "-json", Module+"@"+Version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil && err == nil {
		err = jerr
	}
	if err != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("ferretdb: go mod download %s@%s: %v %s\n%s%s", Module, Version, err, info.Error, out, stderr.Bytes())
	}
	return info.Dir, nil
}

// goCmd runs the go tool outside any workspace or module of ours, with the
// module cache and proxy of the environment.
func goCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(goTool(), args...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = os.TempDir()
	}
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
	return cmd
}

func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); isExecutable(p) {
			return p
		}
	}
	return "go"
}

// copyTree copies a read-only module tree into a writable one.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Command is the command line that serves the SQLite databases under dataDir
// on listenAddr; state (FerretDB's own small state file) goes to dataDir too.
func Command(bin, dataDir, listenAddr string) *exec.Cmd {
	return exec.Command(bin,
		"--handler=sqlite",
		"--sqlite-url=file:"+filepath.ToSlash(dataDir)+"/",
		"--listen-addr="+listenAddr,
		"--state-dir="+dataDir,
		"--debug-addr=-",
		"--telemetry=disable",
		"--log-level=error",
	)
}

// Start builds (or reuses) FerretDB, serves a fresh empty database on a free
// loopback port for the duration of the test, and returns its mongodb URI.
// A failed build fails the test with the build output; nothing is skipped.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken before we bind it
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if lastErr = start(t, bin, dir, addr); lastErr == nil {
			return "mongodb://" + addr + "/"
		}
	}
	t.Fatalf("ferretdb: %v", lastErr)
	return ""
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("ferretdb: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs FerretDB and waits until it accepts connections or exits.
func start(t testing.TB, bin, dir, addr string) error {
	var logs bytes.Buffer
	cmd := Command(bin, dir, addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before serving on %s: %v\n%s", addr, err, logs.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Cleanup(func() { stop(t, cmd, exited, &logs) })
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stop(t testing.TB, cmd *exec.Cmd, exited chan error, logs *bytes.Buffer) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	if t.Failed() && logs.Len() > 0 {
		t.Logf("ferretdb log:\n%s", tail(logs.String(), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := strings.IndexByte(s[len(s)-n:], '\n')
	return "…" + s[len(s)-n+i+1:]
}
