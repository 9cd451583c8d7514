package node

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/sbi"
)

// The NRF's node makes the core secret (0600); a node without the NRF
// refuses to start without the core's, naming the file, rather than make
// one the NRF would not know. With sbi.tls the node gets a CA and its
// NFs' certificates.
func TestPrepareSecurityMakesOrRequiresTheCoreSecret(t *testing.T) {
	a := config.Default()
	a.DataDir = t.TempDir()
	a.SBI.TLS = "on"
	if err := PrepareSecurity(a, config.Builtin); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(a.SecretPath())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret on the NRF's node: %v %v, want a 0600 file", err, st)
	}
	for _, f := range []string{"ca.crt", "nrf.crt", "amf.key", ToolCert + ".crt"} {
		if _, err := os.Stat(filepath.Join(a.CertDir(), f)); err != nil {
			t.Errorf("certificate directory: %v", err)
		}
	}

	b := config.Default()
	b.DataDir = t.TempDir()
	b.NFs = []string{"ausf"}
	b.SBI.NRFURI = "http://127.0.0.1:29510"
	err = PrepareSecurity(b, config.Builtin)
	if err == nil || !strings.Contains(err.Error(), b.SecretPath()) {
		t.Fatalf("node without the NRF and without the core secret: %v, want an error naming %s", err, b.SecretPath())
	}
	b.SBI.SecretFile = a.SecretPath()
	if err := PrepareSecurity(b, config.Builtin); err != nil {
		t.Errorf("node without the NRF given the core secret: %v", err)
	}
}

// Each NF's certificate names its instance id (TS 33.310 6.1.3c), the one
// the NF registers with, so the NRF can hold a certificate to it.
func TestIssueCertsNameEachNFInstance(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.SBI.TLS = "mutual"
	if err := IssueCerts(cfg, config.Builtin); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cfg.CertDir(), "udm.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := "urn:uuid:" + sbi.InstanceID(models.NrfNfManagementNfType_UDM, cfg.AdvertisedAddr(cfg.UDM.SBIPort))
	if len(cert.URIs) != 1 || cert.URIs[0].String() != want {
		t.Fatalf("udm.crt URIs %v, want [%s]", cert.URIs, want)
	}
}
