package security

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

func loadVectors(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile("../../shared/testvectors/" + name)
	if err != nil {
		t.Fatalf("test vectors: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector %q: %v", s, err)
	}
	return b
}

func TestMilenageTS35208Set1(t *testing.T) {
	var v map[string]string
	loadVectors(t, "milenage.json", &v)
	k, rnd, sqn, amf := unhex(t, v["k"]), unhex(t, v["rand"]), unhex(t, v["sqn"]), unhex(t, v["amf"])
	opc, err := DeriveOPc(k, unhex(t, v["op"]))
	if err != nil || !bytes.Equal(opc, unhex(t, v["opc"])) {
		t.Fatalf("OPc = %x, %v; want %s", opc, err, v["opc"])
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		t.Fatal(err)
	}
	macA, macS, err := m.F1(rnd, sqn, amf)
	if err != nil {
		t.Fatal(err)
	}
	res, ck, ik, ak, akStar, err := m.F2345(rnd)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{
		"f1_mac_a": macA, "f1star_mac_s": macS, "f2_res": res, "f3_ck": ck, "f4_ik": ik, "f5_ak": ak, "f5star_ak": akStar,
	} {
		if !bytes.Equal(got, unhex(t, v[name])) {
			t.Errorf("%s = %x, want %s", name, got, v[name])
		}
	}
}

type eciesVector struct {
	HomePrivateKey string `json:"home_private_key"`
	HomePublicKey  string `json:"home_public_key"`
	EphPrivateKey  string `json:"eph_private_key"`
	EphPublicKey   string `json:"eph_public_key"`
	SharedSecret   string `json:"shared_secret"`
	EncKey         string `json:"enc_key"`
	ICB            string `json:"icb"`
	MACKey         string `json:"mac_key"`
	Plaintext      string `json:"plaintext"`
	Ciphertext     string `json:"ciphertext"`
	MACTag         string `json:"mac_tag"`
}

func TestSUCIProfilesTS33501AnnexC4(t *testing.T) {
	var v map[string]json.RawMessage
	loadVectors(t, "suci.json", &v)
	for _, tc := range []struct {
		name   string
		scheme int
	}{{"profile_a", SchemeProfileA}, {"profile_b", SchemeProfileB}} {
		t.Run(tc.name, func(t *testing.T) {
			var vec eciesVector
			if err := json.Unmarshal(v[tc.name], &vec); err != nil {
				t.Fatal(err)
			}
			key := HomeNetworkKey{ID: 1, Scheme: tc.scheme, Private: unhex(t, vec.HomePrivateKey)}
			pub, err := key.PublicKey()
			if err != nil || !bytes.Equal(pub, unhex(t, vec.HomePublicKey)) {
				t.Fatalf("home public key = %x, %v; want %s", pub, err, vec.HomePublicKey)
			}
			// The intermediate values, from the ephemeral side.
			eph, _ := privateKey(tc.scheme, unhex(t, vec.EphPrivateKey))
			peer, err := publicKey(tc.scheme, pub)
			if err != nil {
				t.Fatal(err)
			}
			shared, _ := eph.ECDH(peer)
			if !bytes.Equal(shared, unhex(t, vec.SharedSecret)) {
				t.Errorf("shared secret = %x, want %s", shared, vec.SharedSecret)
			}
			encKey, icb, macKey := eciesKeys(shared, unhex(t, vec.EphPublicKey))
			if !bytes.Equal(encKey, unhex(t, vec.EncKey)) || !bytes.Equal(icb, unhex(t, vec.ICB)) {
				t.Errorf("enc key %x icb %x, want %s %s", encKey, icb, vec.EncKey, vec.ICB)
			}
			if vec.MACKey != "" && !bytes.Equal(macKey, unhex(t, vec.MACKey)) {
				t.Errorf("mac key %x, want %s", macKey, vec.MACKey)
			}
			// UE side: the whole scheme output.
			out, err := ConcealSUCI(tc.scheme, pub, unhex(t, vec.Plaintext), unhex(t, vec.EphPrivateKey))
			if err != nil {
				t.Fatal(err)
			}
			want := append(append(unhex(t, vec.EphPublicKey), unhex(t, vec.Ciphertext)...), unhex(t, vec.MACTag)...)
			if !bytes.Equal(out, want) {
				t.Fatalf("scheme output = %x, want %x", out, want)
			}
			// Home network side.
			plain, err := DeconcealSUCI(key, want)
			if err != nil || !bytes.Equal(plain, unhex(t, vec.Plaintext)) {
				t.Fatalf("deconcealed %x, %v; want %s", plain, err, vec.Plaintext)
			}
			tampered := bytes.Clone(want)
			tampered[len(tampered)-10] ^= 1
			if _, err := DeconcealSUCI(key, tampered); err != ErrSUCIMAC {
				t.Fatalf("tampered ciphertext: err = %v, want ErrSUCIMAC", err)
			}
		})
	}
}

func TestMSINBCD(t *testing.T) {
	b, err := MSINToBCD("0000000001")
	if err != nil || !bytes.Equal(b, []byte{0, 0, 0, 0, 0x10}) {
		t.Fatalf("even MSIN: %x %v", b, err)
	}
	b, _ = MSINToBCD("123")
	if !bytes.Equal(b, []byte{0x21, 0xF3}) {
		t.Fatalf("odd MSIN padded: %x", b)
	}
	if s, err := BCDToMSIN([]byte{0x21, 0xF3}); err != nil || s != "123" {
		t.Fatalf("decode: %q %v", s, err)
	}
	if _, err := BCDToMSIN([]byte{0xFA}); err == nil {
		t.Fatal("bad digit accepted")
	}
	if _, err := MSINToBCD("12a"); err == nil {
		t.Fatal("letter accepted")
	}
}
