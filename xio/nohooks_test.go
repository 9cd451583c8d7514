//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const (
	mainPkg  = "github.com/l25gc/l25gc/cmd/l25gc"
	hooksTag = "l25gc_testhooks"
)

// hookSymbol matches what the test hooks put in a binary: our Go *ForTest
// functions (testhooks.go) and the C hooks and their state (testhooks.c,
// the L25GC_TESTHOOKS part of stack.c).
var hookSymbol = regexp.MustCompile(`github\.com/l25gc/l25gc/.*ForTest|xio_test_|xio_send_hook|xio_take_paused|xio_set_conn_hint|xio_view`)

// TestProductionBuildCarriesNoHooks builds the l25gc binary as `make build`
// does and finds none of the hooks in its symbols. The same build with the
// hooks tag must show them, or the check would prove nothing.
func TestProductionBuildCarriesNoHooks(t *testing.T) {
	dir := t.TempDir()
	hooked := filepath.Join(dir, "l25gc-hooks")
	goTool(t, "build", "-tags", hooksTag, "-o", hooked, mainPkg)
	if hooks := hookSymbols(t, hooked); len(hooks) == 0 {
		t.Fatalf("go build -tags %s ./cmd/l25gc shows no hook symbol: the check below would prove nothing", hooksTag)
	}
	bin := filepath.Join(dir, "l25gc")
	goTool(t, "build", "-o", bin, mainPkg)
	if hooks := hookSymbols(t, bin); len(hooks) > 0 {
		t.Fatalf("go build ./cmd/l25gc carries test hooks: %v", hooks)
	}
}

// TestProductionSourcesDeclareNoHooks checks the sources that go into
// cmd/l25gc: the linker drops Go functions nothing calls, so a hook file
// built without its tag could hide from the symbol check above.
func TestProductionSourcesDeclareNoHooks(t *testing.T) {
	if hooks := hookDecls(t, "-tags", hooksTag); len(hooks) == 0 {
		t.Fatalf("with -tags %s no hook declaration is found: the check below would prove nothing", hooksTag)
	}
	if hooks := hookDecls(t); len(hooks) > 0 {
		t.Fatalf("sources built into cmd/l25gc without -tags %s declare test hooks: %v", hooksTag, hooks)
	}
}

// goTool runs the go command with GOFLAGS cleared: a tag set there must
// not leak into the production build under test.
func goTool(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func hookSymbols(t *testing.T, bin string) []string {
	seen := map[string]bool{}
	for _, line := range strings.Split(string(goTool(t, "tool", "nm", bin)), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && hookSymbol.MatchString(f[len(f)-1]) {
			seen[f[len(f)-1]] = true
		}
	}
	return sortedKeys(seen)
}

// hookDecls lists the hook functions declared in the module's sources that
// cmd/l25gc is built from with the given go list flags: Go functions named
// *ForTest and C files defining xio_test_* functions.
func hookDecls(t *testing.T, flags ...string) []string {
	args := append([]string{"list", "-deps"}, flags...)
	args = append(args, "-f", `{{if .Module}}{{if eq .Module.Path "github.com/l25gc/l25gc"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .CgoFiles}} {{.}}{{end}}{{range .CFiles}} {{.}}{{end}}{{"\n"}}{{end}}{{end}}`, mainPkg)
	cHook := regexp.MustCompile(`(?m)^\w[\w ]*\b(xio_test_\w+)\(`)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(goTool(t, args...))), "\n") {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			path := filepath.Join(f[0], name)
			if strings.HasSuffix(name, ".go") {
				for _, fn := range forTestFuncs(t, path) {
					seen[fn] = true
				}
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range cHook.FindAllStringSubmatch(string(src), -1) {
				seen[name+": "+m[1]] = true
			}
		}
	}
	return sortedKeys(seen)
}

func forTestFuncs(t *testing.T, path string) []string {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && strings.HasSuffix(fn.Name.Name, "ForTest") {
			names = append(names, filepath.Base(path)+": "+fn.Name.Name)
		}
	}
	return names
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
