package logging

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log file past its size moves to .1, .1 to .2, and only keep rotated
// files remain; no file exceeds the limit and none splits a line.
func TestLogFilesRotateBySize(t *testing.T) {
	dir := t.TempDir()
	log, closer, err := OpenFile(dir, "udr", slog.LevelInfo, FileOptions{MaxBytes: 1000, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		log.Info("subscriber range provisioned", "i", i)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "udr.log")
	for _, p := range []string{path, path + ".1", path + ".2"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(b) > 1000 || len(b) == 0 || !bytes.HasSuffix(b, []byte("\n")) || !bytes.HasPrefix(b, []byte("time=")) {
			t.Fatalf("%s: %d bytes, want 1 to 1000 of whole lines:\n%s", p, len(b), b)
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Fatalf("%s.3 exists (%v); want only 2 rotated files kept", path, err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "i=199") {
		t.Fatalf("the newest record is not in %s:\n%s", path, b)
	}
	// Reopened (an NF restart), the file's size counts toward the limit.
	r, err := OpenRotating(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Write(bytes.Repeat([]byte("x"), 999)); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Size() != 999 {
		t.Fatalf("after a write that did not fit the reopened file: %s has %d bytes, want a fresh file of 999", path, info.Size())
	}
}

// With redaction on, SUPIs, IMSIs and null-scheme SUCIs keep only the
// network and the last 4 digits, wherever the attribute sits (a call, a
// With, a group); other attributes are untouched.
func TestSUPIsAreRedacted(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, slog.LevelInfo, "amf", true).With("supi", "imsi-208930000000001")
	log.Info("registered", "supiOrSuci", "suci-0-208-93-0000-0-0-0000000002", "imsi", "208930000000003",
		slog.Group("ue", slog.String("ueId", "imsi-208930000000004")), "amfUeNgapId", 7, "dnn", "internet")
	out := buf.String()
	for _, want := range []string{"supi=imsi-20893******0001", "supiOrSuci=suci-0-208-93-0000-0-0-******0002",
		"imsi=20893******0003", "ue.ueId=imsi-20893******0004", "amfUeNgapId=7", "dnn=internet"} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s:\n%s", want, out)
		}
	}
	for _, leaked := range []string{"0000000001", "0000000002", "0000000003", "0000000004"} {
		if strings.Contains(out, leaked) {
			t.Errorf("log line shows %s:\n%s", leaked, out)
		}
	}
	buf.Reset()
	newLogger(&buf, slog.LevelInfo, "amf", false).Info("registered", "supi", "imsi-208930000000001")
	if !strings.Contains(buf.String(), "supi=imsi-208930000000001") {
		t.Errorf("redaction off: %s", buf.String())
	}
}

func TestRedactIdentity(t *testing.T) {
	cases := map[string]string{
		"imsi-001010000000001":          "imsi-00101******0001",
		"nai-user@example.org":          RedactIdentity("nai-user@example.org"),
		"suci-0-208-93-0000-1-1-a1b2c3": "suci-0-208-93-0000-1-1-a1b2c3", // Profile A output is already concealed
		"12345":                         "***45",
		"":                              "",
	}
	for in, want := range cases {
		if got := RedactIdentity(in); got != want {
			t.Errorf("RedactIdentity(%q) = %q, want %q", in, got, want)
		}
	}
	if got := RedactIdentity("nai-user@example.org"); strings.Contains(got, "user") || !strings.HasPrefix(got, "sha256:") {
		t.Errorf("an NAI: %q, want a hash", got)
	}
}
