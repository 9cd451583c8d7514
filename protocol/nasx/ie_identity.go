package nasx

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/l25gc/l25gc/domain"
)

// IdentityType is the type of a 5GS mobile identity (TS 24.501 9.11.3.4).
type IdentityType uint8

const (
	IdentityNone   IdentityType = 0
	IdentitySUCI   IdentityType = 1
	IdentityGUTI   IdentityType = 2
	IdentityIMEI   IdentityType = 3
	IdentitySTMSI  IdentityType = 4
	IdentityIMEISV IdentityType = 5
	IdentityMAC    IdentityType = 6
	IdentityEUI64  IdentityType = 7
)

func (t IdentityType) String() string {
	names := [...]string{"no-identity", "SUCI", "5G-GUTI", "IMEI", "5G-S-TMSI", "IMEISV", "MAC", "EUI-64"}
	if int(t) < len(names) {
		return names[t]
	}
	return "identity-" + strconv.Itoa(int(t))
}

// GUTI is a 5G-GUTI: GUAMI plus 5G-TMSI (TS 23.003 2.10.1).
type GUTI struct {
	GUAMI domain.GUAMI
	TMSI  uint32
}

// STMSI is the 5G-S-TMSI: AMF Set ID, AMF Pointer, 5G-TMSI (TS 23.003 2.11).
type STMSI struct {
	SetID   uint16
	Pointer uint8
	TMSI    uint32
}

// STMSI is the short form of the GUTI.
func (g GUTI) STMSI() STMSI {
	return STMSI{SetID: g.GUAMI.AMFID.SetID, Pointer: g.GUAMI.AMFID.Pointer, TMSI: g.TMSI}
}

// Identity is a decoded 5GS mobile identity; only the field of Type is set.
type Identity struct {
	Type  IdentityType
	SUCI  string // suci-0-mcc-mnc-routing-scheme-keyid-output (TS 23.003 28.7.3)
	GUTI  GUTI
	STMSI STMSI
	PEI   string // imei-… or imeisv-… (TS 23.003 28.9)
}

var errShort = errors.New("mobile identity too short")

// ParseMobileIdentity decodes the value part of a 5GS mobile identity IE
// (TS 24.501 9.11.3.4, figures 9.11.3.4.1 ff.).
func ParseMobileIdentity(b []byte) (Identity, error) {
	if len(b) < 1 {
		return Identity{}, errShort
	}
	t := IdentityType(b[0] & 0x07)
	id := Identity{Type: t}
	var err error
	switch t {
	case IdentityNone:
	case IdentitySUCI:
		id.SUCI, err = parseSUCI(b)
	case IdentityGUTI:
		id.GUTI, err = parseGUTI(b)
	case IdentitySTMSI:
		id.STMSI, err = parseSTMSI(b)
	case IdentityIMEI, IdentityIMEISV:
		id.PEI, err = parsePEI(b, t)
	default:
		err = fmt.Errorf("mobile identity type %d not supported", t)
	}
	return id, err
}

// parseSUCI renders a SUCI as the string of TS 29.503 6.1.6.3.2 / TS 23.003
// 28.7.3. The null scheme output is the MSIN in digits; other schemes' output
// is hex (ECC ephemeral public key || ciphertext || MAC tag).
func parseSUCI(b []byte) (string, error) {
	supiFormat := (b[0] >> 4) & 0x07
	if supiFormat != 0 {
		return "", fmt.Errorf("SUCI SUPI format %d (NAI) not supported", supiFormat)
	}
	if len(b) < 9 {
		return "", errShort
	}
	plmn, err := domain.PLMNFromNAS(b[1:4])
	if err != nil {
		return "", err
	}
	ri, err := bcdDigits(b[4:6])
	if err != nil || ri == "" {
		return "", fmt.Errorf("SUCI routing indicator %x invalid", b[4:6])
	}
	scheme := b[6] & 0x0F
	keyID := b[7]
	out := b[8:]
	var output string
	if scheme == 0 {
		if output, err = bcdDigits(out); err != nil || output == "" {
			return "", fmt.Errorf("SUCI null-scheme MSIN %x invalid", out)
		}
	} else {
		output = hex.EncodeToString(out)
	}
	return fmt.Sprintf("suci-0-%s-%s-%s-%d-%d-%s", plmn.MCC, plmn.MNC, ri, scheme, keyID, output), nil
}

