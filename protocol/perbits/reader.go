package perbits

// Reader reads aligned-PER fields. Any read past the end or any non-zero
// padding (X.691 10.1.3) makes it fail; after that every read returns zero
// and Err reports the failure, so a caller checks once at the end.
type Reader struct {
	b      []byte
	pos    uint // bit position
	failed bool
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Failed says whether a read ran off the end or met non-zero padding.
func (r *Reader) Failed() bool { return r.failed }

// Fail marks the input as not what the caller expected.
func (r *Reader) Fail() { r.failed = true }

// Done says whether every octet was read (the last one possibly in part).
func (r *Reader) Done() bool { return !r.failed && (r.pos+7)/8 == uint(len(r.b)) }

// Bits reads n (0..64) bits, most significant first.
func (r *Reader) Bits(n uint) uint64 {
	if r.failed || r.pos+n > uint(len(r.b))*8 {
		r.failed = true
		return 0
	}
	var v uint64
	for n > 0 {
		used := r.pos & 7
		take := 8 - used
		if n < take {
			take = n
		}
		octet := r.b[r.pos>>3]
		v = v<<take | uint64(octet>>(8-used-take)&byte(1<<take-1))
		r.pos += take
		n -= take
	}
	return v
}

// Bit reads one bit.
func (r *Reader) Bit() bool { return r.Bits(1) == 1 }

// Align skips to the next octet boundary; the padding must be zero.
func (r *Reader) Align() {
	if rest := r.pos & 7; rest != 0 && r.Bits(8-rest) != 0 {
		r.failed = true
	}
}

// Octets reads n octets from the next octet boundary; the result shares
// the reader's buffer.
func (r *Reader) Octets(n int) []byte {
	r.Align()
	start := r.pos >> 3
	if r.failed || n < 0 || int(start)+n > len(r.b) {
		r.failed = true
		return nil
	}
	r.pos += uint(n) * 8
	return r.b[start : int(start)+n]
}

// FixedBits reads a BIT STRING of a fixed size > 16 bits (X.691 16.10):
// the octets holding it, sharing the buffer; the bits after it in the last
// octet belong to the next field and are read by it.
func (r *Reader) FixedBits(bits uint) []byte {
	b := r.Octets(int(bits+7) / 8)
	if !r.failed && bits&7 != 0 {
		r.pos -= 8 - bits&7
	}
	return b
}

// ShortBits reads a BIT STRING of a fixed size of at most 16 bits
// (X.691 16.9) into new left-aligned octets.
func (r *Reader) ShortBits(bits uint) []byte {
	out := make([]byte, (bits+7)/8)
	for i := 0; bits > 0; i++ {
		n := bits
		if n > 8 {
			n = 8
		}
		out[i] = byte(r.Bits(n) << (8 - n))
		bits -= n
	}
	return out
}

// Constrained reads a constrained whole number of the given range up to
// 65536 (X.691 10.5.7), the mirror of Writer.Constrained.
func (r *Reader) Constrained(valueRange uint64) uint64 {
	switch {
	case valueRange <= 255:
		return r.Bits(BitsFor(valueRange))
	case valueRange == 256:
		r.Align()
		return r.Bits(8)
	default:
		r.Align()
		return r.Bits(16)
	}
}

// Length reads an unconstrained length determinant (X.691 10.9.3.6-7); a
// fragmented one (> MaxLength) fails the reader.
func (r *Reader) Length() int {
	r.Align()
	first := r.Bits(8)
	switch {
	case first&0x80 == 0:
		return int(first)
	case first&0x40 == 0:
		return int(first&0x3f)<<8 | int(r.Bits(8))
	}
	r.failed = true
	return 0
}

// Open reads an open type (X.691 10.2) and returns a reader of its
// content alone.
func (r *Reader) Open() Reader {
	n := r.Length()
	return Reader{b: r.Octets(n), failed: r.failed}
}

// Remaining is the number of whole octets not read yet.
func (r *Reader) Remaining() int { return len(r.b) - int((r.pos+7)/8) }
