// Package shmlayout checks that Go's cgo view of every struct in shared
// memory (onvm/include, the shared-memory header tree) has the sizes and
// field offsets C computes. Each shared header pins its structs in a layout
// list (shm_layout.h) that C asserts; this package expands the same lists
// into a table of sizeof/offsetof values and its test compares them, field
// by field, with unsafe.Sizeof/Offsetof of the cgo types. It exists for
// that test alone: nothing imports it.
package shmlayout

/*
#cgo CFLAGS: -D_GNU_SOURCE -I${SRCDIR}/../../include -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -mssse3 -O2
#include "onvm_shm.h"
#include "upf_shm.h"

// Every shared header's layout list.
static const struct shm_layout_row shm_rows[] = {
	SHM_LAYOUT_ROWS(ONVM_SHM_LAYOUT)
	SHM_LAYOUT_ROWS(UPF_SHM_LAYOUT)
};

static size_t shm_nrows(void) { return sizeof(shm_rows) / sizeof(shm_rows[0]); }
static const struct shm_layout_row *shm_row(size_t i) { return &shm_rows[i]; }
*/
import "C"

import (
	"fmt"
	"go/token"
	"reflect"
	"sort"
	"strings"
)

// cgoTypes are Go's views of the shared structs, by C struct name: every
// struct of a layout list must be here, and the other way round.
var cgoTypes = map[string]reflect.Type{
	"onvm_msg":  reflect.TypeOf(C.struct_onvm_msg{}),
	"onvm_nf":   reflect.TypeOf(C.struct_onvm_nf{}),
	"onvm_svc":  reflect.TypeOf(C.struct_onvm_svc{}),
	"onvm_conn": reflect.TypeOf(C.struct_onvm_conn{}),
	"onvm_reap": reflect.TypeOf(C.struct_onvm_reap{}),
	"onvm_shm":  reflect.TypeOf(C.struct_onvm_shm{}),
	// The UPF's rule tables (upf_shm.h).
	"upf_sdf":        reflect.TypeOf(C.struct_upf_sdf{}),
	"upf_pdr":        reflect.TypeOf(C.struct_upf_pdr{}),
	"upf_far":        reflect.TypeOf(C.struct_upf_far{}),
	"upf_qer":        reflect.TypeOf(C.struct_upf_qer{}),
	"upf_urr":        reflect.TypeOf(C.struct_upf_urr{}),
	"upf_sess":       reflect.TypeOf(C.struct_upf_sess{}),
	"upf_count":      reflect.TypeOf(C.struct_upf_count{}),
	"upf_bucket":     reflect.TypeOf(C.struct_upf_bucket{}),
	"upf_dyn":        reflect.TypeOf(C.struct_upf_dyn{}),
	"upf_port_stats": reflect.TypeOf(C.struct_upf_port_stats{}),
	"upf_stats":      reflect.TypeOf(C.struct_upf_stats{}),
	"upf_shm":        reflect.TypeOf(C.struct_upf_shm{}),
	"upf_ring_idx":   reflect.TypeOf(C.struct_upf_ring_idx{}),
	"upf_note":       reflect.TypeOf(C.struct_upf_note{}),
	"upf_cmd":        reflect.TypeOf(C.struct_upf_cmd{}),
	"upf_rings":      reflect.TypeOf(C.struct_upf_rings{}),
}

// row is one line of a layout: a struct's size (field "") or the offset
// of one of its fields.
type row struct {
	typ, field string
	value      uintptr
}

func (r row) key() string { return r.typ + "." + r.field }

// fromC is every layout list as the C compiler lays it out.
func fromC() []row {
	n := int(C.shm_nrows())
	rows := make([]row, 0, n)
	for i := 0; i < n; i++ {
		r := C.shm_row(C.size_t(i))
		rows = append(rows, row{C.GoString(r._type), C.GoString(r.field), uintptr(r.value)})
	}
	return rows
}

// fromGo is the same rows as cgo's Go types have them: each struct's size
// and every field cgo kept, under its C name.
func fromGo(types map[string]reflect.Type) []row {
	var rows []row
	for name, t := range types {
		rows = append(rows, row{name, "", t.Size()})
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Name == "_" {
				continue // padding cgo inserted for an aligned field
			}
			rows = append(rows, row{name, cName(f.Name), f.Offset})
		}
	}
	return rows
}

// cName undoes cgo's renaming of C fields named like Go keywords ("type"
// becomes "_type").
func cName(goName string) string {
	if n := strings.TrimPrefix(goName, "_"); n != goName && token.IsKeyword(n) {
		return n
	}
	return goName
}

// compare lists every disagreement between the C rows and the Go rows.
// cgo drops a C flexible array member (onvm_msg.data), so a field missing
// on the Go side is fine only where it starts right at the struct's end.
func compare(c, g []row) []string {
	cm, gm := index(c), index(g)
	var bad []string
	for k, cr := range cm {
		gr, ok := gm[k]
		switch {
		case ok && gr.value != cr.value:
			bad = append(bad, fmt.Sprintf("%s: C says %d, Go's cgo view %d", what(cr), cr.value, gr.value))
		case !ok && cr.field == "":
			bad = append(bad, fmt.Sprintf("struct %s is pinned in C but has no cgo type in shmlayout.cgoTypes", cr.typ))
		case !ok && cr.value != cm[cr.typ+"."].value:
			bad = append(bad, fmt.Sprintf("%s (at %d) is missing from Go's cgo view", what(cr), cr.value))
		}
	}
	for k, gr := range gm {
		if _, ok := cm[k]; ok {
			continue
		}
		if gr.field == "" {
			bad = append(bad, fmt.Sprintf("struct %s has a cgo type but no layout list in C", gr.typ))
		} else if _, pinned := cm[gr.typ+"."]; pinned {
			bad = append(bad, fmt.Sprintf("%s (at %d) is not in its layout list: pin it and bump ONVM_SHM_VERSION", what(gr), gr.value))
		}
	}
	sort.Strings(bad)
	return bad
}

func index(rows []row) map[string]row {
	m := make(map[string]row, len(rows))
	for _, r := range rows {
		m[r.key()] = r
	}
	return m
}

func what(r row) string {
	if r.field == "" {
		return "sizeof(struct " + r.typ + ")"
	}
	return "offsetof(struct " + r.typ + ", " + r.field + ")"
}
