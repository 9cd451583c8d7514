package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
)

// newCertsCmd is `l25gc certs init`: the lab CA and the certificates of
// this node's NFs for sbi.tls (TS 33.501 13.1). `l25gc up` does the same
// when they are missing; running it first lets an operator copy the CA
// to the other nodes of a core, or replace it with their own.
func newCertsCmd() *cobra.Command {
	certs := &cobra.Command{Use: "certs", Short: "TLS certificates of the SBI"}
	certs.AddCommand(&cobra.Command{
		Use:   "init",
		Short: "make a lab CA (unless one exists) and a certificate for each NF of this node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if err := node.IssueCerts(cfg, config.Builtin); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "certificates in %s (CA %s)\n", cfg.CertDir(), "ca.crt")
			return nil
		},
	})
	return certs
}
