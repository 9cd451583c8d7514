package sbi_test

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
)

// certDir is a lab CA with certificates for an "udm" and an "ausf" on
// 127.0.0.1, as `l25gc certs init` makes them.
func certDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs")
	if err := sbi.EnsureCA(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"udm", "ausf"} {
		if err := sbi.IssueCert(dir, name, sbi.CertHosts("127.0.0.1")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func serveTLS(t *testing.T, mode sbi.TLSMode, dir string) string {
	t.Helper()
	server, _, err := sbi.TLSConfigs(mode, dir, "udm")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sbi.NewTCPTLS(server, nil).Serve("127.0.0.1:0", sbi.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Proto))
	}), nil, logging.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	return "https://" + srv.Addr()
}

func get(tr sbi.Transport, url string) (*http.Response, error) {
	c := &http.Client{Transport: tr.RoundTripper(), Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func client(t *testing.T, mode sbi.TLSMode, dir, name string) *sbi.TCP {
	t.Helper()
	_, c, err := sbi.TLSConfigs(mode, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return sbi.NewTCPTLS(nil, c)
}

// TS 33.501 13.1: SBI over TCP is HTTP/2 over TLS, the server proving
// itself with a certificate of the core's CA; a client that does not
// trust that CA gets no answer.
func TestSBIOverTLSIsHTTP2(t *testing.T) {
	dir := certDir(t)
	url := serveTLS(t, sbi.TLSOn, dir)
	resp, err := get(client(t, sbi.TLSOn, dir, "ausf"), url+"/nudm-ueau/v1/x")
	if err != nil || resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Fatalf("GET over TLS: %v %+v, want HTTP/2 over TLS", err, resp)
	}
	if _, err := get(sbi.NewTCP(), url+"/nudm-ueau/v1/x"); err == nil {
		t.Error("a client without the core's CA was answered")
	}
}

// TS 33.501 13.1.1: with mutual TLS a client without a certificate of
// the core's CA is refused in the handshake.
func TestMutualTLSRefusesClientsWithoutACertificate(t *testing.T) {
	dir := certDir(t)
	url := serveTLS(t, sbi.TLSMutual, dir)
	if _, err := get(client(t, sbi.TLSOn, dir, "ausf"), url+"/nudm-ueau/v1/x"); err == nil {
		t.Error("a client without a certificate was answered under mutual TLS")
	}
	if resp, err := get(client(t, sbi.TLSMutual, dir, "ausf"), url+"/nudm-ueau/v1/x"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the AUSF with its certificate: %v", err)
	}
}

// Certificates name the addresses the NF is reached at, are signed by
// the CA, and their keys are private; a second run keeps them.
func TestCertsInitIssuesOncePerNF(t *testing.T) {
	dir := certDir(t)
	data, _ := os.ReadFile(filepath.Join(dir, "udm.crt"))
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.IPAddresses) != 1 || cert.IPAddresses[0].String() != "127.0.0.1" || cert.Subject.CommonName != "udm" {
		t.Errorf("udm certificate: CN %q IPs %v", cert.Subject.CommonName, cert.IPAddresses)
	}
	for _, f := range []string{"ca.key", "udm.key"} {
		if st, _ := os.Stat(filepath.Join(dir, f)); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %o, want 600", f, st.Mode().Perm())
		}
	}
	if err := sbi.IssueCert(dir, "udm", sbi.CertHosts("127.0.0.9")); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "udm.crt"))
	if string(again) != string(data) {
		t.Error("a second certs init replaced an existing certificate")
	}
}
