package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
)

var ctx = context.Background()

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closeStore(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "udr.db")
	s := open(t, path)
	a := storetest.Subscriber("208930000000001", "000000000020")
	b := storetest.Subscriber("208930000000002", "000000000020")
	gone := storetest.Subscriber("208930000000003", "000000000020")
	if _, err := s.AddAbsent(ctx, []*store.Subscriber{a, b, gone}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := s.IncrementSQN(ctx, a.UeID, 32); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutAMF3GPPAccess(ctx, b.UeID, &models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSubscriber(ctx, gone.UeID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{1, 2} {
		if _, err := s.PutSMFRegistration(ctx, b.UeID, &models.SmfRegistration{SmfInstanceId: "smf-1", PduSessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSMFRegistration(ctx, b.UeID, 1); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = open(t, path)
	defer closeStore(t, s)
	if got, err := s.AuthSubscription(ctx, a.UeID); err != nil || got.SequenceNumber.Sqn != "000000000160" {
		t.Fatalf("SQN after restart = %v, %v; want 000000000160", got, err)
	}
	if reg, err := s.AMF3GPPAccess(ctx, b.UeID); err != nil || reg.AmfInstanceId != "amf-1" {
		t.Fatalf("AMF registration after restart = %v, %v", reg, err)
	}
	if regs, err := s.SMFRegistrations(ctx, b.UeID); err != nil || len(regs) != 1 || regs[0].PduSessionId != 2 {
		t.Fatalf("SMF registrations after restart = %+v, %v; want session 2 only", regs, err)
	}
	if _, err := s.Subscriber(ctx, gone.UeID); err != store.ErrNotFound {
		t.Fatalf("deleted subscriber after restart: %v", err)
	}
	if _, total, _ := s.List(ctx, 0, 10); total != 2 {
		t.Fatalf("%d subscribers after restart, want 2", total)
	}
}

// A crash in the middle of a write leaves a torn last line: it is dropped,
// everything before it is kept, and the store keeps appending after it.
func TestTornTailIsCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "udr.db")
	s := open(t, path)
	a := storetest.Subscriber("208930000000001", "000000000020")
	if err := s.PutSubscriber(ctx, a); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"op":"sqn","ue":"imsi-2089300000`)
	f.Close()

	s = open(t, path)
	if _, err := s.IncrementSQN(ctx, a.UeID, 1); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = open(t, path)
	defer closeStore(t, s)
	if got, _ := s.AuthSubscription(ctx, a.UeID); got.SequenceNumber.Sqn != "000000000021" {
		t.Fatalf("SQN = %s, want 000000000021", got.SequenceNumber.Sqn)
	}
}

func TestCorruptLogIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "udr.db")
	if err := os.WriteFile(path, []byte("hello\nworld\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a foreign file: %v, want an error naming it", err)
	}
}

// Many SQN updates grow the log; compaction brings it back to one record
// per subscriber without losing any update.
func TestCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "udr.db")
	s := open(t, path)
	const compactMin = 64 << 10
	s.log.SetCompactMin(compactMin)
	subs := make([]*store.Subscriber, 20)
	for i := range subs {
		subs[i] = storetest.Subscriber(fmt.Sprintf("2089300000000%02d", i), "000000000000")
	}
	if _, err := s.AddAbsent(ctx, subs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSMFRegistration(ctx, subs[0].UeID, &models.SmfRegistration{SmfInstanceId: "smf-1", PduSessionId: 7}); err != nil {
		t.Fatal(err)
	}
	amf := &models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1", Guami: &models.Guami{AmfId: "cafe00"}, RatType: models.RatType_NR}
	if err := s.PutAMF3GPPAccess(ctx, subs[1].UeID, amf); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if _, err := s.IncrementSQN(ctx, subs[i%len(subs)].UeID, 1); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	if st.Size() > 2*compactMin {
		t.Fatalf("log is %d bytes after 5000 SQN updates; compaction should keep it under %d", st.Size(), 2*compactMin)
	}
	closeStore(t, s)
	s = open(t, path)
	defer closeStore(t, s)
	if regs, err := s.SMFRegistrations(ctx, subs[0].UeID); err != nil || len(regs) != 1 || regs[0].PduSessionId != 7 {
		t.Fatalf("SMF registration after compaction = %+v, %v", regs, err)
	}
	if reg, err := s.AMF3GPPAccess(ctx, subs[1].UeID); err != nil || reg.AmfInstanceId != "amf-1" || reg.Guami.AmfId != "cafe00" || reg.RatType != models.RatType_NR {
		t.Fatalf("AMF registration after compaction = %+v, %v", reg, err)
	}
	for _, sub := range subs {
		if a, _ := s.AuthSubscription(ctx, sub.UeID); a.SequenceNumber.Sqn != "0000000000fa" {
			t.Fatalf("%s SQN = %s, want 0000000000fa (250 updates)", sub.UeID, a.SequenceNumber.Sqn)
		}
	}
}

