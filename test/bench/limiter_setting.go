package bench

// A --limiter entry is an amf.limiter.mode with, optionally, other
// amf.limiter fields after slashes: "adaptive/threshold=25ms/growth=1".
// Variants of the limiter then run side by side in one command, each on
// its fresh core, which on this shared 2-core machine is the only fair way
// to compare them (runs minutes apart see different loads).

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/l25gc/l25gc/config"
)

// limiterYAML is the amf.limiter section a setting stands for: the mode,
// then each key=value as a YAML line.
func limiterYAML(setting string) (string, error) {
	parts := strings.Split(setting, "/")
	lines := []string{"mode: " + parts[0]}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" || k == "mode" {
			return "", fmt.Errorf("%q: want key=value after the mode (an amf.limiter field such as threshold=25ms), got %q", setting, kv)
		}
		lines = append(lines, k+": "+v)
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// checkLimiterSetting validates a setting as amf.limiter would be at load
// (unknown keys and bad values are refused with the field's name).
func checkLimiterSetting(setting string) error {
	y, err := limiterYAML(setting)
	if err != nil {
		return err
	}
	doc := "amf:\n  limiter:\n    " + strings.ReplaceAll(strings.TrimSuffix(y, "\n"), "\n", "\n    ") + "\n"
	_, err = config.Parse("--limiter "+setting, []byte(doc))
	return err
}

// applyLimiterSetting sets amf.limiter of a run from a checked setting;
// fields it does not name keep the run's values.
func applyLimiterSetting(l *config.Limiter, setting string) error {
	y, err := limiterYAML(setting)
	if err != nil {
		return err
	}
	return yaml.Unmarshal([]byte(y), l)
}

// limiterFileName turns a setting into a file-name part ("fixed:8" →
// "fixed8", "adaptive/threshold=25ms" → "adaptive-threshold25ms").
func limiterFileName(setting string) string {
	return strings.NewReplacer(":", "", "=", "", "/", "-").Replace(setting)
}

// isAdaptive says whether a setting's mode is adaptive (with or without
// overrides): its E_max moves, so its trace is worth a chart.
func isAdaptive(setting string) bool {
	mode, _, _ := strings.Cut(setting, "/")
	return mode == "adaptive"
}
