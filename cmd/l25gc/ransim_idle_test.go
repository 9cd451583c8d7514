package main

import (
	"strings"
	"testing"
)

// The idle flags are checked before any connection is tried.
func TestRansimRefusesIdleFlagsThatCannotWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle"}, "--idle needs --pdu"},
		{[]string{"--pdu", "--wake"}, "--wake, --ignore-paging and --idle-after need --idle"},
		{[]string{"--pdu", "--ignore-paging"}, "--wake, --ignore-paging and --idle-after need --idle"},
		{[]string{"--pdu", "--idle-after", "1s"}, "--wake, --ignore-paging and --idle-after need --idle"},
		{[]string{"--pdu", "--idle", "--idle-after", "-1s"}, "--idle-after: want a duration of 0 or more"},
	} {
		_, err := runCmd(append([]string{"ransim", "--amf", "127.0.0.1:1"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ransim %v: err %v, want %q", c.args, err, c.want)
		}
	}
}

func TestBenchPagingAndServiceRequestExist(t *testing.T) {
	for _, sub := range []string{"paging", "service-request"} {
		out, err := runCmd("bench", sub, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"--ues", "--concurrency", "--sbi", "--json", "--amf", "userplane.lock"} {
			if !strings.Contains(out, want) {
				t.Errorf("bench %s help lacks %q", sub, want)
			}
		}
	}
	if _, err := runCmd("bench", "paging", "--ues", "x", "--amf", "127.0.0.1:1"); err == nil {
		t.Error("bench paging took --ues x")
	}
}
