package main

// A client of the SMF's admin API (nf/smf/handler_admin.go) for `l25gc
// session` and `l25gc policy`: the same address and admin token rules as
// `l25gc subscriber` has for the UDR.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/free5gc/openapi/models"
	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/node"
)

const smfAdminPath = "/smf-admin/v1/pdu-sessions"

// smfAdmin is a client of an admin API: the SMF's (prefix smfAdminPath)
// or the PCF's (pcfAdminPath, `policy set --via pcf`).
type smfAdmin struct {
	base, prefix, token string
	http                *http.Client
}

func addSMFAdminFlags(cmd *cobra.Command) {
	cmd.PersistentFlags().String("smf", "", "SMF base URL (default http(s)://<sbi.advertise_ip>:<smf.sbi_port> of --config)")
	cmd.PersistentFlags().String("token-file", "", "the admin token file (default udr.admin_token_file of --config, under its data_dir)")
}

func smfAdminClient(cmd *cobra.Command) (*smfAdmin, error) {
	return adminClient(cmd, "smf", smfAdminPath, func(c *config.Config) int { return c.SMF.SBIPort })
}

// pcfAdminPath is the PCF's admin API (nf/pcf/sm_policy_notify.go).
const pcfAdminPath = "/pcf-admin/v1/sm-policies"

func pcfAdminClient(cmd *cobra.Command) (*smfAdmin, error) {
	return adminClient(cmd, "pcf", pcfAdminPath, func(c *config.Config) int { return c.PCF.SBIPort })
}

// adminClient reaches the admin API under prefix of the NF whose base URL
// flag names (default from --config, port from port).
func adminClient(cmd *cobra.Command, flag, prefix string, port func(*config.Config) int) (*smfAdmin, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	base, _ := cmd.Flags().GetString(flag)
	if base == "" {
		base = cfg.SBIScheme() + "://" + cfg.AdvertisedAddr(port(cfg))
	}
	tokenFile, _ := cmd.Flags().GetString("token-file")
	if tokenFile == "" {
		tokenFile = cfg.AdminTokenPath()
	}
	token, err := prov.ReadToken(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("%w (`l25gc up` makes it; for a remote core copy its node's file and pass --token-file)", err)
	}
	tcp, err := node.SBITCP(cfg, node.ToolCert)
	if err != nil {
		return nil, err
	}
	return &smfAdmin{base: strings.TrimSuffix(base, "/"), prefix: prefix, token: token, http: &http.Client{Transport: tcp.RoundTripper()}}, nil
}

func (a *smfAdmin) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+a.prefix+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	rsp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("admin API %s: %w", a.base+a.prefix, err)
	}
	defer rsp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(rsp.Body, 16<<20))
	if rsp.StatusCode/100 != 2 {
		return fmt.Errorf("%s admin API %s %s: %s", a.nf(), method, path, problemText(rsp.Status, data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (a *smfAdmin) nf() string {
	if a.prefix == pcfAdminPath {
		return "PCF"
	}
	return "SMF"
}

// problemText is an error answer for a person: a ProblemDetails (TS
// 29.500 5.2.7) as "status cause: detail" (e.g. the UPF's PFCP cause when
// it refused a policy), any other body as it came.
func problemText(status string, body []byte) string {
	var pd models.ProblemDetails
	if json.Unmarshal(body, &pd) != nil || (pd.Cause == "" && pd.Detail == "") {
		return strings.TrimSpace(status + " " + string(bytes.TrimSpace(body)))
	}
	s := status
	if pd.Cause != "" {
		s += " " + pd.Cause
	}
	if pd.Detail != "" {
		s += ": " + pd.Detail
	}
	return s
}

// sessionsOf lists the PDU sessions of one subscriber (IMSI with or
// without the "imsi-" prefix).
func (a *smfAdmin) sessionsOf(ctx context.Context, imsi string) ([]smf.SessionView, error) {
	var all []smf.SessionView
	if err := a.do(ctx, http.MethodGet, "", nil, &all); err != nil {
		return nil, err
	}
	supi := supiOf(imsi)
	var out []smf.SessionView
	for _, s := range all {
		if s.SUPI == supi {
			out = append(out, s)
		}
	}
	return out, nil
}

func supiOf(imsi string) string {
	if strings.HasPrefix(imsi, "imsi-") {
		return imsi
	}
	return "imsi-" + imsi
}
