package keylog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kv is a minimal owner: a map of key → value, records {"k":…,"v":…}.
type kv struct {
	m   map[string]string
	log *Log
}

type kvRecord struct {
	K string `json:"k"`
	V string `json:"v"`
}

func openKV(t *testing.T, path string) *kv {
	t.Helper()
	s := &kv{m: map[string]string{}}
	l, err := Open(path, Options{Format: "test/1"}, func(b []byte) error {
		var r kvRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		s.m[r.K] = r.V
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.log = l
	return s
}

func (s *kv) put(t *testing.T, k, v string) {
	t.Helper()
	b, _ := json.Marshal(kvRecord{K: k, V: v})
	if err := s.log.Append(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	s.m[k] = v
}

func (s *kv) snapshot(emit func([]byte) error) error {
	for k, v := range s.m {
		b, _ := json.Marshal(kvRecord{K: k, V: v})
		if err := emit(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func TestReopenReplaysEveryRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "kv.log")
	s := openKV(t, path)
	s.put(t, "a", "1")
	s.put(t, "b", "2")
	s.put(t, "a", "3")
	if err := s.log.Close(); err != nil {
		t.Fatal(err)
	}
	s = openKV(t, path)
	defer s.log.Close()
	if s.m["a"] != "3" || s.m["b"] != "2" || len(s.m) != 2 {
		t.Fatalf("after reopen: %v, want a=3 b=2", s.m)
	}
}

func TestTornTailIsCutAndLogStaysUsable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	s := openKV(t, path)
	s.put(t, "a", "1")
	s.log.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"k":"b","v":`) // a crash mid-write
	f.Close()

	s = openKV(t, path)
	s.put(t, "c", "2")
	s.log.Close()
	s = openKV(t, path)
	defer s.log.Close()
	if len(s.m) != 2 || s.m["a"] != "1" || s.m["c"] != "2" {
		t.Fatalf("after a torn tail: %v, want a=1 c=2", s.m)
	}
}

func TestBadLineInTheMiddleIsAnErrorNamingFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	content := `{"op":"hdr","format":"test/1"}` + "\nnot json\n" + `{"k":"a","v":"1"}` + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{Format: "test/1"}, func([]byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Open: %v, want an error naming %s line 2", err, path)
	}
}

func TestForeignFormatIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	os.WriteFile(path, []byte(`{"op":"hdr","format":"other/1"}`+"\n"), 0o600)
	if _, err := Open(path, Options{Format: "test/1"}, func([]byte) error { return nil }); err == nil {
		t.Fatal("a log of another format was opened")
	}
}

func TestCompactionKeepsOnlyLiveRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.log")
	s := openKV(t, path)
	s.log.SetCompactMin(1 << 10)
	for i := 0; i < 1000; i++ {
		s.put(t, fmt.Sprint(i%10), fmt.Sprint(i))
	}
	if !s.log.Oversized(200) {
		t.Fatalf("a %d-byte log of 10 live keys is not oversized", s.log.Size())
	}
	if err := s.log.Compact(s.snapshot); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != s.log.Size() || st.Size() > 400 {
		t.Fatalf("compacted log: file %d bytes, Size %d; want equal and under 400", st.Size(), s.log.Size())
	}
	s.put(t, "x", "y") // appends go to the new file
	s.log.Close()
	s = openKV(t, path)
	defer s.log.Close()
	if len(s.m) != 11 || s.m["9"] != "999" || s.m["x"] != "y" {
		t.Fatalf("after compaction and reopen: %v", s.m)
	}
}
