// Command l25gc is the single multi-call binary of L25GC+: it starts the core
// (`l25gc up`), runs each network function (`l25gc nf <name>`), provisions
// subscribers, and drives the RAN simulator and the benchmarks.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "l25gc",
		Short:         "L25GC+: a low-latency 5G core",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "node config file (YAML); built-in defaults when empty")
	root.AddCommand(newUpCmd(), newDownCmd(), newStatusCmd(), newNFCmd(), newConfigCmd(), newSubscriberCmd(), newPolicyCmd(), newSessionCmd(), newBenchCmd(), newRansimCmd(), newCertsCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "l25gc:", err)
		os.Exit(1)
	}
}
