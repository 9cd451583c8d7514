package e2e

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/sbi"
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
		c.SBI.TLS = "mutual"
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
		c.SBI.TLS = "mutual"
		c.SBI.SecretFile = cfgA.SecretPath()
		c.SBI.TLSDir = cfgA.CertDir()
	})
	if !cfgA.OAuth2On() || !cfgB.OAuth2On() {
		t.Fatal("OAuth2 is off by default")
	}
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

	requireTLSAndTokens(t, cfgA)
}

// requireTLSAndTokens checks what an attacker on the network meets at
// node A's UDM: no h2c, and over mutual TLS (with a certificate of the
// core) still no authentication vector without an access token.
func requireTLSAndTokens(t *testing.T, cfg *config.Config) {
	t.Helper()
	path := "/nudm-ueau/v1/suci-0-208-93-0-0-0-00000001/security-information/generate-auth-data"
	plain := &http.Client{Transport: sbi.NewTCP().RoundTripper(), Timeout: 5 * time.Second}
	if resp, err := plain.Post("http://"+cfg.AdvertisedAddr(cfg.UDM.SBIPort)+path, "application/json", strings.NewReader("{}")); err == nil {
		resp.Body.Close()
		t.Errorf("the UDM answered h2c with %d under sbi.tls: mutual", resp.StatusCode)
	}
	_, tlsc, err := sbi.TLSConfigs(sbi.TLSMutual, cfg.CertDir(), node.ToolCert)
	if err != nil {
		t.Fatal(err)
	}
	secure := &http.Client{Transport: sbi.NewTCPTLS(nil, tlsc).RoundTripper(), Timeout: 5 * time.Second}
	resp, err := secure.Post("https://"+cfg.AdvertisedAddr(cfg.UDM.SBIPort)+path, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("the UDM over mutual TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("generate-auth-data without a token: %d %q, want 401 with a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// A single-node core over TCP with TLS (not mutual) and OAuth2: every SBI
// request is HTTP/2 over TLS with a token, and UEs register as over h2c;
// the subscriber tool reaches the UDR over TLS with the core's CA.
func TestUEsRegisterOverTLS(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) { c.SBI.TLS = "on" }))
	startCore(t, cfg, path)
	g := connectGNB(t, cfg)
	ctx := procCtx(t)
	for i := range 3 {
		if _, err := newUE(t, cfg, g, i, "null").Register(ctx); err != nil {
			t.Fatalf("UE %d: %v", i, err)
		}
	}
	out, err := exec.Command(binary, "subscriber", "show", cfg.Subscribers[0].IMSI, "--config", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), cfg.Subscribers[0].IMSI) {
		t.Errorf("l25gc subscriber show over TLS: %v\n%s", err, out)
	}
	// The benchmark provisions its subscribers at a running core over TLS too.
	out, err = exec.Command(binary, "bench", "registration", "--amf", cfg.AMF.NGAP.Addr, "--ues", "4",
		"--concurrency", "2", "--warmup", "0", "--config", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "provisioned") {
		t.Errorf("l25gc bench registration --amf over TLS: %v\n%s", err, out)
	}
}
