package domain

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseDNN(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"internet", true},
		{"ims.mnc093.mcc208.gprs", true},
		{"Internet-2", true},
		{long, true},
		{long + "a", false}, // a label of 64
		{strings.Repeat("abcdefghi.", 9) + "abcdefghi", true},   // 99 characters, 100 octets encoded
		{strings.Repeat("abcdefghi.", 9) + "abcdefghij", false}, // 100 characters, 101 octets
		{"", false}, {"my dnn", false}, {"ims..test", false}, {".internet", false}, {"*", false}, {"inter_net", false},
	} {
		_, err := ParseDNN(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseDNN(%q) error %v, want ok=%v", c.in, err, c.ok)
		}
	}
}

func TestDNNEqualAndMatch(t *testing.T) {
	if !DNN("Internet").Equal("internet") || DNN("internet").Equal("internet2") {
		t.Error("Equal is not a case-insensitive comparison")
	}
	for _, c := range []struct {
		entry, req DNN
		want       bool
	}{
		{"internet", "INTERNET", true},
		{"internet", "ims", false},
		{WildcardDNN, "ims", true},
		{"ims", WildcardDNN, false}, // the wildcard is an entry, never a request
	} {
		if got := c.entry.Match(c.req); got != c.want {
			t.Errorf("%q Match %q = %v, want %v", c.entry, c.req, got, c.want)
		}
	}
}

func TestDNNNAS(t *testing.T) {
	d := DNN("ims.mnc093")
	b, err := d.ToNAS()
	if err != nil || !bytes.Equal(b, []byte("\x03ims\x06mnc093")) {
		t.Fatalf("ToNAS = %q, %v", b, err)
	}
	if back, err := DNNFromNAS(b); err != nil || back != d {
		t.Errorf("NAS round trip = %q, %v", back, err)
	}
	nt, err := d.ToNASType(0x25)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DNNFromNASType(nt); err != nil || back != d {
		t.Errorf("nasType round trip = %q, %v", back, err)
	}
	for name, b := range map[string][]byte{"empty": nil, "zero label": {0}, "overrun": {5, 'a'}, "space": []byte("\x02a ")} {
		if _, err := DNNFromNAS(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
