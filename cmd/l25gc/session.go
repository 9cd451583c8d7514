package main

// `l25gc session show IMSI`: a subscriber's PDU sessions with their QoS
// flows (GBR, MBR), the Session-AMBR and the rate each flow gets when all
// of them are busy — computed by qos.FairShare, the algorithm UPF-U's
// shapers run (issue 13: each GBR flow its GBR, the rest of the AMBR
// shared max-min fairly by the flows' weights, each capped by its MBR).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/qos"
)

func newSessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "show PDU sessions and their QoS through the SMF's admin API",
	}
	addSMFAdminFlags(cmd)
	cmd.AddCommand(newSessionShowCmd())
	return cmd
}

func newSessionShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show IMSI",
		Short: "a subscriber's PDU sessions: QoS flows, GBR/MBR, Session-AMBR and the expected fair-share rates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := smfAdminClient(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd)
			defer cancel()
			list, err := a.sessionsOf(ctx, args[0])
			if err != nil {
				return err
			}
			if len(list) == 0 {
				return fmt.Errorf("%s has no PDU session", supiOf(args[0]))
			}
			for _, s := range list {
				if err := printSession(cmd.OutOrStdout(), s); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// expectedShares are the fair-share rates of the session's flows when all
// are busy, uplink and downlink.
func expectedShares(s smf.SessionView) (ul, dl qos.Share, err error) {
	up := make([]qos.FairFlow, len(s.Flows))
	down := make([]qos.FairFlow, len(s.Flows))
	for i, f := range s.Flows {
		up[i] = qos.FairFlow{GBR: f.GBRUplinkBps, MBR: f.MBRUplinkBps, Weight: uint32(f.Weight), Active: true}
		down[i] = qos.FairFlow{GBR: f.GBRDownlinkBps, MBR: f.MBRDownlinkBps, Weight: uint32(f.Weight), Active: true}
	}
	if ul, err = qos.FairShare(s.AMBRUplinkBps, up); err != nil {
		return ul, dl, err
	}
	dl, err = qos.FairShare(s.AMBRDownlinkBps, down)
	return ul, dl, err
}

func printSession(out io.Writer, s smf.SessionView) error {
	ul, dl, err := expectedShares(s)
	if err != nil {
		return fmt.Errorf("PDU session %d: fair share: %w", s.PDUSessionID, err)
	}
	fmt.Fprintf(out, "%s PDU session %d: dnn %s, s-nssai %s, UE %s, %s\n", s.SUPI, s.PDUSessionID, s.DNN, s.SNSSAI, orDash(s.UEIPv4), s.State)
	fmt.Fprintf(out, "  Session-AMBR UL/DL: %s\n", ratePair(s.AMBRUplinkBps, s.AMBRDownlinkBps))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  QFI\t5QI\tweight\tGBR UL/DL\tMBR UL/DL\texpected UL/DL (all busy)\tfilter")
	for i, f := range s.Flows {
		filter := "(default flow)"
		if len(f.Filters) > 0 {
			filter = strings.Join(f.Filters, "; ")
		}
		if f.Pending {
			filter += " (pending: the gNB has not confirmed it)"
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\t%s\n", f.QFI, f.FiveQI, max(f.Weight, 1), ratePair(f.GBRUplinkBps, f.GBRDownlinkBps),
			ratePair(f.MBRUplinkBps, f.MBRDownlinkBps), ratePair(ul.Rates[i], dl.Rates[i]), filter)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ul.GBRScaled || dl.GBRScaled {
		fmt.Fprintln(out, "  note: the GBRs add up to more than the Session-AMBR; each was scaled down to fit it")
	}
	if ul.GBRClamped || dl.GBRClamped {
		fmt.Fprintln(out, "  note: a GBR above its MBR counts as the MBR")
	}
	return nil
}

// ratePair writes "UL / DL" in Mbit/s, "-" for none.
func ratePair(ul, dl uint64) string {
	if ul == 0 && dl == 0 {
		return "-"
	}
	return mbit(ul) + " / " + mbit(dl) + " Mbit/s"
}

func mbit(bps uint64) string { return strconv.FormatFloat(float64(bps)/1e6, 'f', -1, 64) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
