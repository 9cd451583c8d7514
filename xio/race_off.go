//go:build !race

package xio

// raceSync is a no-op outside race builds (race_on.go says why it exists).
func raceSync() {}
