/*
 * shm_layout.h — pins the layout of every struct that lives in shared
 * memory, so that two processes built at different times (the manager, an
 * NF, a UPF) can never disagree about it silently.
 *
 * Each shared header of this tree lists its structs once, with the size and
 * field offsets they must have:
 *
 *   #define NAME_LAYOUT(S, F)      \
 *           S(some_struct, 16)     \
 *           F(some_struct, a, 0)   \
 *           F(some_struct, b, 8)
 *   SHM_PIN_LAYOUT(NAME_LAYOUT)
 *
 * SHM_PIN_LAYOUT turns the list into _Static_asserts, so every C file and
 * cgo preamble that includes the header checks it. The same list feeds the
 * Go test (onvm/internal/shmlayout) that compares C's sizeof/offsetof with
 * Go's cgo view of each struct, field by field; it also fails when a struct
 * gains a field the list does not name.
 *
 * Changing a shared struct: change the list with it and bump
 * ONVM_SHM_VERSION (onvm_shm.h), so processes of the old layout refuse to
 * attach instead of misreading the memory.
 */
#ifndef SHM_LAYOUT_H
#define SHM_LAYOUT_H

#include <stddef.h>

#define SHM_LAYOUT_CHANGED \
	"a shared-memory layout changed: update its layout list and bump ONVM_SHM_VERSION"

#define SHM_ASSERT_SIZE(s, n) \
	_Static_assert(sizeof(struct s) == (n), "sizeof(struct " #s ") != " #n ": " SHM_LAYOUT_CHANGED);
#define SHM_ASSERT_OFFSET(s, f, n)                                                              \
	_Static_assert(offsetof(struct s, f) == (n),                                            \
		       "offsetof(struct " #s ", " #f ") != " #n ": " SHM_LAYOUT_CHANGED);

/* SHM_PIN_LAYOUT asserts every size and offset of a layout list. */
#define SHM_PIN_LAYOUT(list) list(SHM_ASSERT_SIZE, SHM_ASSERT_OFFSET)

/* One row of a layout as the compiler computes it: the whole struct (field
 * "") with its size, or one field with its offset. For the Go test. */
struct shm_layout_row {
	const char *type;
	const char *field;
	size_t value;
};

#define SHM_ROW_SIZE(s, n) {#s, "", sizeof(struct s)},
#define SHM_ROW_OFFSET(s, f, n) {#s, #f, offsetof(struct s, f)},

/* SHM_LAYOUT_ROWS expands a layout list into shm_layout_row initialisers. */
#define SHM_LAYOUT_ROWS(list) list(SHM_ROW_SIZE, SHM_ROW_OFFSET)

#endif /* SHM_LAYOUT_H */
