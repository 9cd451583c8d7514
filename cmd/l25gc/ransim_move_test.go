package main

import (
	"strings"
	"testing"
)

// The handover flags are checked before any connection is tried (the AMF
// address here would refuse it).
func TestRansimRefusesMoveFlagsThatCannotWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gnbs", "0"}, "--gnbs 0: want 1 or more"},
		{[]string{"--pdu", "--gnbs", "2", "--move", "s1"}, `--move "s1": want n2 or xn`},
		{[]string{"--gnbs", "2", "--move", "xn"}, "--move needs --pdu"},
		{[]string{"--pdu", "--move", "n2"}, "--move needs --gnbs 2 or more"},
	} {
		_, err := runCmd(append([]string{"ransim", "--amf", "127.0.0.1:1"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ransim %v: err %v, want %q", c.args, err, c.want)
		}
	}
}

// bench handover refuses a kind it does not know and a flag of the other
// kind before it starts a core.
func TestBenchHandoverRefusesFlagsThatCannotWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "s1"}, `--kind "s1": want n2 or xn`},
		{[]string{"--kind", "xn", "--no-direct-forwarding"}, "--no-direct-forwarding is for --kind n2"},
		{[]string{"--n3", "gnb"}, `--n3 "gnb": want an IPv4 address`},
	} {
		_, err := runCmd(append([]string{"bench", "handover"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench handover %v: err %v, want %q", c.args, err, c.want)
		}
	}
}
