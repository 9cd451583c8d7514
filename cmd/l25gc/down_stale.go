package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/upf/shm"
)

// coreConfig is the config the core of st runs with: --config when given,
// else the file its `up` named (built-in defaults when it named none),
// with the data directory the core used, which names its UPF rule tables.
func coreConfig(cmd *cobra.Command, st *node.State) (*config.Config, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	if path, _ := cmd.Flags().GetString("config"); path == "" && st.ConfigPath != "" {
		if cfg, err = config.Load(st.ConfigPath); err != nil {
			return nil, fmt.Errorf("the running core's config: %w", err)
		}
	}
	switch {
	case st.DataDir != "":
		cfg.DataDir = st.DataDir
	case st.Path != "": // a state written before it recorded data_dir
		cfg.DataDir = filepath.Dir(st.Path)
	}
	return cfg, nil
}

// leftovers are what a core's Stop removes besides its processes, and so
// what a supervisor killed before it stopped leaves behind: the lab
// topology (veth pairs, netns l25gc-dn) and the UPF's rule tables, a
// hugetlbfs file that keeps its hugepages until someone deletes it.
type leftovers struct {
	lab    *node.LabNet // nil: the node builds none
	tables *shm.Config  // nil: the node runs no UPF
}

// leftoversOf names the leftovers of the core cfg describes.
func leftoversOf(cfg *config.Config) (leftovers, error) {
	var l leftovers
	if node.NeedsLabNet(cfg) {
		lab, err := node.LabNetFor(cfg)
		if err != nil {
			return l, err
		}
		l.lab = &lab
	}
	if cfg.Runs("upf-c") || cfg.Runs("upf-u") {
		t := shm.ConfigFor(cfg)
		l.tables = &t
	}
	return l, nil
}

// remove deletes the leftovers that are there, saying what it removed;
// parts already gone are no error, and one part that fails does not keep
// the other.
func (l leftovers) remove(out io.Writer) error {
	var errs []error
	if l.lab != nil {
		if err := l.lab.Down(); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(out, "lab topology removed (%s)\n", labNames(*l.lab))
		}
	}
	if l.tables != nil {
		path := l.tables.Path()
		_, statErr := os.Stat(path)
		if err := shm.RemoveFile(*l.tables); err != nil {
			errs = append(errs, fmt.Errorf("upf tables: %w", err))
		} else if statErr == nil {
			fmt.Fprintf(out, "UPF rule tables removed (%s)\n", path)
		}
	}
	return errors.Join(errs...)
}

func labNames(l node.LabNet) string {
	var names []string
	for _, n := range []string{l.N3, l.N6} {
		if n != "" {
			names = append(names, n)
		}
	}
	if l.N6 != "" {
		names = append(names, "netns "+l.Netns)
	}
	return strings.Join(names, ", ")
}

// cleanStaleCore is `l25gc down` for a core whose supervisor is gone (a
// kill -9, a reboot of a /run-less host): its NFs die with it, but the
// state file, the lab topology and the rule tables stay until removed.
func cleanStaleCore(cmd *cobra.Command, st *node.State) error {
	out := cmd.OutOrStdout()
	_ = os.Remove(st.Path)
	if done, err := node.RestoreTuning(st); err != nil {
		fmt.Fprintf(out, "host tuning not put back: %v\n", err)
	} else if done != "" {
		fmt.Fprintln(out, done)
	}
	cfg, err := coreConfig(cmd, st)
	if err == nil {
		var l leftovers
		if l, err = leftoversOf(cfg); err == nil {
			err = l.remove(out)
		}
	}
	if err != nil {
		return fmt.Errorf("supervisor pid %d is gone; removed stale state, but not all it left: %w", st.SupervisorPID, err)
	}
	return fmt.Errorf("supervisor pid %d is gone; removed stale state", st.SupervisorPID)
}
