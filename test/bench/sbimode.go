package bench

import (
	"fmt"
	"strings"

	"github.com/l25gc/l25gc/config"
)

// applySBIMode sets cfg's SBI from a benchmark mode: a transport (tcp,
// xio, xio-socket) with options after "+": tls or mtls (sbi.tls on or
// mutual) and nooauth (sbi.oauth2 off), so one run compares, e.g.,
// "tcp+nooauth,tcp+tls" (issue 10: OAuth2 + TLS on vs off). It returns
// the transport.
func applySBIMode(cfg *config.Config, mode string) (string, error) {
	parts := strings.Split(mode, "+")
	for _, opt := range parts[1:] {
		switch opt {
		case "tls":
			cfg.SBI.TLS = "on"
		case "mtls":
			cfg.SBI.TLS = "mutual"
		case "nooauth":
			cfg.SBI.OAuth2 = "off"
		default:
			return "", fmt.Errorf("bench: SBI mode %q: unknown option %q (want tls, mtls or nooauth)", mode, opt)
		}
	}
	cfg.SBI.Transport = parts[0]
	return parts[0], nil
}
