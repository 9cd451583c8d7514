package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "check or print the node config"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "validate --config and report every error with file, line and field",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", orDefaults(cfg.Path))
			return nil
		},
	}, &cobra.Command{
		Use:   "show",
		Short: "print the effective config (defaults merged with --config)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			out, err := yaml.Marshal(cfg)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	})
	return cmd
}

func orDefaults(path string) string {
	if path == "" {
		return "built-in defaults"
	}
	return path
}
