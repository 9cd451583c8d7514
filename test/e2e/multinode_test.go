package e2e

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/l25gc/l25gc/config"
)

// A core spanning two nodes, each with its own onvm manager (shared memory)
// and its own loopback address: node A runs the NRF and the subscriber data
// (UDR, UDM), node B the AUSF, PCF and AMF and finds the NRF by
// sbi.nrf_uri. UEs register through node B's AMF; SBI requests between NFs
// of one node go over X-IO, those between the nodes over TCP, as the NRF
// profiles' locality says.
func TestCoreSpansTwoNodes(t *testing.T) {
	dir := t.TempDir()
	for _, node := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, node), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgA, pathA := coreConfig(t, filepath.Join(dir, "a"), func(c *config.Config) {
		c.SBI.Transport = "xio"
		c.NFs = []string{"nrf", "udr", "udm"}
	})
	cfgB, pathB := coreConfig(t, filepath.Join(dir, "b"), func(c *config.Config) {
		c.SBI.Transport = "xio"
		c.NFs = []string{"ausf", "pcf", "amf"}
		// The same ports on another address of this host (127.0.0.0/8 is
		// all loopback): B's NFs listen where A's do not.
		c.SBI.BindIP = "127.0.0.2"
		_, n2Port, _ := net.SplitHostPort(c.AMF.NGAP.Addr)
		c.AMF.NGAP.Addr = net.JoinHostPort("127.0.0.2", n2Port)
		c.NRF.SBIPort = cfgA.NRF.SBIPort
		c.SBI.NRFURI = cfgA.NRFURI()
	})
	startCore(t, cfgA, pathA)
	startCore(t, cfgB, pathB)

	g := connectGNB(t, cfgB)
	ctx := procCtx(t)
	for i := range 3 {
		ue := newUE(t, cfgB, g, i, "null")
		if _, err := ue.Register(ctx); err != nil {
			t.Fatalf("UE %d through node B: %v", i, err)
		}
	}

	amf, ausf := sbiPaths(t, cfgB, cfgB.AMF.MetricsPort), sbiPaths(t, cfgB, cfgB.AUSF.MetricsPort)
	udm := sbiPaths(t, cfgA, cfgA.UDM.MetricsPort)
	t.Logf("SBI requests by path: AMF %v, AUSF %v (node B); UDM %v (node A)", amf, ausf, udm)
	if amf["xio"] == 0 || amf["tcp"] == 0 {
		t.Errorf("AMF on node B: SBI requests by path %v, want X-IO to the AUSF and PCF and TCP to the UDM", amf)
	}
	if ausf["tcp"] == 0 {
		t.Errorf("AUSF on node B: SBI requests by path %v, want TCP to the UDM on node A", ausf)
	}
	if udm["xio"] == 0 || udm["tcp"] != 0 {
		t.Errorf("UDM on node A: SBI requests by path %v, want its UDR over X-IO only", udm)
	}
}
