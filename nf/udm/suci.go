package udm

// The SIDF of TS 33.501 6.12.2: from the SUPI or SUCI of a request to the
// SUPI, deconcealing with the home network private keys (Annex C).

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// homeNetworkKeys turns the configured SUCI keys into the SIDF's key set,
// checking each private key by deriving its public key.
func homeNetworkKeys(cfg []config.SUCIKey) (security.HomeNetworkKeys, error) {
	keys := make(security.HomeNetworkKeys, 0, len(cfg))
	for _, c := range cfg {
		var scheme uint8
		switch c.Scheme {
		case "profile_a":
			scheme = security.SchemeProfileA
		case "profile_b":
			scheme = security.SchemeProfileB
		default:
			return nil, fmt.Errorf("SUCI key %d: scheme %q is not profile_a or profile_b", c.ID, c.Scheme)
		}
		priv, err := hex.DecodeString(c.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("SUCI key %d: private key: %w", c.ID, err)
		}
		k := security.HomeNetworkKey{ID: uint8(c.ID), Scheme: scheme, Private: priv}
		if _, err := k.PublicKey(); err != nil {
			return nil, fmt.Errorf("SUCI key %d (%s): %w", c.ID, c.Scheme, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func schemeName(s uint8) string {
	switch s {
	case security.SchemeNull:
		return "null"
	case security.SchemeProfileA:
		return "profile_a"
	case security.SchemeProfileB:
		return "profile_b"
	}
	return "scheme " + strconv.Itoa(int(s))
}

// suciParts are the fields of the SUCI of TS 29.503 6.1.6.2.2 / TS
// 23.003 28.7.3 for an IMSI-based SUPI: suci-0-<MCC>-<MNC>-<routing
// indicator>-<protection scheme id>-<home network public key id>-<scheme
// output>.
type suciParts struct {
	mcc, mnc, routing, scheme, keyID, output string
}

// parseSUCI splits id into its fields: MCC 3 digits, MNC 2-3, routing
// indicator 1-4, scheme id 1-2, key id 1-3, scheme output hex. It is the
// regular expression
// ^suci-0-([0-9]{3})-([0-9]{2,3})-([0-9]{1,4})-([0-9]{1,2})-([0-9]{1,3})-([0-9a-fA-F]+)$
// written out (the fuzz test holds the two equal): the UDM reads a SUCI on
// every registration, and the regexp engine was 4 % of its CPU.
func parseSUCI(id string) (suciParts, bool) {
	rest, ok := strings.CutPrefix(id, "suci-0-")
	if !ok {
		return suciParts{}, false
	}
	var f [6]string
	for i := range 5 {
		var found bool
		f[i], rest, found = strings.Cut(rest, "-")
		if !found {
			return suciParts{}, false
		}
	}
	f[5] = rest
	if !digits(f[0], 3, 3) || !digits(f[1], 2, 3) || !digits(f[2], 1, 4) ||
		!digits(f[3], 1, 2) || !digits(f[4], 1, 3) || !hexDigits(f[5]) {
		return suciParts{}, false
	}
	return suciParts{mcc: f[0], mnc: f[1], routing: f[2], scheme: f[3], keyID: f[4], output: f[5]}, true
}

// digits says whether s is lo to hi ASCII digits.
func digits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hexDigits says whether s is one or more hexadecimal digits.
func hexDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// resolveSUPI returns the SUPI a supiOrSuci path element stands for. A
// SUCI that cannot be deconcealed is a *sbi.Reject: 501 for a protection
// scheme the UDM does not run (TS 29.503 6.3.3.2.3.1), 403
// AUTHENTICATION_REJECTED when no configured key has the SUCI's scheme and
// key id or its MAC tag does not verify (concealed for another home
// network key), 400 when it is not a SUPI or SUCI at all.
func resolveSUPI(id string, keys security.HomeNetworkKeys) (string, error) {
	if _, err := domain.ParseSUPI(id); err == nil {
		return id, nil
	}
	if !strings.HasPrefix(id, "suci-") {
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "%q is neither an IMSI SUPI nor a SUCI", id)
	}
	m, ok := parseSUCI(id)
	if !ok {
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect,
			"SUCI %q is not suci-0-<mcc>-<mnc>-<routing indicator>-<scheme>-<key id>-<output> (only IMSI-based SUCIs are supported)", id)
	}
	mcc, mnc, output := m.mcc, m.mnc, m.output
	scheme, _ := strconv.Atoi(m.scheme)
	keyID, _ := strconv.Atoi(m.keyID)
	msin, err := deconceal(scheme, keyID, output, keys)
	if err != nil {
		return "", err
	}
	imsi := domain.IMSI{PLMN: domain.PLMN{MCC: mcc, MNC: mnc}, MSIN: msin}
	if err := imsi.Validate(); err != nil {
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "SUCI %q: %v", id, err)
	}
	return imsi.SUPI().String(), nil
}

// deconceal returns the MSIN of a scheme output (TS 33.501 C.3.3).
func deconceal(scheme, keyID int, output string, keys security.HomeNetworkKeys) (string, error) {
	switch {
	case scheme == security.SchemeNull:
		// The null scheme output is the MSIN itself, as digits (TS 23.003
		// 28.7.3). An MSIN is 9 or 10 digits (TS 23.003 2.2); shorter ones
		// are allowed for test networks.
		if !digits(output, 5, 10) {
			return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "null-scheme output %q is not an MSIN", output)
		}
		return output, nil
	case scheme != security.SchemeProfileA && scheme != security.SchemeProfileB:
		return "", sbi.Rejectf(http.StatusNotImplemented, sbi.CauseUnsupportedProtectionScheme, "protection scheme %d", scheme)
	case keyID > 255:
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "home network public key id %d", keyID)
	}
	raw, err := hex.DecodeString(output)
	if err != nil {
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "scheme output is not hex: %v", err)
	}
	msin, err := security.DeconcealSUCI(uint8(scheme), uint8(keyID), raw, keys)
	switch {
	case errors.Is(err, security.ErrUnknownHNKey):
		return "", sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected,
			"no home network key with id %d for %s is configured (udm.suci_keys)", keyID, schemeName(uint8(scheme)))
	case errors.Is(err, security.ErrSUCIMAC):
		return "", sbi.Rejectf(http.StatusForbidden, sbi.CauseAuthenticationRejected,
			"SUCI MAC tag does not verify with home network key %d (%s)", keyID, schemeName(uint8(scheme)))
	case err != nil:
		return "", sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "SUCI scheme output: %v", err)
	}
	return msin, nil
}
