package e2e

import (
	"os"

	"gopkg.in/yaml.v3"

	"github.com/l25gc/l25gc/config"
)

// writeConfig saves cfg as a node config file the NF processes load.
func writeConfig(path string, cfg *config.Config) error {
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
