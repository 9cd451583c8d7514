package amf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
)

var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func testRecord(tmsi uint32) *ueRecord {
	return &ueRecord{SUPI: fmt.Sprintf("imsi-20893%010d", tmsi), GUAMI: testGUAMI.String(), TMSI: tmsi,
		KAMF: bytes.Repeat([]byte{byte(tmsi)}, 32), EA: 2, IA: 2, NextDL: 3, NextUL: 2}
}

func openStore(t *testing.T, path string, interval time.Duration, maxPending int) (*ueStore, map[uint32]*ueRecord) {
	t.Helper()
	s, recs, err := openUEStore(path, interval, maxPending, discardLog)
	if err != nil {
		t.Fatal(err)
	}
	byTMSI := map[uint32]*ueRecord{}
	for _, r := range recs {
		byTMSI[r.TMSI] = r
	}
	return s, byTMSI
}

func TestUEStoreKeepsRecordsAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "amf.ues")
	s, recs := openStore(t, path, time.Millisecond, 16)
	if len(recs) != 0 {
		t.Fatalf("a new store holds %d records", len(recs))
	}
	s.save(testRecord(1))
	s.save(testRecord(2))
	r := testRecord(1)
	r.NextDL = 9 // a later snapshot of the same UE replaces the first
	s.save(r)
	s.remove(2)
	if err := s.reserveTMSI(5000); err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	s, recs = openStore(t, path, time.Millisecond, 16)
	defer s.close()
	if len(recs) != 1 || recs[1] == nil || recs[1].NextDL != 9 {
		t.Fatalf("after restart: %+v, want only TMSI 1 with NextDL 9", recs)
	}
	if s.reservedTMSI() != 5000 {
		t.Fatalf("reservation %d after restart, want 5000", s.reservedTMSI())
	}
}

func TestUEStoreCutsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "amf.ues")
	s, _ := openStore(t, path, time.Millisecond, 16)
	s.save(testRecord(7))
	s.close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"op":"put","ue":{"supi":"imsi-2089`) // killed mid-write
	f.Close()
	s, recs := openStore(t, path, time.Millisecond, 16)
	s.save(testRecord(8))
	s.close()
	_, recs = openStore(t, path, time.Millisecond, 16)
	if len(recs) != 2 || recs[7] == nil || recs[8] == nil {
		t.Fatalf("after a torn tail: %v, want TMSIs 7 and 8", recs)
	}
}

func TestUEStoreCompactsToLiveRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "amf.ues")
	s, _ := openStore(t, path, time.Millisecond, 16)
	s.file.SetCompactMin(16 << 10)
	for i := 0; i < 2000; i++ {
		r := testRecord(uint32(1 + i%5))
		r.NextDL = uint32(i)
		s.save(r)
		if i%50 == 0 {
			s.flush() // many small appends, as a busy AMF makes
		}
	}
	s.reserveTMSI(4096)
	s.close()
	if st, _ := os.Stat(path); st.Size() > 64<<10 {
		t.Fatalf("store is %d bytes for 5 UEs after 2000 updates: not compacted", st.Size())
	}
	s, recs := openStore(t, path, time.Millisecond, 16)
	defer s.close()
	if len(recs) != 5 || recs[5].NextDL != 1999 || s.reservedTMSI() != 4096 {
		t.Fatalf("after compaction: %d records, TMSI 5 NextDL %d, reservation %d; want 5, 1999, 4096",
			len(recs), recs[5].NextDL, s.reservedTMSI())
	}
}

// The lag is bounded by the queue as well as by the interval: with an
// interval no test waits for, the max_pending-th queued UE makes the
// queue go to the file at once.
func TestUEStoreQueueBoundForcesAFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "amf.ues")
	s, _ := openStore(t, path, time.Hour, 2)
	defer s.close()
	s.save(testRecord(1))
	s.save(testRecord(2)) // the queue is full: flushed now
	s.save(testRecord(3)) // queued until the next flush
	inFile := func(tmsi uint32) bool {
		b, _ := os.ReadFile(path)
		return bytes.Contains(b, []byte(fmt.Sprintf(`"tmsi":%d,`, tmsi)))
	}
	for i := 0; i < 10000 && !(inFile(1) && inFile(2)); i++ {
		time.Sleep(time.Millisecond)
	}
	if !inFile(1) || !inFile(2) {
		t.Fatal("a full queue did not reach the file")
	}
	if inFile(3) {
		t.Fatal("a change below the queue bound was written before the interval")
	}
}

