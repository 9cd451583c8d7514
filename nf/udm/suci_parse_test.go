package udm

import (
	"regexp"
	"testing"
)

// suciPattern is the SUCI syntax parseSUCI writes out by hand (TS 29.503
// 6.1.6.2.2, TS 23.003 28.7.3): the reference it must agree with.
var suciPattern = regexp.MustCompile(`^suci-0-([0-9]{3})-([0-9]{2,3})-([0-9]{1,4})-([0-9]{1,2})-([0-9]{1,3})-([0-9a-fA-F]+)$`)

// sameAsPattern fails t when parseSUCI and suciPattern disagree on id.
func sameAsPattern(t *testing.T, id string) {
	t.Helper()
	got, ok := parseSUCI(id)
	m := suciPattern.FindStringSubmatch(id)
	if ok != (m != nil) {
		t.Fatalf("%q: parseSUCI says %v, the SUCI syntax says %v", id, ok, m != nil)
	}
	if ok && (got != suciParts{mcc: m[1], mnc: m[2], routing: m[3], scheme: m[4], keyID: m[5], output: m[6]}) {
		t.Fatalf("%q: parseSUCI %+v, the SUCI syntax %q", id, got, m[1:])
	}
}

func TestParseSUCIFollowsTheSUCISyntax(t *testing.T) {
	for _, id := range []string{
		"suci-0-208-93-0000-0-0-0000000001",
		"suci-0-208-930-1-1-255-0a1B2c3D",
		"suci-0-208-93-0000-2-1-ffEE",
		"suci-0-208-93-00000-0-0-0000000001", // routing indicator too long
		"suci-0-208-9-0000-0-0-0000000001",   // MNC too short
		"suci-0-208-93-0000-123-0-01",        // scheme id too long
		"suci-0-208-93-0000-0-1234-01",       // key id too long
		"suci-0-208-93-0000-0-0-",            // no output
		"suci-0-208-93-0000-0-0-01-02",       // a field too many
		"suci-0-208-93-0000-0-0-0g",          // output not hex
		"suci-1-208-93-0000-0-0-01",          // NAI-based, not supported
		"suci-0-2O8-93-0000-0-0-01",          // a letter O for a zero
		"suci-0-208-93-0000-0-0-01\n",
		"suci-0-٢08-93-0000-0-0-01", // a non-ASCII digit
		"imsi-208930000000001",
		"",
	} {
		sameAsPattern(t, id)
	}
}

func FuzzParseSUCI(f *testing.F) {
	f.Add("suci-0-208-93-0000-0-0-0000000001")
	f.Add("suci-0-208-930-1-1-255-0a1B2c3D")
	f.Add("suci-0-208-93--0-0-01")
	f.Fuzz(sameAsPattern)
}
