package n2

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/ishidawataru/sctp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fakeSocket stands in for *sctp.SCTPConn. It models the pinned library's
// byte order (sctp_linux.go): SCTPWrite stores htonl(PPID) in the cmsg, so
// the PPID leaves in the big-endian encoding of the value given; recvPart
// hands back ntohl of the wire value, i.e. the number the peer meant.
type fakeSocket struct {
	wirePPIDs [][4]byte
	incoming  []fakeMsg
}

type fakeMsg struct {
	pdu  string
	info *sctp.SndRcvInfo
}

func (f *fakeSocket) SCTPWrite(b []byte, info *sctp.SndRcvInfo) (int, error) {
	var wire [4]byte
	binary.BigEndian.PutUint32(wire[:], info.PPID)
	f.wirePPIDs = append(f.wirePPIDs, wire)
	return len(b), nil
}

// recvPart hands out each message in pieces of at most len(b), MSG_EOR
// on the last, as the kernel does.
func (f *fakeSocket) recvPart(b []byte) (int, *sctp.SndRcvInfo, int, error) {
	if len(f.incoming) == 0 {
		return 0, nil, 0, io.EOF
	}
	m := &f.incoming[0]
	n := copy(b, m.pdu)
	m.pdu = m.pdu[n:]
	if len(m.pdu) > 0 {
		return n, m.info, 0, nil
	}
	f.incoming = f.incoming[1:]
	return n, m.info, msgEOR, nil
}

func (f *fakeSocket) Close() error         { return nil }
func (f *fakeSocket) LocalAddr() net.Addr  { return nil }
func (f *fakeSocket) RemoteAddr() net.Addr { return nil }

func discarded(t *testing.T, m *Metrics, reason string) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.discarded.WithLabelValues(reason).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

func TestKernelSendsPPID60OnTheWire(t *testing.T) {
	sock := &fakeSocket{}
	k := &kernelConn{c: sock, buf: make([]byte, 1024), streams: 2}
	if err := k.WriteMsg([]byte("ngap"), 1); err != nil {
		t.Fatal(err)
	}
	// TS 38.412 7: PPID 60, which the SCTP common header carries big-endian.
	if want := [4]byte{0, 0, 0, 60}; sock.wirePPIDs[0] != want {
		t.Fatalf("PPID on the wire % x, want % x", sock.wirePPIDs[0], want)
	}
}

func TestKernelDropsAndCountsDataThatIsNotNGAP(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	sock := &fakeSocket{incoming: []fakeMsg{
		{"m3ua", &sctp.SndRcvInfo{Stream: 1, PPID: 3}},
		{"swapped", &sctp.SndRcvInfo{Stream: 1, PPID: 0x3c000000}}, // a peer that swaps twice
		{"notification", nil},
		{"ngap", &sctp.SndRcvInfo{Stream: 1, PPID: PPIDNGAP}},
	}}
	k := &kernelConn{c: sock, buf: make([]byte, 1024), streams: 2, metrics: m}
	pdu, stream, err := k.ReadMsg()
	if err != nil || string(pdu) != "ngap" || stream != 1 {
		t.Fatalf("got %q on stream %d, %v; want the NGAP message only", pdu, stream, err)
	}
	if got := discarded(t, m, DiscardPPID); got != 2 {
		t.Fatalf("l25gc_n2_discarded_total{reason=ppid} = %v, want 2", got)
	}
}

// The kernel delivers a message larger than the read buffer in pieces, the
// last with MSG_EOR: they make one NGAP PDU; one over MaxMessageSize is
// dropped and counted, and the next message is read as usual.
func TestKernelJoinsPiecesAndDropsMessagesOverTheBound(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	ngap := &sctp.SndRcvInfo{Stream: 1, PPID: PPIDNGAP}
	big, huge := strings.Repeat("r", 5000), strings.Repeat("h", 9000)
	sock := &fakeSocket{incoming: []fakeMsg{{big, ngap}, {huge, ngap}, {"after", ngap}}}
	k := &kernelConn{c: sock, buf: make([]byte, 1024), maxMessage: 8000, streams: 2, metrics: m}
	for _, want := range []string{big, "after"} {
		pdu, stream, err := k.ReadMsg()
		if err != nil || string(pdu) != want || stream != 1 {
			t.Fatalf("got %d bytes on %d (%v), want %d", len(pdu), stream, err, len(want))
		}
	}
	if got := discarded(t, m, DiscardTooBig); got != 1 {
		t.Fatalf("%v messages counted too big, want 1", got)
	}
}
