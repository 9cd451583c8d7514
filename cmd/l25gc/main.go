// Command l25gc is the single multi-call binary of L25GC+: it starts the core
// (`l25gc up`), runs each network function (`l25gc nf <name>`), provisions
// subscribers, and drives the RAN simulator and benchmarks.
package main

func main() {}
