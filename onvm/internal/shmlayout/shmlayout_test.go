package shmlayout

import (
	"strings"
	"testing"
)

// TestSharedStructsMatchC is the layout check of issue 8: every struct that
// lives in shared memory has, in Go's cgo view, the size and field offsets
// the C compiler gives it (and C's _Static_asserts pin those to the list).
func TestSharedStructsMatchC(t *testing.T) {
	c := fromC()
	pinned := map[string]bool{}
	for _, r := range c {
		pinned[r.typ] = true
	}
	for name := range cgoTypes {
		if !pinned[name] {
			t.Errorf("struct %s has no layout list in C", name)
		}
	}
	for _, problem := range compare(c, fromGo(cgoTypes)) {
		t.Error(problem)
	}
}

// The flexible payload of a message buffer is pinned in C even though cgo
// leaves it out of the Go type: the payload starts at ONVM_MSG_HEADER.
func TestMessagePayloadStartsAfterHeader(t *testing.T) {
	rows := index(fromC())
	if got, size := rows["onvm_msg.data"].value, rows["onvm_msg."].value; got != 64 || size != 64 {
		t.Fatalf("onvm_msg payload at %d of a %d-byte header, want 64 and 64", got, size)
	}
}

// compare must notice each way a layout can drift; a check that cannot
// fail would prove nothing.
func TestCompareFindsDrift(t *testing.T) {
	goRows := fromGo(cgoTypes)
	tests := []struct {
		name string
		c, g []row
		want string
	}{
		{"field moved", fromC(), with(goRows, row{"onvm_msg", "len", 24}),
			"offsetof(struct onvm_msg, len): C says 20, Go's cgo view 24"},
		{"struct grew", fromC(), with(goRows, row{"onvm_conn", "", 80}),
			"sizeof(struct onvm_conn): C says 72, Go's cgo view 80"},
		{"field not pinned", fromC(), append(clone(goRows), row{"onvm_svc", "owner", 96}),
			"offsetof(struct onvm_svc, owner) (at 96) is not in its layout list"},
		{"pinned field gone", fromC(), without(goRows, "onvm_nf.bell"),
			"offsetof(struct onvm_nf, bell) (at 16) is missing from Go's cgo view"},
		{"struct without cgo type", append(fromC(), row{"upf_ghost", "", 128}), goRows,
			"struct upf_ghost is pinned in C but has no cgo type"},
		{"cgo type without list", fromC(), append(clone(goRows), row{"upf_phantom", "", 64}),
			"struct upf_phantom has a cgo type but no layout list in C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compare(tc.c, tc.g)
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("compare found %q, want one problem containing %q", got, tc.want)
			}
		})
	}
}

func TestCName(t *testing.T) {
	for goName, want := range map[string]string{"_type": "type", "_len": "_len", "len": "len", "_": "_"} {
		if got := cName(goName); got != want {
			t.Errorf("cName(%q) = %q, want %q", goName, got, want)
		}
	}
}

func clone(rows []row) []row { return append([]row(nil), rows...) }

// with replaces the row of r's struct and field by r.
func with(rows []row, r row) []row {
	out := clone(rows)
	for i := range out {
		if out[i].key() == r.key() {
			out[i] = r
		}
	}
	return out
}

func without(rows []row, key string) []row {
	var out []row
	for _, r := range rows {
		if r.key() != key {
			out = append(out, r)
		}
	}
	return out
}
