package main

import (
	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
)

// loadConfig reads --config, or the built-in defaults when it is empty.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}