// EncodeSUCI is the inverse of the SUCI string form: the mobile identity
// value octets (for the UE side, and to build test input).
func EncodeSUCI(suci string) ([]byte, error) {
	f := strings.Split(suci, "-")
	if len(f) != 8 || f[0] != "suci" || f[1] != "0" {
		return nil, fmt.Errorf("SUCI %q: want suci-0-mcc-mnc-routing-scheme-keyid-output", suci)
	}
	plmn, err := domain.PLMN{MCC: f[2], MNC: f[3]}.ToNAS()
	if err != nil {
		return nil, fmt.Errorf("SUCI %q: %w", suci, err)
	}
	ri, err := encodeBCD(f[4])
	if err != nil || len(f[4]) > 4 {
		return nil, fmt.Errorf("SUCI %q: routing indicator", suci)
	}
	ri = append(ri, 0xFF)[:2] // unused digits are F (TS 24.501 9.11.3.4)
	scheme, err1 := strconv.ParseUint(f[5], 10, 4)
	keyID, err2 := strconv.ParseUint(f[6], 10, 8)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("SUCI %q: scheme or key id", suci)
	}
	var out []byte
	if scheme == 0 {
		out, err = encodeBCD(f[7])
	} else {
		out, err = hex.DecodeString(f[7])
	}
	if err != nil {
		return nil, fmt.Errorf("SUCI %q: scheme output: %w", suci, err)
	}
	b := append([]byte{byte(IdentitySUCI)}, plmn[:]...)
	b = append(b, ri...)
	b = append(b, byte(scheme), byte(keyID))
	return append(b, out...), nil
}

// NullSchemeSUPI gives the SUPI (imsi-…) a null-scheme SUCI conceals in
// clear (TS 33.501 6.12.2): its MCC, MNC and MSIN (TS 23.003 2.2B); ok is
// false for other schemes and for parts that make no IMSI.
func NullSchemeSUPI(suci string) (string, bool) {
	f := strings.Split(suci, "-")
	if len(f) != 8 || f[5] != "0" {
		return "", false
	}
	imsi := domain.IMSI{PLMN: domain.PLMN{MCC: f[2], MNC: f[3]}, MSIN: f[7]}
	if imsi.Validate() != nil {
		return "", false
	}
	return imsi.SUPI().String(), true
}

func parseGUTI(b []byte) (GUTI, error) {
	if len(b) < 11 {
		return GUTI{}, errShort
	}
	g, err := domain.GUAMIFromNAS(b[1:7])
	if err != nil {
		return GUTI{}, err
	}
	return GUTI{GUAMI: g, TMSI: binary.BigEndian.Uint32(b[7:11])}, nil
}

// EncodeGUTI gives the 11 value octets of a 5G-GUTI mobile identity
// (TS 24.501 figure 9.11.3.4.1).
func EncodeGUTI(g GUTI) ([]byte, error) {
	guami, err := g.GUAMI.ToNAS()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 11)
	b[0] = 0xF0 | byte(IdentityGUTI)
	copy(b[1:7], guami)
	binary.BigEndian.PutUint32(b[7:11], g.TMSI)
	return b, nil
}

func parseSTMSI(b []byte) (STMSI, error) {
	if len(b) < 7 {
		return STMSI{}, errShort
	}
	sp := binary.BigEndian.Uint16(b[1:3])
	return STMSI{SetID: sp >> 6, Pointer: uint8(sp & 0x3F), TMSI: binary.BigEndian.Uint32(b[3:7])}, nil
}

// EncodeSTMSI gives the 7 value octets of a 5G-S-TMSI mobile identity
// (TS 24.501 figure 9.11.3.4.5).
func EncodeSTMSI(s STMSI) []byte {
	b := make([]byte, 7)
	b[0] = 0xF0 | byte(IdentitySTMSI)
	binary.BigEndian.PutUint16(b[1:3], s.SetID<<6|uint16(s.Pointer&0x3F))
	binary.BigEndian.PutUint32(b[3:7], s.TMSI)
	return b
}

// EncodeIMEISV encodes a 16-digit IMEISV as a 5GS mobile identity.
func EncodeIMEISV(imeisv string) ([]byte, error) { return EncodePEI(IdentityIMEISV, imeisv) }

// EncodePEI encodes an IMEI (15 digits) or IMEISV (16 digits) as a 5GS
// mobile identity (TS 24.501 figure 9.11.3.4.3): digit 1 beside the
// odd/even bit and the type, then the other digits in BCD.
func EncodePEI(t IdentityType, pei string) ([]byte, error) {
	want := map[IdentityType]int{IdentityIMEI: 15, IdentityIMEISV: 16}[t]
	if want == 0 {
		return nil, fmt.Errorf("PEI of identity type %s", t)
	}
	if len(pei) != want || !digits(pei) {
		return nil, fmt.Errorf("%s %q: want %d digits", t, pei, want)
	}
	rest, err := encodeBCD(pei[1:])
	if err != nil {
		return nil, err
	}
	odd := byte(len(pei)%2) << 3
	return append([]byte{(pei[0]-'0')<<4 | odd | byte(t)}, rest...), nil
}

// parsePEI decodes an IMEI/IMEISV: the first digit sits in the high nibble
// of octet 1, next to the odd/even bit (TS 24.501 figure 9.11.3.4.3).
func parsePEI(b []byte, t IdentityType) (string, error) {
	rest, err := bcdDigits(b[1:])
	if err != nil {
		return "", err
	}
	d := b[0] >> 4
	if d > 9 {
		return "", fmt.Errorf("PEI first digit %X", d)
	}
	s := string('0'+d) + rest
	if t == IdentityIMEISV {
		return "imeisv-" + s, nil
	}
	return "imei-" + s, nil
}
