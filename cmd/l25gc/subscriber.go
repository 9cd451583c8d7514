package main

// `l25gc subscriber add|list|show|delete`: provisioning through the UDR's
// provisioning API (package prov), so it works against a running core, local
// or remote, and whatever store the UDR uses.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/node"
)

// subscriberTimeout bounds one provisioning call (a bulk range of 100,000
// into MongoDB takes seconds, not minutes).
const subscriberTimeout = 2 * time.Minute

func newSubscriberCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "subscriber",
		Short: "provision subscribers (add, list, show, delete) through the UDR",
		Long: "Provision subscribers through the UDR's provisioning API (" + prov.BasePath + ").\n" +
			"The UDR address comes from --udr, else from the node config (udr.sbi_port).\n" +
			"Every request carries the node's admin token, read from --token-file, else from the\n" +
			"file `l25gc up` made (udr.admin_token_file, default <data_dir>/admin.token).\n" +
			"K, OPc and OP are shown as " + redacted + " unless --show-keys.",
	}
	cmd.PersistentFlags().String("udr", "", "UDR base URL (default http(s)://<sbi.advertise_ip>:<udr.sbi_port> of --config)")
	cmd.PersistentFlags().String("token-file", "", "the admin token file (default udr.admin_token_file of --config, under its data_dir)")
	cmd.PersistentFlags().Bool("show-keys", false, "print K, OPc and OP instead of "+redacted)
	cmd.AddCommand(newSubscriberAddCmd(), newSubscriberListCmd(), newSubscriberShowCmd(), newSubscriberDeleteCmd())
	return cmd
}

// provClient reaches the UDR named by --udr or the config, with the admin
// token of --token-file or the config's data dir.
func provClient(cmd *cobra.Command) (*prov.Client, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	base, _ := cmd.Flags().GetString("udr")
	if base == "" {
		base = cfg.SBIScheme() + "://" + cfg.AdvertisedAddr(cfg.UDR.SBIPort)
	}
	tokenFile, _ := cmd.Flags().GetString("token-file")
	if tokenFile == "" {
		tokenFile = cfg.AdminTokenPath()
	}
	token, err := prov.ReadToken(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("%w (`l25gc up` makes it; for a remote UDR copy its node's file and pass --token-file)", err)
	}
	// With sbi.tls the UDR serves TLS only; tools trust the core's CA and,
	// under mutual TLS, show their own certificate.
	tcp, err := node.SBITCP(cfg, node.ToolCert)
	if err != nil {
		return nil, err
	}
	return prov.NewClient(base, tcp.RoundTripper(), token), nil
}

// redacted stands for a key the user did not ask to see.
const redacted = "(hidden)"

// keyPrinter prints subscribers with their keys hidden unless --show-keys:
// a terminal, a scrollback or a pasted bug report must not carry every
// subscriber's K.
type keyPrinter struct{ show bool }

func printerOf(cmd *cobra.Command) keyPrinter {
	show, _ := cmd.Flags().GetBool("show-keys")
	return keyPrinter{show: show}
}

func (p keyPrinter) view(s prov.Subscriber) prov.Subscriber {
	if p.show {
		return s
	}
	for _, k := range []*string{&s.K, &s.OPc, &s.OP} {
		if *k != "" {
			*k = redacted
		}
	}
	return s
}

func callContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cmd.Context(), subscriberTimeout)
}