// 10,000 subscribers go in with one call, and AddAbsent of the same range
// again adds none. (Replaying them at open is TestRestartKeepsEverything's
// code path; left out here to keep the test fast under -race.)
func TestTenThousandSubscribers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "udr.db")
	s := open(t, path)
	subs := make([]*store.Subscriber, 10000)
	for i := range subs {
		subs[i] = storetest.Subscriber(fmt.Sprintf("20893%010d", i+1), "000000000020")
	}
	if n, err := s.AddAbsent(ctx, subs); err != nil || n != len(subs) {
		t.Fatalf("AddAbsent = %d, %v", n, err)
	}
	defer closeStore(t, s)
	if n, err := s.AddAbsent(ctx, subs); err != nil || n != 0 {
		t.Fatalf("AddAbsent again = %d, %v; want 0", n, err)
	}
	page, total, err := s.List(ctx, 9999, 10)
	if err != nil || total != 10000 || len(page) != 1 || page[0].UeID != "imsi-208930000010000" {
		t.Fatalf("List(9999) = %d, total %d, %v", len(page), total, err)
	}
}

// The hot paths: one SQN update per authentication, one read per UDM query.
// go test -bench . ./nf/udr/store/embedded/
func BenchmarkIncrementSQN(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "udr.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	sub := storetest.Subscriber("208930000000001", "000000000000")
	if err := s.PutSubscriber(ctx, sub); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.IncrementSQN(ctx, sub.UeID, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkAuthSubscription(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "udr.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	sub := storetest.Subscriber("208930000000001", "000000000000")
	if err := s.PutSubscriber(ctx, sub); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.AuthSubscription(ctx, sub.UeID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A batch reuses the encoding of subscribers that differ only in ueId; one
// that differs in anything else is written with its own data.
func TestBatchKeepsEachSubscribersData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "udr.db")
	s := open(t, path)
	a := storetest.Subscriber("208930000000001", "000000000020")
	b := *a
	b.UeID = "imsi-208930000000002" // shares a's data
	c := *a
	c.UeID, c.Auth.EncPermanentKey = "imsi-208930000000003", strings.Repeat("0f", 16)
	d := b
	d.UeID = "imsi-208930000000004" // like b again, after c
	if n, err := s.AddAbsent(ctx, []*store.Subscriber{a, &b, &c, &d}); err != nil || n != 4 {
		t.Fatalf("AddAbsent = %d, %v", n, err)
	}
	closeStore(t, s)
	s = open(t, path)
	defer closeStore(t, s)
	for id, k := range map[string]string{a.UeID: storetest.K, b.UeID: storetest.K, c.UeID: strings.Repeat("0f", 16), d.UeID: storetest.K} {
		got, err := s.Subscriber(ctx, id)
		if err != nil || got.UeID != id || got.Auth.EncPermanentKey != k || len(got.SMPolicy.SmPolicySnssaiData) != 2 {
			t.Errorf("%s after restart: %+v, %v; want K %s", id, got, err, k)
		}
	}
}
