package perbits

// Writer appends aligned-PER fields to a buffer. The zero value is ready to use.
type Writer struct {
	buf  []byte
	used uint8 // bits used in the last octet of buf; 0 = the last octet is full
}

// NewWriter starts a writer with room for about size octets.
func NewWriter(size int) *Writer { return &Writer{buf: make([]byte, 0, size)} }

// Bytes returns what was written; the last octet is zero-padded.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of octets started so far.
func (w *Writer) Len() int { return len(w.buf) }

// Bits writes the n (0..64) low bits of v, most significant first.
func (w *Writer) Bits(v uint64, n uint) {
	for n > 0 {
		if w.used == 0 {
			w.buf = append(w.buf, 0)
		}
		free := uint(8 - w.used)
		take := free
		if n < take {
			take = n
		}
		chunk := byte(v>>(n-take)) & byte(1<<take-1)
		w.buf[len(w.buf)-1] |= chunk << (free - take)
		w.used = uint8((uint(w.used) + take) & 7)
		n -= take
	}
}

// Bit writes one bit: an extension marker, an OPTIONAL presence bit.
func (w *Writer) Bit(b bool) {
	if b {
		w.Bits(1, 1)
	} else {
		w.Bits(0, 1)
	}
}

// Align pads with zero bits to the next octet boundary (X.691 10.1.3).
func (w *Writer) Align() { w.used = 0 }

// Octets writes b from the next octet boundary.
func (w *Writer) Octets(b []byte) {
	w.used = 0
	w.buf = append(w.buf, b...)
}

// FixedBits writes a BIT STRING of a fixed size of bits > 16 bits
// (X.691 16.10: octet-aligned): b holds them left-aligned; the bits after
// them in the last octet are written as zero and later fields fill them.
func (w *Writer) FixedBits(b []byte, bits uint) {
	w.Octets(b)
	if rest := bits & 7; rest != 0 {
		w.buf[len(w.buf)-1] &= 0xff << (8 - rest)
		w.used = uint8(rest)
	}
}

// ShortBits writes a BIT STRING of a fixed size of at most 16 bits
// (X.691 16.9: not aligned); b holds them left-aligned.
func (w *Writer) ShortBits(b []byte, bits uint) {
	for i := 0; bits > 0; i++ {
		n := bits
		if n > 8 {
			n = 8
		}
		w.Bits(uint64(b[i]>>(8-n)), n)
		bits -= n
	}
}

// Constrained writes v of a constrained whole number of the given range
// (ub-lb+1) up to 65536 (X.691 10.5.7): a bit-field of the fewest bits
// below 256, else one or two aligned octets.
func (w *Writer) Constrained(v uint64, valueRange uint64) {
	switch {
	case valueRange <= 255:
		w.Bits(v, BitsFor(valueRange))
	case valueRange == 256:
		w.Align()
		w.Bits(v, 8)
	default:
		w.Align()
		w.Bits(v, 16)
	}
}

// BitsFor is the width of a constrained value of a range below 256:
// the fewest bits (at least 1) that can count the range.
func BitsFor(valueRange uint64) uint {
	n := uint(1)
	for uint64(1)<<n < valueRange {
		n++
	}
	return n
}

// MaxLength is the largest length this package writes without
// fragmentation (X.691 10.9.3.8).
const MaxLength = 16383

// Length writes an unconstrained length determinant n <= MaxLength
// (X.691 10.9.3.6-7): aligned, one octet up to 127, else two.
func (w *Writer) Length(n int) {
	w.Align()
	if n <= 127 {
		w.buf = append(w.buf, byte(n))
		return
	}
	w.buf = append(w.buf, 0x80|byte(n>>8), byte(n))
}

// OpenStart begins an open type (X.691 10.2): it reserves a one-octet
// length and returns the mark OpenEnd needs.
func (w *Writer) OpenStart() int {
	w.Align()
	w.buf = append(w.buf, 0)
	return len(w.buf)
}

// OpenEnd closes the open type begun at mark: it writes its length,
// moving the content by one octet when the length needs two. It reports
// false when the content is longer than MaxLength.
func (w *Writer) OpenEnd(mark int) bool {
	w.Align()
	n := len(w.buf) - mark
	switch {
	case n <= 127:
		w.buf[mark-1] = byte(n)
	case n <= MaxLength:
		w.buf = append(w.buf, 0)
		copy(w.buf[mark+1:], w.buf[mark:mark+n])
		w.buf[mark-1], w.buf[mark] = 0x80|byte(n>>8), byte(n)
	default:
		return false
	}
	return true
}
