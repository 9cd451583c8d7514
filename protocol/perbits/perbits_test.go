package perbits

import (
	"bytes"
	"testing"
)

// TestBitsPackMostSignificantFirst: fields of a few bits share octets,
// and alignment pads with zeros (X.691 10.1.3).
func TestBitsPackMostSignificantFirst(t *testing.T) {
	w := NewWriter(0)
	w.Bit(false)      // 0
	w.Bits(2, 2)      // 10
	w.Align()         // 00000
	w.Bits(0xABC, 12) // 1010 1011 1100
	w.Bits(1, 1)      // 1
	w.ShortBits([]byte{0xFF, 0xC0}, 10)
	want := []byte{0x40, 0xAB, 0xCF, 0xFE}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("got %x, want %x", w.Bytes(), want)
	}
	r := NewReader(want)
	if r.Bit() || r.Bits(2) != 2 {
		t.Fatal("header bits")
	}
	r.Align()
	if v := r.Bits(12); v != 0xABC || !r.Bit() || !bytes.Equal(r.ShortBits(10), []byte{0xFF, 0xC0}) || !r.Done() {
		t.Fatalf("read back %x, failed %v", v, r.Failed())
	}
}

// TestLengthDeterminants: one octet up to 127, two up to 16383
// (X.691 10.9.3.6-7), read back the same.
func TestLengthDeterminants(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []byte
	}{{0, []byte{0}}, {127, []byte{0x7f}}, {128, []byte{0x80, 0x80}}, {16383, []byte{0xbf, 0xff}}} {
		w := NewWriter(0)
		w.Bit(true)
		w.Length(c.n)
		if got := w.Bytes()[1:]; !bytes.Equal(got, c.want) {
			t.Errorf("length %d: %x, want %x", c.n, got, c.want)
		}
		r := NewReader(w.Bytes())
		r.Bit()
		if got := r.Length(); got != c.n || r.Failed() {
			t.Errorf("length %d read back as %d", c.n, got)
		}
	}
	if r := NewReader([]byte{0xc1}); r.Length() != 0 || !r.Failed() {
		t.Error("a fragmented length was taken")
	}
}

// TestOpenTypeLengths: the content of an open type moves by one octet when
// its length needs two, and over 16383 the writer says no.
func TestOpenTypeLengths(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, MaxLength, MaxLength + 1} {
		content := bytes.Repeat([]byte{0x5a}, n)
		w := NewWriter(0)
		w.Bits(3, 2)
		mark := w.OpenStart()
		w.Octets(content)
		ok := w.OpenEnd(mark)
		if ok != (n <= MaxLength) {
			t.Fatalf("open type of %d: ok %v", n, ok)
		}
		if !ok {
			continue
		}
		want := NewWriter(0)
		want.Bits(3, 2)
		want.Length(n)
		want.Octets(content)
		if !bytes.Equal(w.Bytes(), want.Bytes()) {
			t.Fatalf("open type of %d differs", n)
		}
		r := NewReader(w.Bytes())
		r.Bits(2)
		sub := r.Open()
		if got := sub.Octets(n); !bytes.Equal(got, content) || !r.Done() {
			t.Fatalf("open type of %d read back wrong", n)
		}
	}
}

// TestFixedBitsLeaveTheirTailToTheNextField: a 36-bit string ends half way
// through its fifth octet, where the next field continues (X.691 16.10).
func TestFixedBitsLeaveTheirTailToTheNextField(t *testing.T) {
	w := NewWriter(0)
	w.FixedBits([]byte{1, 2, 3, 4, 0x5F}, 36) // the low 4 bits are not part of it
	w.Bits(0xA, 4)
	if want := []byte{1, 2, 3, 4, 0x5A}; !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("got %x, want %x", w.Bytes(), want)
	}
	r := NewReader(w.Bytes())
	if b := r.FixedBits(36); len(b) != 5 || r.Bits(4) != 0xA || !r.Done() {
		t.Fatal("read back wrong")
	}
}

// TestConstrainedWidths: X.691 10.5.7: the fewest bits below 256, one
// aligned octet at 256, two up to 64K.
func TestConstrainedWidths(t *testing.T) {
	for _, c := range []struct {
		valueRange, v uint64
		want          []byte
	}{{2, 1, []byte{0x80}}, {3, 2, []byte{0x80}}, {10, 9, []byte{0x90}}, {255, 254, []byte{0xfe}},
		{256, 7, []byte{0x80, 0x07}}, {65536, 300, []byte{0x80, 0x01, 0x2c}}} {
		w := NewWriter(0)
		if c.valueRange >= 256 {
			w.Bit(true) // shows the alignment
		}
		w.Constrained(c.v, c.valueRange)
		if !bytes.Equal(w.Bytes(), c.want) {
			t.Errorf("range %d value %d: %x, want %x", c.valueRange, c.v, w.Bytes(), c.want)
		}
	}
}

// TestReaderFailsOnBadInput: reading past the end or over non-zero padding
// fails, and keeps failing.
func TestReaderFailsOnBadInput(t *testing.T) {
	r := NewReader([]byte{0xff})
	r.Bits(9)
	if !r.Failed() || r.Bits(1) != 0 {
		t.Fatal("read past the end")
	}
	r = NewReader([]byte{0x81, 0x00})
	r.Bit()
	r.Align()
	if !r.Failed() {
		t.Fatal("non-zero padding taken")
	}
	r = NewReader([]byte{0x05, 1, 2})
	if sub := r.Open(); !sub.Failed() || !r.Failed() {
		t.Fatal("open type longer than the input taken")
	}
}

// FuzzReader: no input makes the reader panic.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0x80, 0x81, 0x02, 0xc1, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		for !r.Failed() && r.Remaining() > 0 {
			r.Bits(3)
			sub := r.Open()
			sub.FixedBits(36)
			sub.ShortBits(10)
			r.Constrained(300)
			r.Octets(int(r.Bits(2)))
		}
	})
}
