package tsharkcap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// DissectNGAP runs NGAP PDUs built in a test through tshark, each carried
// as SCTP DATA with PPID 60 (TS 38.412 7) so that tshark hands it to its
// NGAP dissector, and returns the verbose dissection of them all. The
// codec tests of protocol/ngapx and the simulator use it to prove a
// message is what Wireshark expects without a network.
func DissectNGAP(t testing.TB, pdus ...[]byte) string {
	t.Helper()
	var hex strings.Builder
	for _, b := range pdus {
		for i, x := range b {
			if i%16 == 0 {
				fmt.Fprintf(&hex, "\n%06x", i)
			}
			fmt.Fprintf(&hex, " %02x", x)
		}
		hex.WriteString("\n")
	}
	dir := t.TempDir()
	in, pcap := filepath.Join(dir, "ngap.txt"), filepath.Join(dir, "ngap.pcap")
	if err := os.WriteFile(in, []byte(hex.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("text2pcap", "-q", "-S", "38412,38412,60", in, pcap).CombinedOutput(); err != nil {
		t.Fatalf("text2pcap: %v %s", err, out)
	}
	out, err := exec.Command("tshark", "-r", pcap, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v %s", err, out)
	}
	return string(out)
}
