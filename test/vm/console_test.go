package vm

import (
	"strings"
	"testing"
)

func TestConsoleGivesTheCommandsOutputAndExitCode(t *testing.T) {
	console := "[    0.1] kernel noise\r\n" + markerBegin + "\r\nhello\r\nworld\r\n" + markerExit + "3\r\n[    2.0] reboot: Power down\r\n"
	r, err := parseConsole(console, nil)
	if err != nil || r.Output != "hello\nworld\n" || r.ExitCode != 3 {
		t.Fatalf("got %q exit %d, %v", r.Output, r.ExitCode, err)
	}
}

func TestConsoleWithoutTheCommandIsAnError(t *testing.T) {
	_, err := parseConsole("Kernel panic - not syncing: No working init found\n", nil)
	if err == nil || !strings.Contains(err.Error(), "No working init") {
		t.Fatalf("got %v; want an error quoting the console", err)
	}
}
