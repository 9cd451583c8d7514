package sbi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/free5gc/openapi/models"
)

// TLS for SBI over TCP (TS 33.501 13.1: HTTP/2 over TLS 1.2 or 1.3 with
// the profile of TS 33.210 6.2; TS 29.500 5.2.3). Certificates live in
// one directory: the CA's ca.crt (ca.key only where certificates are
// issued) and each NF's <name>.crt and <name>.key. X-IO carries the same
// requests in shared memory, where TLS would protect nothing the kernel
// does not already.

// TLSMode is sbi.tls: off, on (servers prove who they are) or mutual
// (clients too, TS 33.501 13.1.1).
type TLSMode string

const (
	TLSOff    TLSMode = "off"
	TLSOn     TLSMode = "on"
	TLSMutual TLSMode = "mutual"
)

// CA file names in a certificate directory.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// TLSConfigs returns the server and client TLS configuration of the NF
// (or tool) name whose certificates are in dir.
func TLSConfigs(mode TLSMode, dir, name string) (server, client *tls.Config, err error) {
	pool, err := loadCAPool(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, nil, err
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, nil, fmt.Errorf("sbi tls: %s's certificate (run `l25gc certs init`): %w", name, err)
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	client = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	if mode == TLSMutual {
		server.ClientAuth, server.ClientCAs = tls.RequireAndVerifyClientCert, pool
		client.Certificates = []tls.Certificate{cert}
	}
	return server, client, nil
}

func loadCAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sbi tls: CA (run `l25gc certs init` or put the operator's CA there): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("sbi tls: %s holds no PEM certificate", path)
	}
	return pool, nil
}

// NewTCPTLS is the kernel transport with TLS: it serves HTTP/2 (and
// HTTP/1.1 for tools) over TLS with server, and reaches https:// peers
// with client (http:// ones still over h2c).
func NewTCPTLS(server, client *tls.Config) *TCP {
	t := NewTCP()
	t.serverTLS = server
	t.rt.TLSClientConfig = client
	t.rt.Protocols.SetHTTP2(true)
	return t
}

// CertHosts are the SANs of an NF certificate: the addresses it is
// reached at, and this host's name.
func CertHosts(ips ...string) []string {
	hosts := []string{"localhost"}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	for _, ip := range ips {
		if p := net.ParseIP(ip); p != nil && !p.IsUnspecified() {
			hosts = append(hosts, ip)
		}
	}
	return hosts
}

// EnsureCA makes a lab CA (ECDSA P-256, ten years) in dir unless ca.crt
// exists there; an operator's CA is used by putting its certificate
// there (and its key, to issue with `l25gc certs init`).
func EnsureCA(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, CACertFile)); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sbi tls: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{Organization: []string{"L25GC+ lab"}, CommonName: "L25GC+ lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, CAKeyFile), key); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, CACertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// IssueCert signs a certificate for name (server and client use) with
// the CA in dir, valid for hosts and naming the NF instances (none for a
// tool), unless <name>.crt exists already.
func IssueCert(dir, name string, hosts []string, instances ...string) error {
	if _, err := os.Stat(filepath.Join(dir, name+".crt")); err == nil {
		return nil
	}
	caCert, caKey, err := loadCA(dir)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{Organization: []string{"L25GC+ lab"}, CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(2, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, id := range instances {
		// TS 33.310 6.1.3c: the NF instance id as a URI SAN, so the
		// certificate proves the instance, not only the NF type.
		tmpl.URIs = append(tmpl.URIs, &url.URL{Scheme: "urn", Opaque: "uuid:" + id})
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func loadCA(dir string) (*x509.Certificate, any, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("sbi tls: the CA's certificate and key in %s: %w", dir, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	if !cert.IsCA {
		return nil, nil, errors.New("sbi tls: " + CACertFile + " is not a CA certificate")
	}
	return cert, pair.PrivateKey, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

// UseHTTPS makes a profile's services say https: its NF serves over TLS.
func UseHTTPS(p *models.NrfNfManagementNfProfile) {
	for i := range p.NfServices {
		s := &p.NfServices[i]
		s.Scheme = models.UriScheme_HTTPS
		s.ApiPrefix = strings.Replace(s.ApiPrefix, "http://", "https://", 1)
	}
}