// persistHarness is an AMF with its UE store open, as Start opens it.
func persistHarness(t *testing.T, dataDir string) (*harness, *gnbSide) {
	t.Helper()
	h := newHarness(t, func(c *config.Config) { c.DataDir = dataDir })
	if err := h.amf.openPersist(); err != nil {
		t.Fatal(err)
	}
	g := h.connect()
	g.setup()
	return h, g
}

// storedTMSIs reads which UEs the store file holds now (what a process
// started at this moment would restore).
func storedTMSIs(t *testing.T, dataDir string) map[uint32]*ueRecord {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy.ues")
	b, err := os.ReadFile(persistPath(dataDir, "", testGUAMI.AMFID.String()))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cp, b, 0o600)
	s, recs := openStore(t, cp, time.Hour, 1)
	s.close()
	return recs
}

// awaitStored waits for the write-behind to leave exactly the UEs of
// tmsis in the file.
func awaitStored(t *testing.T, dataDir string, tmsis ...uint32) map[uint32]*ueRecord {
	t.Helper()
	same := func(recs map[uint32]*ueRecord) bool {
		if len(recs) != len(tmsis) {
			return false
		}
		for _, v := range tmsis {
			if recs[v] == nil {
				return false
			}
		}
		return true
	}
	for i := 0; i < 2000; i++ {
		if recs := storedTMSIs(t, dataDir); same(recs) {
			return recs
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the store never held exactly TMSIs %v: %v", tmsis, storedTMSIs(t, dataDir))
	return nil
}

// A UE registered with one AMF process, the process gone without a word
// (its store not closed), the next process restores the UE as CM-IDLE:
// the UE's mobility registration with its 5G-GUTI is accepted under the
// kept security context, without authentication, and the downlink COUNTs
// it then receives pass its replay check.
func TestRestoredUERegistersWithGUTIWithoutAuthentication(t *testing.T) {
	dir := t.TempDir()
	h1, g1 := persistHarness(t, dir)
	ue := h1.newUE(g1, "0000000021", 1)
	ue.register()
	recs := awaitStored(t, dir, ue.guti.TMSI)
	if r := recs[ue.guti.TMSI]; r == nil || r.SUPI != ue.supi || len(r.Allowed) == 0 || r.PolicyID == "" || !r.UDMRegistered {
		t.Fatalf("stored %+v, want the UE's SUPI, allowed NSSAI, AM policy and UDM registration", recs)
	}
	authsBefore := h1.peers.nextAuth

	// "Restart": a new AMF on the same data dir; the old one's N2 is gone.
	h2, g2 := persistHarness(t, dir)
	h2.wantMetric("l25gc_amf_registered_ues", nil, 1, "restored UEs count as registered")
	old := *ue.guti
	ue.g = g2
	ue.returnWithGUTI(2) // straight to Registration Accept in ICS: no Authentication Request
	if *ue.guti != old {
		t.Fatalf("GUTI changed: %+v -> %+v", old, *ue.guti)
	}
	ue.up(ue.registrationComplete())
	if m := ue.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		t.Fatal("want Configuration Update Command after Registration Complete")
	}
	if h2.peers.nextAuth != 0 || h1.peers.nextAuth != authsBefore {
		t.Fatalf("authentications after the restart: %d", h2.peers.nextAuth)
	}

	// A new UE gets a 5G-TMSI the restored one does not have.
	other := h2.newUE(g2, "0000000022", 3)
	other.register()
	if other.guti.TMSI == old.TMSI {
		t.Fatalf("TMSI %08x handed out again", old.TMSI)
	}

	// Deregistration deletes the record.
	ue.up(ue.deregistrationRequest(true))
	g2.expect("UEContextReleaseCommand")
	awaitStored(t, dir, other.guti.TMSI)
}

// A restored context still checks integrity: a request with a wrong MAC
// under the restored GUTI is not accepted without authentication.
func TestRestoredUEWithWrongKeyAuthenticates(t *testing.T) {
	dir := t.TempDir()
	h1, g1 := persistHarness(t, dir)
	ue := h1.newUE(g1, "0000000023", 1)
	ue.register()
	awaitStored(t, dir, ue.guti.TMSI)

	h2, g2 := persistHarness(t, dir)
	h2.peers.subs[ue.supi] = h1.peers.subs[ue.supi]
	ue.g = g2
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	forged := ue.registrationRequest(nasMessage.RegistrationType5GSMobilityRegistrationUpdating, gb)
	// Someone without the keys: a made-up MAC.
	g2.send(initialUEMessage(t, 2, append([]byte{0x7e, nas.SecurityHeaderTypeIntegrityProtected, 1, 2, 3, 4, 0}, forged...)))
	ue.ranID = 2
	if m := ue.dl("DownlinkNASTransport"); m.AuthenticationRequest == nil {
		t.Fatalf("a request failing the restored context's check got message type %d, want Authentication Request", m.GmmHeader.GetMessageType())
	}
}

// TMSIs handed out before a restart are never handed out after it, even
// those of UEs whose records were lost.
func TestTMSIAllocatorSkipsEverythingReservedBeforeRestart(t *testing.T) {
	dir := t.TempDir()
	h1, _ := persistHarness(t, dir)
	var last uint32
	for i := 0; i < 3; i++ {
		last = h1.amf.ues.allocTMSI() // allocated, never registered: no record
	}
	h2, _ := persistHarness(t, dir)
	if v := h2.amf.ues.allocTMSI(); v <= last {
		t.Fatalf("after restart TMSI %d, but %d was handed out before", v, last)
	}
}

// A crash within the write-behind lag loses the last COUNT increments: the
// store holds older COUNTs than the UE. The restored context still accepts
// the UE's uplink (COUNT estimated from the sequence number) and the UE
// accepts the downlink (the restored downlink COUNT jumped past what it saw).
func TestRestoredUEWithLostCountsStillTalks(t *testing.T) {
	dir := t.TempDir()
	h1, g1 := persistHarness(t, dir)
	ue := h1.newUE(g1, "0000000024", 1)
	ue.register()
	awaitStored(t, dir, ue.guti.TMSI)
	stale, err := os.ReadFile(persistPath(dir, "", testGUAMI.AMFID.String()))
	if err != nil {
		t.Fatal(err)
	}
	// Three periodic registration updates in CM-CONNECTED: 6 messages each way the store will not have.
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	for i := 0; i < 3; i++ {
		ue.up(ue.protect(ue.registrationRequest(nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, gb),
			nas.SecurityHeaderTypeIntegrityProtectedAndCiphered))
		if m := ue.dl("DownlinkNASTransport"); m.RegistrationAccept == nil {
			t.Fatal("want Registration Accept")
		}
		ue.up(ue.registrationComplete())
		ue.dl("DownlinkNASTransport")
	}

	dir2 := t.TempDir()
	if err := os.WriteFile(persistPath(dir2, "", testGUAMI.AMFID.String()), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	h2, g2 := persistHarness(t, dir2)
	ue.g = g2
	ue.returnWithGUTI(2) // the UE checked the Accept's MAC and COUNT (testUE.decode)
	ue.up(ue.registrationComplete())
	if m := ue.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		t.Fatal("the AMF did not take the UE's Registration Complete")
	}
	if h2.peers.nextAuth != 0 {
		t.Fatal("the UE was authenticated again")
	}
}

// BenchmarkUEStoreWrite is the flusher's cost per UE record (encode and
// append), what write-behind takes off the procedures.
func BenchmarkUEStoreWrite(b *testing.B) {
	s, _, err := openUEStore(filepath.Join(b.TempDir(), "amf.ues"), time.Hour, 1<<20, discardLog)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	rec := testRecord(1)
	rec.Allowed = []models.Snssai{{Sst: 1, Sd: "010203"}}
	rec.TAIs, rec.LastTAI, rec.Capability, rec.PolicyID = []string{"20893-000001"}, "20893-000001", []byte{0xe0, 0xe0}, "0123456789abcdef"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := *rec
		r.TMSI = uint32(i%65536 + 1)
		s.save(&r)
		if i%64 == 63 {
			s.flush()
		}
	}
}

