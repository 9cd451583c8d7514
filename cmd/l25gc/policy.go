package main

// `l25gc policy set IMSI`: change a running PDU session's policy — its
// Session-AMBR, new (GBR) QoS flows, new GBR/MBR of existing ones. By
// default through the PCF's admin API: the PCF keeps the change in the
// session's SM policy association and sends it to the SMF (TS 29.512
// 4.2.3.2 UpdateNotify); with --via smf straight to the SMF's admin API,
// which applies it as that notification would. Either way the SMF runs a
// network-requested PDU session modification (TS 23.502 4.3.3.2). For the policy of sessions yet to come, `l25gc
// subscriber add --session-ambr-ul/-dl --qos-flow` stores it at the UDR.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/free5gc/openapi/models"
	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf/pcf"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "change a running PDU session's policy (Session-AMBR, QoS flows) through the SMF's admin API",
	}
	addSMFAdminFlags(cmd)
	cmd.AddCommand(newPolicySetCmd())
	return cmd
}

// policyFlags are what `policy set` reads.
type policyFlags struct {
	via   string // "pcf" or "smf"
	psi   int
	ambr  string   // "UL/DL"
	flows []string // --qos-flow values
}

func newPolicySetCmd() *cobra.Command {
	var p policyFlags
	cmd := &cobra.Command{
		Use:   "set IMSI",
		Short: "set a session's AMBR, add QoS flows or change their GBR/MBR (network-requested PDU session modification)",
		Example: "  l25gc policy set 208930000000001 --session-ambr '10 Mbps/10 Mbps'\n" +
			"  l25gc policy set 208930000000001 --qos-flow 'filter=permit out 17 from 10.200.0.2 to assigned 5001;5qi=1;gbr=2 Mbps/2 Mbps;mbr=5 Mbps/5 Mbps'",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := p.decision()
			if err != nil {
				return err
			}
			a, path, err := p.client(cmd, args[0])
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			if err := a.do(ctx, http.MethodPost, path, d, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "policy applied to PDU session %d of %s; `l25gc session show %s` shows the result\n", p.psi, supiOf(args[0]), args[0])
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&p.psi, "pdu-session", 1, "PDU session ID (1-15)")
	f.StringVar(&p.via, "via", "pcf", "pcf: the PCF sends the change to the SMF (Npcf_SMPolicyControl_UpdateNotify, TS 29.512 4.2.3.2) and keeps it;\n"+
		"smf: the SMF's admin API applies it directly (a core whose sessions have no PCF association)")
	f.String("pcf", "", "PCF base URL for --via pcf (default http(s)://<sbi.advertise_ip>:<pcf.sbi_port> of --config)")
	f.StringVar(&p.ambr, "session-ambr", "", "new Session-AMBR as UPLINK/DOWNLINK, e.g. '10 Mbps/10 Mbps'")
	f.StringArrayVar(&p.flows, "qos-flow", nil, "a QoS flow to add, as 'filter=FILTER;5qi=N[;gbr=UL/DL][;mbr=UL/DL][;precedence=N]'\n"+
		"(the --qos-flow syntax of `subscriber add`; a flow whose filter the session already has gets the new 5QI, GBR and MBR)")
	return cmd
}

// client is the admin API the change goes to, and its path for the session.
func (p policyFlags) client(cmd *cobra.Command, imsi string) (*smfAdmin, string, error) {
	session := "/" + supiOf(imsi) + "/" + strconv.Itoa(p.psi)
	switch p.via {
	case "pcf":
		a, err := pcfAdminClient(cmd)
		return a, session + "/update", err
	case "smf":
		a, err := smfAdminClient(cmd)
		return a, session + "/policy", err
	}
	return nil, "", fmt.Errorf("--via %q: want pcf or smf", p.via)
}

// decision is the SM policy decision (TS 29.512 5.6.2.7) the flags ask for.
func (p policyFlags) decision() (*models.SmPolicyDecision, error) {
	if p.psi < 1 || p.psi > 15 {
		return nil, fmt.Errorf("--pdu-session %d: want 1-15", p.psi)
	}
	if p.ambr == "" && len(p.flows) == 0 {
		return nil, errors.New("nothing to set: give --session-ambr and/or --qos-flow")
	}
	d := &models.SmPolicyDecision{}
	if p.ambr != "" {
		a, err := rateSplit(p.ambr)
		if err == nil {
			err = checkRates(a.Uplink, a.Downlink)
		}
		if err != nil {
			return nil, fmt.Errorf("--session-ambr: %w", err)
		}
		d.SessRules = map[string]*models.SessionRule{"cli": {SessRuleId: "cli", AuthSessAmbr: &models.Ambr{Uplink: a.Uplink, Downlink: a.Downlink}}}
	}
	for _, v := range p.flows {
		if err := addCLIFlow(d, v); err != nil {
			return nil, fmt.Errorf("--qos-flow %q: %w", v, err)
		}
	}
	return d, nil
}

// addCLIFlow adds one PCC rule and its QoS data. The rule's ID comes from
// its flow description, so setting the same flow twice adds it once (the
// SMF keeps a PCC rule it has).
func addCLIFlow(d *models.SmPolicyDecision, v string) error {
	f, err := parseQosFlow(v)
	if err != nil {
		return err
	}
	desc, err := pcf.FlowDescription(f.Filter)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(desc))
	id := "cli-" + hex.EncodeToString(sum[:6])
	q := &models.QosData{QosId: id, Var5qi: int32(f.FiveQI)}
	if f.GBR != nil {
		q.GbrUl, q.GbrDl = f.GBR.Uplink, f.GBR.Downlink
	}
	if f.MBR != nil {
		q.MaxbrUl, q.MaxbrDl = f.MBR.Uplink, f.MBR.Downlink
	}
	if domain.IsGBR5QI(f.FiveQI) && (q.GbrUl == "" || q.GbrDl == "") {
		return fmt.Errorf("GBR 5QI %d needs gbr=UL/DL", f.FiveQI)
	}
	if d.PccRules == nil {
		d.PccRules, d.QosDecs = map[string]*models.PccRule{}, map[string]*models.QosData{}
	}
	prec := f.Precedence
	if prec == 0 {
		prec = 10 + len(d.PccRules)
	}
	d.QosDecs[id] = q
	d.PccRules[id] = &models.PccRule{PccRuleId: id, Precedence: int32(prec), RefQosData: []string{id},
		FlowInfos: []models.FlowInformation{{FlowDescription: desc, FlowDirection: models.FlowDirection_BIDIRECTIONAL}}}
	return nil
}

func checkRates(rates ...string) error {
	for _, r := range rates {
		if _, err := domain.ParseBitRate(r); err != nil {
			return err
		}
	}
	return nil
}
