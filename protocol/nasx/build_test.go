package nasx

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/internal/fuzzseed"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzDecodeNAS from the builders")

// samples are real messages from the builders: the fuzz seed corpus.
func samples(t testing.TB) map[string][]byte {
	must := fuzzseed.Must(t)
	g := GUTI{GUAMI: testGUAMI(0), TMSI: 1}
	suci, _ := EncodeSUCI("suci-0-208-93-0000-0-0-0000000001")
	return map[string][]byte{
		"registration-accept": must(BuildRegistrationAccept(RegistrationAccept{GUTI: &g,
			TAIs: []domain.TAI{{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 1}}, Allowed: []models.Snssai{{Sst: 1, Sd: "010203"}}, T3512: time.Hour})),
		"registration-reject":    must(BuildRegistrationReject(CauseIllegalUE)),
		"authentication-request": must(BuildAuthenticationRequest(0, []byte{0, 0}, [16]byte{1}, [16]byte{2})),
		"authentication-reject":  must(BuildAuthenticationReject()),
		"security-mode-command": must(BuildSecurityModeCommand(SecurityModeCommand{IA: IA2, EA: EA2,
			ReplayedUECap: SecurityCapability{Raw: []byte{0xE0, 0xE0}}, IMEISVRequest: true})),
		"identity-request":             must(BuildIdentityRequest(IdentitySUCI)),
		"configuration-update-command": must(BuildConfigurationUpdateCommand("L25GC+", "L25GC")),
		"deregistration-accept":        must(BuildDeregistrationAccept()),
		"service-reject":               must(BuildServiceReject(CauseCongestion)),
		"status":                       must(BuildStatus(CauseMessageTypeNonExistent)),
		"dl-nas-transport-not-forwarded": must(BuildDLNASTransport(DLNASTransport{PayloadType: PayloadN1SMInformation,
			Payload: must(BuildPDUSessionEstablishmentRequest(1, 1)), PDUSessionID: 1, Cause: CausePayloadNotForwarded})),
		"registration-request-suci": append([]byte{0x7e, 0x00, 0x41, 0x79, 0x00, byte(len(suci))}, append(suci, 0x2e, 0x02, 0xe0, 0xe0)...),
	}
}

func TestBuildersDecodeBack(t *testing.T) {
	for name, b := range samples(t) {
		m, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "registration-accept" {
			a := m.RegistrationAccept
			if a == nil || a.GUTI5G == nil || a.AllowedNSSAI == nil || a.TAIList == nil || a.T3512Value == nil {
				t.Fatalf("registration accept lost IEs: %+v", a)
			}
			if a.RegistrationResult5GS.GetRegistrationResultValue5GS() != 1 {
				t.Fatal("registration result is not 3GPP access")
			}
		}
	}
	if *updateSeeds {
		fuzzseed.Write(t, filepath.Join("testdata", "fuzz", "FuzzDecodeNAS"), samples(t))
	}
}

func TestDecodeClassifiesErrors(t *testing.T) {
	cases := []struct {
		name  string
		in    []byte
		cause uint8
	}{
		{"unknown message type", []byte{0x7e, 0x00, 0x99}, CauseMessageTypeNonExistent},
		{"truncated registration request", []byte{0x7e, 0x00, nas.MsgTypeRegistrationRequest, 0x01}, CauseInvalidMandatoryInfo},
		{"too short", []byte{0x7e}, CauseInvalidMandatoryInfo},
		{"bad EPD", []byte{0x12, 0x00, 0x41}, CauseProtocolErrorUnspecified},
	}
	for _, c := range cases {
		_, err := Decode(c.in)
		var e *Error
		if !errors.As(err, &e) || e.Cause != c.cause {
			t.Fatalf("%s: err %v, want cause %d", c.name, err, c.cause)
		}
	}
}
