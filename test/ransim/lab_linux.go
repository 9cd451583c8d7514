package ransim

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// AddN3Address gives the host's end of the lab's N3 link (dev, e.g.
// l25gc-n3-gnb) one more gNB address in UPF-U's N3 subnet (prefix bits),
// so a second gNB has an N3 address of its own; UPF-U finds it by ARP. An
// address already there is fine. It needs root (CAP_NET_ADMIN).
func AddN3Address(dev string, addr netip.Addr, prefix int) error {
	out, err := exec.Command("ip", "addr", "add", fmt.Sprintf("%v/%d", addr, prefix), "dev", dev).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "File exists") {
		return fmt.Errorf("N3 address %v on %s: %v: %s", addr, dev, err, strings.TrimSpace(string(out)))
	}
	return nil
}