func newSubscriberAddCmd() *cobra.Command {
	var (
		s       prov.Subscriber
		count   int
		snssais []string
		replace bool
		batch   int
		session sessionFlags
		flows   []string
	)
	cmd := &cobra.Command{
		Use:   "add --imsi IMSI --k K (--opc OPC | --op OP) [--count N]",
		Short: "add one subscriber, or a range of --count consecutive IMSIs sharing keys",
		Example: "  l25gc subscriber add --imsi 208930000000001 --k 8baf473f2f8fd09487cccbd7097c6862 --opc 8e27b6af0e692e750f32667a3b14605d\n" +
			"  l25gc subscriber add --imsi 208930000000001 --count 10000 --k ... --op ... --snssai 1/010203 --dnn internet\n" +
			"  l25gc subscriber add --imsi 208930000000002 --k ... --opc ... --dnn internet --dnn ims --session-ambr-ul '100 Mbps' --session-ambr-dl '300 Mbps' --5qi 8 --arp 2",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, v := range snssais {
				n, err := domain.ParseSNSSAI(v)
				if err != nil {
					return fmt.Errorf("--snssai: %w", err)
				}
				s.SNSSAIs = append(s.SNSSAIs, n)
			}
			if s.IMSI == "" || s.K == "" || (s.OPc == "" && s.OP == "") {
				return errors.New("--imsi, --k and one of --opc or --op are needed")
			}
			q, err := session.qos()
			if err != nil {
				return err
			}
			s.Session = q
			for _, v := range flows {
				f, err := parseQosFlow(v)
				if err != nil {
					return fmt.Errorf("--qos-flow %q: %w", v, err)
				}
				s.QosFlows = append(s.QosFlows, f)
			}
			c, err := provClient(cmd)
			if err != nil {
				return err
			}
			if count < 1 {
				return fmt.Errorf("--count %d: must be 1 or more", count)
			}
			if count > 1 {
				// No deadline for the whole range: each batch is one
				// request, bounded by the SBI client's own timeout.
				return addRange(cmd.Context(), cmd.OutOrStdout(), c, prov.Range{Subscriber: s, Count: count}, batch, replace)
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			return addSubscriber(ctx, cmd.OutOrStdout(), printerOf(cmd), c, s, replace)
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.IMSI, "imsi", "", "IMSI, 15 digits (the first one of a range)")
	f.IntVar(&count, "count", 1, "number of consecutive IMSIs to add")
	f.StringVar(&s.K, "k", "", "permanent key K, 32 hex digits")
	f.StringVar(&s.OPc, "opc", "", "OPc, 32 hex digits")
	f.StringVar(&s.OP, "op", "", "OP, 32 hex digits (the UDR stores the OPc derived from it)")
	f.StringVar(&s.SQN, "sqn", "", "initial SQN, 12 hex digits (default "+prov.DefaultSQN+")")
	f.StringVar(&s.AMF, "amf", "", "authentication management field, 4 hex digits (default "+prov.DefaultAMF+")")
	f.StringArrayVar(&snssais, "snssai", nil, "subscribed S-NSSAI as SST[/SD], e.g. 1/010203; repeatable (default: the node's slices)")
	f.StringArrayVar(&s.DNNs, "dnn", nil, "subscribed DNN; repeatable (default: the node's DNNs)")
	f.StringVar(&session.ambrUL, "session-ambr-ul", "", "session AMBR uplink of every DNN, e.g. '100 Mbps' (default "+prov.DefaultSession.AMBR.Uplink+")")
	f.StringVar(&session.ambrDL, "session-ambr-dl", "", "session AMBR downlink of every DNN (default "+prov.DefaultSession.AMBR.Downlink+")")
	f.IntVar(&session.fiveQI, "5qi", 0, fmt.Sprintf("5QI of the default QoS flow, non-GBR (default %d)", prov.DefaultSession.FiveQI))
	f.IntVar(&session.arp, "arp", 0, fmt.Sprintf("ARP priority level of the default QoS flow, 1-15 (default %d)", prov.DefaultSession.ARPPriority))
	f.StringArrayVar(&flows, "qos-flow", nil, "a QoS flow beyond the default one, as 'filter=FILTER;5qi=N[;mbr=UL/DL][;gbr=UL/DL][;precedence=N][;dnn=DNN][;snssai=SST/SD]',\n"+
		"e.g. 'filter=10.200.0.2;5qi=2;mbr=5 Mbps/5 Mbps;gbr=2 Mbps/2 Mbps'; FILTER is an address, a prefix or a 'permit out ...' IP filter rule; repeatable")
	f.BoolVar(&replace, "replace", false, "replace a subscriber that exists (single IMSI only)")
	f.IntVar(&batch, "batch", defaultBatch, "subscribers per request of a --count range (at most the UDR's udr.max_bulk)")
	return cmd
}

// sessionFlags are the session QoS flags of `subscriber add`; those left
// out take the UDR's defaults.
type sessionFlags struct {
	ambrUL, ambrDL string
	fiveQI, arp    int
}

// qos checks the flags given, naming the flag at fault; nil when none is.
func (f sessionFlags) qos() (*prov.SessionQoS, error) {
	if f == (sessionFlags{}) {
		return nil, nil
	}
	for _, v := range [][2]string{{"--session-ambr-ul", f.ambrUL}, {"--session-ambr-dl", f.ambrDL}} {
		if v[1] == "" {
			continue
		}
		if _, err := domain.ParseBitRate(v[1]); err != nil {
			return nil, fmt.Errorf("%s: %w", v[0], err)
		}
	}
	if f.fiveQI != 0 {
		if err := domain.CheckDefault5QI(f.fiveQI); err != nil {
			return nil, fmt.Errorf("--5qi: %w", err)
		}
	}
	if f.arp != 0 {
		if err := domain.CheckARPPriority(f.arp); err != nil {
			return nil, fmt.Errorf("--arp: %w", err)
		}
	}
	return &prov.SessionQoS{AMBR: prov.AMBR{Uplink: f.ambrUL, Downlink: f.ambrDL}, FiveQI: f.fiveQI, ARPPriority: f.arp}, nil
}

// parseQosFlow reads a --qos-flow value: key=value pairs separated by
// ';' (IP filter rules contain spaces and commas, never ';').
func parseQosFlow(v string) (prov.QosFlow, error) {
	var f prov.QosFlow
	for _, part := range strings.Split(v, ";") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return f, fmt.Errorf("%q is not key=value", part)
		}
		if err := setQosFlowField(&f, key, strings.TrimSpace(val)); err != nil {
			return f, err
		}
	}
	if f.Filter == "" || f.FiveQI == 0 {
		return f, errors.New("filter and 5qi are needed")
	}
	if err := f.Validate(); err != nil {
		return f, err
	}
	return f, nil
}

