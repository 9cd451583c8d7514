package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// TS 35.208 test set 1: OPc and every output of f1..f5*.
func TestMilenageTS35208TestSet1(t *testing.T) {
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
	got := map[string][]byte{
		"f1_mac_a": macA, "f1star_mac_s": macS, "f2_res": res, "f3_ck": ck,
		"f4_ik": ik, "f5_ak": ak, "f5star_ak": akStar,
	}
	for name, value := range got {
		if !bytes.Equal(value, unhex(t, v[name])) {
			t.Errorf("%s = %x, want %s", name, value, v[name])
		}
	}
}

// The same set through the AKA helpers: the AV's AUTN carries SQN xor AK,
// AMF and MAC-A; AUTS carries SQN xor AK* and f1* with AMF 0000.
func TestAKAHelpersOnTS35208TestSet1(t *testing.T) {
	var v map[string]string
	loadVectors(t, "milenage.json", &v)
	k, opc, rnd := unhex(t, v["k"]), unhex(t, v["opc"]), unhex(t, v["rand"])
	sqn, amf := unhex(t, v["sqn"]), unhex(t, v["amf"])

	av, err := GenerateAuthVector(k, opc, sqn, amf, rnd, ServingNetworkName("208", "93"))
	if err != nil {
		t.Fatal(err)
	}
	wantAUTN := concat(xorBytes(sqn, unhex(t, v["f5_ak"])), amf, unhex(t, v["f1_mac_a"]))
	if !bytes.Equal(av.AUTN, wantAUTN) || !bytes.Equal(av.XRES, unhex(t, v["f2_res"])) ||
		!bytes.Equal(av.CK, unhex(t, v["f3_ck"])) || !bytes.Equal(av.IK, unhex(t, v["f4_ik"])) {
		t.Fatalf("AV = %+v, want AUTN %x", av, wantAUTN)
	}

	auts, err := BuildAUTS(k, opc, rnd, sqn)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMilenage(k, opc)
	_, macS, _ := m.F1(rnd, sqn, []byte{0, 0})
	if want := concat(xorBytes(sqn, unhex(t, v["f5star_ak"])), macS); !bytes.Equal(auts, want) {
		t.Fatalf("AUTS = %x, want %x", auts, want)
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

// TS 33.501 C.4.3 (Profile A) and C.4.4 (Profile B), IMSI case: every
// intermediate value, then the scheme output in both directions.
func TestSUCITS33501AnnexC4(t *testing.T) {
	var all map[string]json.RawMessage
	loadVectors(t, "suci.json", &all)
	for _, tc := range []struct {
		name   string
		scheme uint8
	}{{"profile_a", SchemeProfileA}, {"profile_b", SchemeProfileB}} {
		t.Run(tc.name, func(t *testing.T) {
			var v eciesVector
			if err := json.Unmarshal(all[tc.name], &v); err != nil {
				t.Fatal(err)
			}
			checkECIESIntermediates(t, tc.scheme, v)
			checkSchemeOutput(t, tc.scheme, v)
		})
	}
}

func checkECIESIntermediates(t *testing.T, scheme uint8, v eciesVector) {
	t.Helper()
	hnPublic, err := PublicKeyFromPrivate(scheme, unhex(t, v.HomePrivateKey))
	if err != nil || !bytes.Equal(hnPublic, unhex(t, v.HomePublicKey)) {
		t.Fatalf("home network public key = %x, %v; want %s", hnPublic, err, v.HomePublicKey)
	}
	ephPublic, err := PublicKeyFromPrivate(scheme, unhex(t, v.EphPrivateKey))
	if err != nil || !bytes.Equal(ephPublic, unhex(t, v.EphPublicKey)) {
		t.Fatalf("ephemeral public key = %x, %v; want %s", ephPublic, err, v.EphPublicKey)
	}
	// Both ends reach the same shared secret.
	for _, pair := range [][2]string{{v.EphPrivateKey, v.HomePublicKey}, {v.HomePrivateKey, v.EphPublicKey}} {
		private, _ := parsePrivateKey(scheme, unhex(t, pair[0]))
		public, err := parsePublicKey(scheme, unhex(t, pair[1]))
		if err != nil {
			t.Fatal(err)
		}
		shared, err := private.ECDH(public)
		if err != nil || !bytes.Equal(shared, unhex(t, v.SharedSecret)) {
			t.Fatalf("shared secret = %x, %v; want %s", shared, err, v.SharedSecret)
		}
	}
	keys := deriveECIESKeys(unhex(t, v.SharedSecret), unhex(t, v.EphPublicKey))
	if !bytes.Equal(keys.encKey, unhex(t, v.EncKey)) || !bytes.Equal(keys.icb, unhex(t, v.ICB)) {
		t.Errorf("enc key %x, ICB %x; want %s, %s", keys.encKey, keys.icb, v.EncKey, v.ICB)
	}
	if v.MACKey != "" && !bytes.Equal(keys.macKey, unhex(t, v.MACKey)) {
		t.Errorf("MAC key %x, want %s", keys.macKey, v.MACKey)
	}
	if ct, _ := keys.crypt(unhex(t, v.Plaintext)); !bytes.Equal(ct, unhex(t, v.Ciphertext)) {
		t.Errorf("ciphertext %x, want %s", ct, v.Ciphertext)
	}
	if tag := keys.tag(unhex(t, v.Ciphertext)); !bytes.Equal(tag, unhex(t, v.MACTag)) {
		t.Errorf("MAC tag %x, want %s", tag, v.MACTag)
	}
}

func checkSchemeOutput(t *testing.T, scheme uint8, v eciesVector) {
	t.Helper()
	want := concat(unhex(t, v.EphPublicKey), unhex(t, v.Ciphertext), unhex(t, v.MACTag))
	msin, err := BCDToMSIN(unhex(t, v.Plaintext))
	if err != nil {
		t.Fatal(err)
	}
	// UE side, with the published ephemeral key.
	out, err := ConcealSUCI(scheme, unhex(t, v.HomePublicKey), msin, unhex(t, v.EphPrivateKey))
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("scheme output = %x, %v; want %x", out, err, want)
	}
	// Home network side.
	keys := HomeNetworkKeys{{ID: 1, Scheme: scheme, Private: unhex(t, v.HomePrivateKey)}}
	got, err := DeconcealSUCI(scheme, 1, want, keys)
	if err != nil || got != msin {
		t.Fatalf("deconcealed MSIN %q, %v; want %q", got, err, msin)
	}
	plain, err := DecryptSchemeOutput(keys[0], want)
	if err != nil || !bytes.Equal(plain, unhex(t, v.Plaintext)) {
		t.Fatalf("scheme input %x, %v; want %s", plain, err, v.Plaintext)
	}
	tampered := bytes.Clone(want)
	tampered[len(tampered)-eciesTagLen-1] ^= 0x01 // last ciphertext byte
	if _, err := DeconcealSUCI(scheme, 1, tampered, keys); !errors.Is(err, ErrSUCIMAC) {
		t.Fatalf("tampered ciphertext: err = %v, want ErrSUCIMAC", err)
	}
}
