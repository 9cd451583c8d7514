package u_test

import (
	"errors"
	"testing"

	"github.com/l25gc/l25gc/upf/u"
)

func dropReason(err error) string {
	var d *u.DropError
	if errors.As(err, &d) {
		return d.Reason
	}
	return ""
}

func TestParserReadsGTPUWithPDUSessionContainer(t *testing.T) {
	inner := ueUDP("hello")
	frame := eth(gnbMAC, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, gtpu(0xff, 0xabcdef, 5, inner))))
	p, err := u.Parse(true, frame)
	if err != nil {
		t.Fatal(err)
	}
	if !p.GTP || p.GTPType != 0xff || p.TEID != 0xabcdef || p.QFI != 5 || p.InnerLen != len(inner) || p.InnerProto != 17 {
		t.Errorf("parsed %+v", p)
	}
	if string(frame[p.Inner:p.Inner+p.InnerLen]) != string(inner) {
		t.Errorf("inner packet at %d is not the T-PDU", p.Inner)
	}
}

func TestParserDropsBadFrames(t *testing.T) {
	ok := eth(gnbMAC, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, gtpu(0xff, 1, 5, ueUDP("x")))))
	cut := func(b []byte, n int) []byte { return append([]byte(nil), b[:n]...) }
	set := func(i int, v byte) []byte { b := append([]byte(nil), ok...); b[i] = v; return b }
	for name, tc := range map[string]struct {
		frame []byte
		want  string
	}{
		"short ethernet":       {ok[:10], "malformed"},
		"ipv6":                 {set(13, 0xdd), "not_ipv4"},
		"ip length past frame": {cut(ok, 40), "malformed"},
		"gtp version 2":        {set(42, 0x50), "malformed"},
		"gtp length past udp":  {set(45, 0xff), "malformed"},
		"ext header length 0":  {set(54, 0), "malformed"},
		"required unknown ext": {set(53, 0xc9), "malformed"},
		"fragment":             {set(20, 0x20), "fragment"},
		"inner ipv6":           {set(58, 0x60), "not_ipv4"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := u.Parse(true, tc.frame); dropReason(err) != tc.want {
				t.Errorf("got %v, want drop %q", err, tc.want)
			}
		})
	}
}

// FuzzParse drives UPF-U's C parser with frames from the network: it must
// never read past the frame (the race detector and ASan-free build still
// catch a wild inner offset through Parse's check) nor crash.
func FuzzParse(f *testing.F) {
	f.Add(true, eth(gnbMAC, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, gtpu(0xff, 1, 5, ueUDP("x"))))))
	f.Add(true, eth(gnbMAC, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0}))))
	f.Add(false, eth(dnMAC, dnMAC, 0x0800, ipv4(dnIP, ueIP, 6, 64, make([]byte, 20))))
	f.Add(true, arpFrame(1, gnbMAC, gnbIP, gnbMAC, upfN3.Addr()))
	f.Fuzz(func(t *testing.T, n3 bool, frame []byte) {
		p, err := u.Parse(n3, frame)
		if err != nil && dropReason(err) == "" {
			t.Fatal(err)
		}
		if err == nil && p.GTP && p.GTPType == 0xff && p.Inner < 14+20+8+8 {
			t.Fatalf("T-PDU at %d, inside the outer headers", p.Inner)
		}
	})
}
