package domain

import (
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// Parsers of text a user or a peer writes, and decoders of wire octets: none
// may panic, and whatever they accept must survive its own round trip.

func FuzzParsePLMN(f *testing.F) {
	for _, s := range []string{"20893", "310410", "2089", "20a93"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePLMN(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("%q read as %s", s, p)
		}
		b, err := p.ToNAS()
		if err != nil {
			t.Fatalf("%q: accepted but ToNAS: %v", s, err)
		}
		if back, err := PLMNFromNAS(b[:]); err != nil || back != p {
			t.Fatalf("%q: BCD round trip %+v, %v", s, back, err)
		}
	})
}

func FuzzParsePLMNFromNAS(f *testing.F) {
	f.Add([]byte{0x02, 0xF8, 0x39})
	f.Add([]byte{0x13, 0x00, 0x14})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := PLMNFromNAS(b)
		if err != nil {
			return
		}
		back, err := p.ToNAS()
		if err != nil || back != [3]byte(b[:3]) {
			t.Fatalf("%x read as %+v, back %x, %v", b, p, back, err)
		}
	})
}

func FuzzParseSNSSAI(f *testing.F) {
	for _, s := range []string{"1", "1/010203", "255/FFFFFF", "1/", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSNSSAI(s)
		if err != nil {
			return
		}
		if back, err := ParseSNSSAI(n.String()); err != nil || back != n {
			t.Fatalf("%q read as %+v, String %q reads %+v, %v", s, n, n.String(), back, err)
		}
	})
}

func FuzzParseSNSSAIFromNAS(f *testing.F) {
	f.Add([]byte{4, 1, 1, 2, 3, 1, 2})
	f.Add([]byte{8, 1, 1, 2, 3, 2, 4, 5, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := NSSAIFromNAS(b)
		if err != nil {
			return
		}
		enc, err := NSSAIToNAS(list)
		if err != nil {
			t.Fatalf("%x read as %+v but does not encode: %v", b, list, err)
		}
		again, err := NSSAIFromNAS(enc)
		if err != nil || len(again) != len(list) {
			t.Fatalf("%x: re-encoded %x reads %+v, %v", b, enc, again, err)
		}
		for i := range list {
			if again[i] != list[i] {
				t.Fatalf("%x: S-NSSAI %d %+v became %+v", b, i, list[i], again[i])
			}
		}
	})
}

func FuzzParseSNSSAIFromNGAP(f *testing.F) {
	f.Add([]byte{1}, []byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, sst, sd []byte, hasSD bool) {
		x := ngapType.SNSSAI{SST: ngapType.SST{Value: aper.OctetString(sst)}}
		if hasSD {
			x.SD = &ngapType.SD{Value: aper.OctetString(sd)}
		}
		s, err := SNSSAIFromNGAP(x)
		if err != nil {
			return
		}
		ng, err := s.ToNGAP()
		if err != nil {
			t.Fatalf("%+v does not encode: %v", s, err)
		}
		if back, err := SNSSAIFromNGAP(ng); err != nil || back != s {
			t.Fatalf("%+v NGAP round trip %+v, %v", s, back, err)
		}
	})
}

func FuzzParseTAI(f *testing.F) {
	for _, s := range []string{"20893-000001", "310410-abcdef", "20893-", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tai, err := ParseTAI(s)
		if err != nil {
			return
		}
		if back, err := ParseTAI(tai.String()); err != nil || back != tai {
			t.Fatalf("%q read as %+v, back %+v, %v", s, tai, back, err)
		}
		if _, err := tai.ToNGAP(); err != nil {
			t.Fatalf("%q accepted but ToNGAP: %v", s, err)
		}
	})
}

func FuzzParseTAIListFromNAS(f *testing.F) {
	f.Add([]byte{0x00, 0x02, 0xF8, 0x39, 0, 0, 1})
	f.Add([]byte{0x22, 0x02, 0xF8, 0x39, 0, 0, 5, 0x40, 0x00, 0xF1, 0x10, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		tais, err := TAIListFromNAS(b)
		if err != nil || len(tais) == 0 {
			return
		}
		enc, err := TAIListToNAS(tais)
		if err != nil {
			t.Fatalf("%x read as %v but does not encode: %v", b, tais, err)
		}
		if again, err := TAIListFromNAS(enc); err != nil || len(again) != len(tais) {
			t.Fatalf("%x: re-encoded %x reads %d TAIs, %v", b, enc, len(again), err)
		}
	})
}

func FuzzParseGUAMI(f *testing.F) {
	for _, s := range []string{"20893-cafe00", "208930-000040", "20893-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGUAMI(s)
		if err != nil {
			return
		}
		ng, err := g.ToNGAP()
		if err != nil {
			t.Fatalf("%q accepted but ToNGAP: %v", s, err)
		}
		if back, err := GUAMIFromNGAP(ng); err != nil || back != g {
			t.Fatalf("%q NGAP round trip %+v, %v", s, back, err)
		}
		m := g.ToModel()
		if back, err := GUAMIFromModel(&m); err != nil || back != g {
			t.Fatalf("%q model round trip %+v, %v", s, back, err)
		}
	})
}

func FuzzParseDNN(f *testing.F) {
	for _, s := range []string{"internet", "ims.mnc093.mcc208.gprs", "a..b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDNN(s)
		if err != nil {
			return
		}
		b, err := d.ToNAS()
		if err != nil {
			t.Fatalf("%q accepted but ToNAS: %v", s, err)
		}
		if back, err := DNNFromNAS(b); err != nil || back != d {
			t.Fatalf("%q NAS round trip %q, %v", s, back, err)
		}
	})
}

func FuzzParseDNNFromNAS(f *testing.F) {
	f.Add([]byte("\x08internet"))
	f.Add([]byte("\x03ims\x06mnc093"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DNNFromNAS(b)
		if err != nil {
			return
		}
		if enc, err := d.ToNAS(); err != nil || string(enc) != string(b) {
			t.Fatalf("%x read as %q, back %x, %v", b, d, enc, err)
		}
	})
}

func FuzzParseSUPI(f *testing.F) {
	for _, s := range []string{"imsi-208930000000001", "imsi-", "nai-x"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, mncLen int) {
		supi, err := ParseSUPI(s)
		if err != nil {
			return
		}
		imsi, err := supi.IMSI(mncLen)
		if err != nil {
			return
		}
		if imsi.SUPI() != supi || imsi.Validate() != nil {
			t.Fatalf("%q split with MNC length %d as %+v", s, mncLen, imsi)
		}
	})
}

// FuzzParseBitRate: bit rates come from SBI bodies and provisioning; a
// rate parsed writes back (String) to one that parses to the same value.
func FuzzParseBitRate(f *testing.F) {
	for _, s := range []string{"1 Gbps", "512.5 Kbps", "0 bps", "1e3 bps", "-1 Mbps", "99999999999999999999 Tbps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBitRate(s)
		if err != nil {
			return
		}
		again, err := ParseBitRate(b.String())
		if err != nil || again != b {
			t.Fatalf("%q = %d, written %q, read back %d, %v", s, uint64(b), b.String(), uint64(again), err)
		}
	})
}