func setQosFlowField(f *prov.QosFlow, key, val string) error {
	var err error
	switch key {
	case "filter":
		f.Filter = val
	case "dnn":
		f.DNN = val
	case "5qi":
		f.FiveQI, err = strconv.Atoi(val)
	case "precedence":
		f.Precedence, err = strconv.Atoi(val)
	case "mbr":
		f.MBR, err = rateSplit(val)
	case "gbr":
		f.GBR, err = rateSplit(val)
	case "snssai":
		var n domain.SNSSAI
		n, err = domain.ParseSNSSAI(val)
		f.SNSSAI = &n
	default:
		return fmt.Errorf("unknown key %q (want filter, 5qi, mbr, gbr, precedence, dnn, snssai)", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// rateSplit reads "UL/DL" bit rates, e.g. "5 Mbps/10 Mbps".
func rateSplit(v string) (*prov.AMBR, error) {
	ul, dl, ok := strings.Cut(v, "/")
	if !ok {
		return nil, fmt.Errorf("%q: want UPLINK/DOWNLINK, e.g. 5 Mbps/10 Mbps", v)
	}
	return &prov.AMBR{Uplink: strings.TrimSpace(ul), Downlink: strings.TrimSpace(dl)}, nil
}

// defaultBatch is well under the UDR's default udr.max_bulk (10,000), so
// progress shows every few hundred milliseconds.
const defaultBatch = 1000

// addRange adds a range in batches, printing progress after each; on a
// failure it says exactly how many were added.
func addRange(ctx context.Context, out io.Writer, c *prov.Client, r prov.Range, batch int, replace bool) error {
	if replace {
		return errors.New("--replace works on one IMSI; delete the range first")
	}
	progress := func(done prov.BulkResult) {
		if done.Added+done.Existing < r.Count {
			fmt.Fprintf(out, "  %d of %d done (%d added, %d existed)\n", done.Added+done.Existing, r.Count, done.Added, done.Existing)
		}
	}
	res, err := c.AddRangeInBatches(ctx, r, batch, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "added %d subscribers from %s (%d existed and were left unchanged)\n", res.Added, r.IMSI, res.Existing)
	return nil
}

func addSubscriber(ctx context.Context, out io.Writer, p keyPrinter, c *prov.Client, s prov.Subscriber, replace bool) error {
	add := c.Add
	if replace {
		add = c.Put
	}
	got, err := add(ctx, s)
	if err != nil {
		return err
	}
	return printSubscribers(out, p, got)
}

func newSubscriberListCmd() *cobra.Command {
	var offset, limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list subscribers in IMSI order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := provClient(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			if all {
				limit = -1
			}
			return listSubscribers(ctx, cmd.OutOrStdout(), printerOf(cmd), c, offset, limit)
		},
	}
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many subscribers")
	cmd.Flags().IntVar(&limit, "limit", 100, "show at most this many")
	cmd.Flags().BoolVar(&all, "all", false, "show every subscriber")
	return cmd
}

// listSubscribers prints limit subscribers from offset (all when limit < 0),
// fetching pages of the API's maximum size.
func listSubscribers(ctx context.Context, out io.Writer, p keyPrinter, c *prov.Client, offset, limit int) error {
	const page = 1000
	var subs []prov.Subscriber
	total := 0
	for limit < 0 || len(subs) < limit {
		n := page
		if limit >= 0 {
			n = min(page, limit-len(subs))
		}
		p, err := c.List(ctx, offset+len(subs), n)
		if err != nil {
			return err
		}
		total = p.Total
		subs = append(subs, p.Subscribers...)
		if len(p.Subscribers) < n || len(p.Subscribers) == 0 {
			break
		}
	}
	if err := printSubscribers(out, p, subs...); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d of %d subscribers (from %d)\n", len(subs), total, offset)
	return nil
}

func newSubscriberShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show IMSI",
		Short: "show one subscriber",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := provClient(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			s, err := c.Get(ctx, args[0])
			if err != nil {
				return err
			}
			return printSubscriber(cmd.OutOrStdout(), printerOf(cmd).view(s))
		},
	}
}

