package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/internal/tsharkcap"
)

// capture records the N2 traffic on loopback with tshark while a test
// runs, so the test can prove that what went on the wire is 3GPP's.
type capture struct {
	*tsharkcap.Capture
}

// startCapture records N2 (SCTP over UDP, RFC 6951) at port, read back
// with SCTP decoded there and NEA0 payloads dissected.
func startCapture(t *testing.T, port int) *capture {
	t.Helper()
	c := tsharkcap.Start(t, port)
	c.Read = []string{"-d", fmt.Sprintf("udp.port==%d,sctp", port), "-o", "nas-5gs.null_decipher:TRUE"}
	return &capture{c}
}

// stop ends the capture and waits until the file is complete.
func (c *capture) stop(*testing.T) { c.Stop() }

// dissected is one NGAP-carrying packet as tshark reads it.
type dissected struct {
	frame      string
	procedures []string // NGAP procedure codes
	nasTypes   []string // 5GMM message types, hex
}

// dissect fails the test on any packet tshark flags malformed and
// returns the NGAP-carrying packets.
func (c *capture) dissect(t *testing.T) []dissected {
	t.Helper()
	c.RequireClean(t)
	out := c.Tshark(t, "-Y", "ngap", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
		"-e", "frame.number", "-e", "ngap.procedureCode", "-e", "nas_5gs.mm.message_type")
	var pkts []dissected
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		for len(f) < 3 {
			f = append(f, "")
		}
		pkts = append(pkts, dissected{frame: f[0], procedures: splitNonEmpty(f[1]), nasTypes: splitNonEmpty(f[2])})
	}
	return pkts
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// summary is tshark's one line per packet, for a failing test's log.
func (c *capture) summary() string { return c.Summary() }
