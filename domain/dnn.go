package domain

import (
	"fmt"
	"strings"

	"github.com/free5gc/nas/nasType"
)

// DNN is a data network name: an APN (TS 23.003 9A), dot-separated labels of
// letters, digits and hyphens (TS 23.003 9.1.1).
type DNN string

// WildcardDNN is the subscription entry that stands for every DNN
// (TS 29.571 5.4.2 WildcardDnn, the key of dnnConfigurations in TS 29.503
// SessionManagementSubscriptionData). It is not a DNN a UE can request.
const WildcardDNN DNN = "*"

// maxDNNOctets and maxLabelOctets bound an APN: 100 octets encoded (TS 23.003
// 9.1) and 63 per label (RFC 1035 2.3.4, which TS 23.003 9.1 follows).
const (
	maxDNNOctets   = 100
	maxLabelOctets = 63
)

// ParseDNN checks s and returns it as a DNN, spelled as given.
func ParseDNN(s string) (DNN, error) {
	d := DNN(s)
	return d, d.Validate()
}

// Validate says why d is not a DNN, or nil.
func (d DNN) Validate() error {
	if n := len(d) + 1; n > maxDNNOctets { // labels encode with one length octet each
		return fmt.Errorf("DNN %q: %d octets encoded, at most %d (TS 23.003 9.1)", string(d), n, maxDNNOctets)
	}
	for _, label := range strings.Split(string(d), ".") {
		if label == "" || len(label) > maxLabelOctets || strings.Trim(label, labelChars) != "" {
			return fmt.Errorf("%q is not a DNN (TS 23.003 9.1.1: labels of 1 to 63 letters, digits and hyphens)", string(d))
		}
	}
	return nil
}

const labelChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"

// Equal compares two DNNs ignoring case: APN labels are DNS labels, and DNS
// compares them case-insensitively (TS 23.003 9.1, RFC 1035 2.3.3), so
// "Internet" and "internet" are one data network.
func (d DNN) Equal(e DNN) bool { return strings.EqualFold(string(d), string(e)) }

// Match says whether the subscription entry d (a DNN or WildcardDNN)
// covers the requested DNN: the wildcard covers every DNN (TS 29.571
// WildcardDnn), any other entry only a DNN Equal to it.
func (d DNN) Match(requested DNN) bool { return d == WildcardDNN || d.Equal(requested) }

// String gives the DNN as written.
func (d DNN) String() string { return string(d) }

// ToNAS gives the value octets of a DNN IE (TS 24.501 9.11.2.1B): the APN
// encoded as length-prefixed labels (TS 23.003 9.1).
func (d DNN) ToNAS() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(d)+1)
	for _, label := range strings.Split(string(d), ".") {
		out = append(out, byte(len(label)))
		out = append(out, label...)
	}
	return out, nil
}

// DNNFromNAS reads the value octets of a DNN IE and checks the DNN.
func DNNFromNAS(b []byte) (DNN, error) {
	var labels []string
	for rest := b; len(rest) > 0; {
		n := int(rest[0])
		if n == 0 || 1+n > len(rest) {
			return "", fmt.Errorf("DNN %x: label length %d does not fit %d octets", b, n, len(rest)-1)
		}
		label := string(rest[1 : 1+n])
		if strings.Trim(label, labelChars) != "" {
			// A '.' inside a label would read back as two labels: the octets
			// would name another DNN than the one checked (TS 23.003 9.1.1).
			return "", fmt.Errorf("DNN %x: label %q is not letters, digits and hyphens (TS 23.003 9.1.1)", b, label)
		}
		labels = append(labels, label)
		rest = rest[1+n:]
	}
	if len(labels) == 0 {
		return "", fmt.Errorf("DNN of 0 octets")
	}
	return ParseDNN(strings.Join(labels, "."))
}

// ToNASType gives the free5GC nasType form of the DNN IE with iei.
func (d DNN) ToNASType(iei uint8) (nasType.DNN, error) {
	v, err := d.ToNAS()
	if err != nil {
		return nasType.DNN{}, err
	}
	return nasType.DNN{Iei: iei, Len: uint8(len(v)), Buffer: v}, nil
}

// DNNFromNASType reads the free5GC nasType form of a DNN IE.
func DNNFromNASType(x nasType.DNN) (DNN, error) {
	if int(x.Len) != len(x.Buffer) {
		return "", fmt.Errorf("DNN IE: length %d but %d octets", x.Len, len(x.Buffer))
	}
	return DNNFromNAS(x.Buffer)
}