func newSubscriberDeleteCmd() *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "delete IMSI [--count N]",
		Short: "delete one subscriber, or --count consecutive IMSIs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			imsis, err := prov.Range{Subscriber: prov.Subscriber{IMSI: args[0]}, Count: count}.IMSIs()
			if err != nil {
				return fmt.Errorf("--count, IMSI: %w", err)
			}
			c, err := provClient(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			for _, imsi := range imsis {
				if err := c.Delete(ctx, imsi); err != nil {
					return fmt.Errorf("%s: %w", imsi, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d subscribers from %s\n", len(imsis), args[0])
			return nil
		},
	}
	cmd.Flags().IntVar(&count, "count", 1, "number of consecutive IMSIs to delete")
	return cmd
}

// printSubscribers prints one row per subscriber.
func printSubscribers(out io.Writer, p keyPrinter, subs ...prov.Subscriber) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IMSI\tK\tOPC/OP\tSQN\tAMF\tS-NSSAIS\tDNNS")
	for _, s := range subs {
		s = p.view(s)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.IMSI, s.K, opcOrOP(s), s.SQN, s.AMF, snssaiList(s.SNSSAIs), strings.Join(s.DNNs, ","))
	}
	return tw.Flush()
}

// printSubscriber prints one subscriber, a field per line.
func printSubscriber(out io.Writer, s prov.Subscriber) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	rows := [][2]string{
		{"IMSI", s.IMSI}, {"K", s.K}, {"OPC/OP", opcOrOP(s)}, {"SQN", s.SQN}, {"AMF", s.AMF},
		{"S-NSSAIS", snssaiList(s.SNSSAIs)}, {"DNNS", strings.Join(s.DNNs, ",")},
	}
	if s.AMBR != nil {
		rows = append(rows, [2]string{"UE-AMBR", "up " + s.AMBR.Uplink + ", down " + s.AMBR.Downlink})
	}
	for i, f := range s.QosFlows {
		rows = append(rows, [2]string{fmt.Sprintf("QOS-FLOW %d", i+1), qosFlowText(f)})
	}
	if q := s.Session; q != nil {
		rows = append(rows, [2]string{"SESSION-AMBR", "up " + q.AMBR.Uplink + ", down " + q.AMBR.Downlink},
			[2]string{"DEFAULT-QOS", fmt.Sprintf("5QI %d, ARP %d", q.FiveQI, q.ARPPriority)})
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	return tw.Flush()
}

// qosFlowText shows a QoS flow in the --qos-flow syntax.
func qosFlowText(f prov.QosFlow) string {
	parts := []string{"filter=" + f.Filter, fmt.Sprintf("5qi=%d", f.FiveQI)}
	if f.MBR != nil {
		parts = append(parts, "mbr="+f.MBR.Uplink+"/"+f.MBR.Downlink)
	}
	if f.GBR != nil {
		parts = append(parts, "gbr="+f.GBR.Uplink+"/"+f.GBR.Downlink)
	}
	if f.Precedence != 0 {
		parts = append(parts, fmt.Sprintf("precedence=%d", f.Precedence))
	}
	if f.DNN != "" {
		parts = append(parts, "dnn="+f.DNN)
	}
	return strings.Join(parts, ";")
}

func opcOrOP(s prov.Subscriber) string {
	if s.OP != "" {
		return "op:" + s.OP
	}
	return "opc:" + s.OPc
}

func snssaiList(l []prov.SNSSAI) string {
	parts := make([]string, len(l))
	for i, n := range l {
		parts[i] = n.String()
	}
	return strings.Join(parts, ",")
}
