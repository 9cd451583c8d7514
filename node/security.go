package node

import (
	"fmt"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/sbi"
)

// ToolCert names the certificate tools (`l25gc subscriber`) show under
// mutual TLS.
const ToolCert = "cli"

// PrepareSecurity gives the node what its NFs' SBI security needs before
// any starts: the core secret their NRF credentials derive from
// (sbi.oauth2: on; made on the NRF's node, required on the others), and with sbi.tls a CA and a certificate per NF here
// (and for tools) whose SANs are the addresses the NF is reached at. What
// exists is kept: a second node of the core, sharing the secret file and
// the certificate directory, or an operator's CA, is used as it is.
func PrepareSecurity(cfg *config.Config, cat config.Catalog) error {
	if cfg.OAuth2On() {
		// The NRF's node makes the secret; another node must have the
		// core's, copied: one of its own would only earn its NFs 401s.
		load := sbi.LoadSecret
		if cfg.Runs("nrf") {
			load = sbi.LoadOrCreateSecret
		}
		if _, err := load(cfg.SecretPath()); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	if !cfg.TLSOn() {
		return nil
	}
	return IssueCerts(cfg, cat)
}

// IssueCerts makes the lab CA (unless one is there) and the certificates
// of this node's NFs and tools that are missing (`l25gc certs init`).
func IssueCerts(cfg *config.Config, cat config.Catalog) error {
	dir := cfg.CertDir()
	if err := sbi.EnsureCA(dir); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	hosts := sbi.CertHosts(cfg.AdvertisedIP(), cfg.SBI.BindIP)
	for _, spec := range runHere(cfg, cat) {
		var instances []string
		if ports := spec.PortsIn(cfg); ports != nil && ports.SBIPort != 0 {
			instances = append(instances, sbi.InstanceID(spec.Type, cfg.AdvertisedAddr(ports.SBIPort)))
		}
		if err := sbi.IssueCert(dir, spec.Name, hosts, instances...); err != nil {
			return fmt.Errorf("node: certificate of %s: %w", spec.Name, err)
		}
	}
	if err := sbi.IssueCert(dir, ToolCert, hosts); err != nil {
		return fmt.Errorf("node: certificate of tools: %w", err)
	}
	return nil
}

// SBITCP is the SBI over TCP of the NF (or tool) name: h2c, or with
// sbi.tls its certificate and the core's CA.
func SBITCP(cfg *config.Config, name string) (*sbi.TCP, error) {
	if !cfg.TLSOn() {
		return sbi.NewTCP(), nil
	}
	server, client, err := sbi.TLSConfigs(sbi.TLSMode(cfg.SBI.TLS), cfg.CertDir(), name)
	if err != nil {
		return nil, err
	}
	return sbi.NewTCPTLS(server, client), nil
}
