package gtpu

import (
	"encoding/binary"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tshark dissects what this package encodes without a malformed packet
// or an error, and reads the TEID and the PDU Session Container's type and
// QFI as they were meant (DESIGN.md: every GTP-U message must dissect).
func TestTsharkDissectsWhatWeEncode(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	inner := ipv4UDP(netip.MustParseAddr("10.60.0.1"), netip.MustParseAddr("10.200.0.2"), []byte("payload"))
	dl := &Message{Type: TypeGPDU, TEID: 0x22, Payload: inner,
		Session: &PDUSessionInfo{PDUType: DLPDUSessionInformation, QFI: 9, RQI: true, HasPPI: true, PPI: 3}}
	msgs := []*Message{
		GPDU(0x11, ULPDUSessionInformation, 5, inner),
		dl,
		EchoRequest(7),
		EchoResponse(EchoRequest(7)),
		ErrorIndication(0x33, netip.MustParseAddr("10.100.0.2")),
	}
	var packets [][]byte
	for _, m := range msgs {
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		packets = append(packets, ipv4UDP(netip.MustParseAddr("10.100.0.2"), netip.MustParseAddr("10.100.0.1"), b))
	}
	path := filepath.Join(t.TempDir(), "n3.pcap")
	if err := os.WriteFile(path, pcap(packets), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tshark", "-r", path, "-T", "fields", "-E", "separator=;",
		"-e", "gtp.message", "-e", "gtp.teid", "-e", "gtp.ext_hdr.pdu_ses_con.pdu_type", "-e", "gtp.ext_hdr.pdu_ses_con.qos_flow_id",
		"-e", "_ws.malformed", "-e", "_ws.expert.severity")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"0xff;0x00000011;1;5;;", "0xff;0x00000022;0;9;;", "0x01;0x00000000;;;;", "0x02;0x00000000;;;;", "0x1a;0x00000000;;;;"}
	if len(lines) != len(want) {
		t.Fatalf("tshark read %d packets, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		// Expert infos of note or chat level are fine; errors and warnings
		// (severity ≥ 6291456 = warn) are not.
		got := lines[i]
		if !strings.HasPrefix(got, strings.TrimSuffix(w, ";")) || strings.Contains(got, "4194304") || strings.Contains(got, "8388608") || strings.Contains(got, "6291456") {
			t.Errorf("packet %d: tshark read %q, want %q", i+1, got, w)
		}
	}
}

// ipv4UDP is an IPv4/UDP packet (UDP checksum 0: none, RFC 768) with a
// correct header checksum; GTP-U uses port 2152 both ways.
func ipv4UDP(src, dst netip.Addr, payload []byte) []byte {
	p := make([]byte, 28+len(payload))
	p[0], p[8], p[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	s, d := src.As4(), dst.As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(p[i:]))
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	binary.BigEndian.PutUint16(p[10:], ^uint16(sum))
	binary.BigEndian.PutUint16(p[20:], Port)
	binary.BigEndian.PutUint16(p[22:], Port)
	binary.BigEndian.PutUint16(p[24:], uint16(8+len(payload)))
	copy(p[28:], payload)
	return p
}

// pcap is a capture file of raw IPv4 packets (link type 101, LINKTYPE_RAW).
func pcap(packets [][]byte) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], 65535)
	binary.LittleEndian.PutUint32(b[20:], 101)
	for i, p := range packets {
		rec := make([]byte, 16)
		binary.LittleEndian.PutUint32(rec[0:], uint32(1700000000+i))
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(p)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(p)))
		b = append(append(b, rec...), p...)
	}
	return b
}