// An unreadable store does not keep the AMF down: it is set aside and the
// AMF starts with none of its UEs.
func TestUnreadableStoreIsSetAside(t *testing.T) {
	dir := t.TempDir()
	path := persistPath(dir, "", testGUAMI.AMFID.String())
	junk := []byte(`{"op":"hdr","format":"` + persistFormat + `"}` + "\nnot a record\n" + `{"op":"del","tmsi":1}` + "\n")
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	h, g := persistHarness(t, dir)
	if kept, err := os.ReadFile(path + ".unreadable"); err != nil || !bytes.Equal(kept, junk) {
		t.Fatalf("the unreadable store was not kept aside: %v", err)
	}
	ue := h.newUE(g, "0000000025", 1)
	ue.register()
	awaitStored(t, dir, ue.guti.TMSI)
}

// FuzzRestore: whatever the store file holds (a disk error, an edited
// file), the AMF either refuses it with an error or starts with the
// records that make sense; it never crashes.
func FuzzRestore(f *testing.F) {
	good, _ := json.Marshal(persistLine{Op: "put", UE: testRecord(3)})
	hdr := `{"op":"hdr","format":"` + persistFormat + `"}` + "\n"
	f.Add([]byte(hdr + string(good) + "\n" + `{"op":"tmsi","tmsi":4096}` + "\n"))
	f.Add([]byte(hdr + `{"op":"put","ue":{"supi":"imsi-1","tmsi":1,"kamf":"AAAA","ea":200,"ia":200}}` + "\n"))
	f.Add([]byte(hdr + `{"op":"del","tmsi":3}` + "\n" + `{"op":"put"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(persistPath(dir, "", testGUAMI.AMFID.String()), data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.DataDir = dir
		n := &NF{cfg: cfg, log: discardLog, guami: testGUAMI, opts: Options{Crypto: securityCrypto{}},
			ues: newUETable(), metrics: newMetrics(prometheus.NewRegistry())}
		if err := n.openPersist(); err != nil {
			return
		}
		defer n.closePersist()
		n.ues.allocTMSI()
	})
}

// A UE's PDU sessions whose SM contexts exist are in its record and come
// back with it, so the AMF can reach their SMFs after a restart; a
// session still being created has no context to reach and is left out.
func TestUERecordCarriesPDUSessions(t *testing.T) {
	ue := &ueContext{}
	slice := models.Snssai{Sst: 1, Sd: "010203"}
	ue.pdu.put(&PDUSession{ID: 5, SNSSAI: slice, DNN: "internet", SMFURI: "http://smf", ContextURI: "http://smf/nsmf-pdusession/v1/sm-contexts/5"})
	ue.pdu.put(&PDUSession{ID: 2, SNSSAI: slice, DNN: "internet", SMFURI: "http://smf", ContextURI: "http://smf/nsmf-pdusession/v1/sm-contexts/2"})
	ue.pdu.put(&PDUSession{ID: 7, SNSSAI: slice, DNN: "internet", SMFURI: "http://smf"}) // creating
	b, err := json.Marshal(ueRecord{PDUSessions: ue.storedSessions()})
	if err != nil {
		t.Fatal(err)
	}
	var rec ueRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	back := &ueContext{}
	back.RestoreSessions(rec.PDUSessions)
	got := back.Sessions()
	if len(got) != 2 || back.pdu.get(2) == nil || back.pdu.get(5) == nil || back.pdu.get(7) != nil {
		t.Fatalf("restored sessions %+v, want 2 and 5", got)
	}
	if s := back.pdu.get(5); s.ContextURI != "http://smf/nsmf-pdusession/v1/sm-contexts/5" || s.DNN != "internet" || s.SNSSAI != slice {
		t.Fatalf("session 5 came back as %+v", s)
	}
}
