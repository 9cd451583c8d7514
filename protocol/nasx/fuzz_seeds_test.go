package nasx

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/internal/fuzzseed"
	"github.com/l25gc/l25gc/security"
)

// uplinkSamples are the 5GMM messages a UE sends the AMF, from the UE-side
// builders (ue_build.go), protected by security.NASContext where the AMF
// receives them protected: seeds that take the fuzzer into the AMF's uplink
// parsing rather than only the downlink messages of samples.
func uplinkSamples(t testing.TB) map[string][]byte {
	must := fuzzseed.Must(t)
	suci := must(EncodeSUCI("suci-0-208-93-0000-0-0-0000000001"))
	guti := must(EncodeGUTI(GUTI{GUAMI: testGUAMI(1), TMSI: 7}))
	caps := []byte{0xE0, 0xE0}
	requested := []models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 1, Sd: "112233"}}
	full := must(BuildRegistrationRequest(RegistrationRequest{Type: nasMessage.RegistrationType5GSInitialRegistration,
		NgKSI: 7, Identity: suci, SecurityCaps: caps, Requested: requested}))
	byGUTI := must(BuildRegistrationRequest(RegistrationRequest{Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating,
		NgKSI: 1, Identity: guti, SecurityCaps: caps, Requested: requested}))
	smc := must(BuildSecurityModeComplete(full))
	// The UE's context after authentication; NEA0 leaves the inner message
	// readable behind the security header, NEA2 does not.
	kamf := bytes.Repeat([]byte{0x42}, 32)
	clear := security.NewNASContext(kamf, security.NEA0, security.NIA2, security.Uplink)
	ciphered := security.NewNASContext(kamf, security.NEA2, security.NIA2, security.Uplink)
	return map[string][]byte{
		"registration-request-suci-built":     must(BuildRegistrationRequest(RegistrationRequest{Type: nasMessage.RegistrationType5GSInitialRegistration, NgKSI: 7, Identity: suci, SecurityCaps: caps, Cleartext: true})),
		"registration-request-guti":           byGUTI,
		"registration-request-guti-protected": must(clear.Protect(byGUTI, security.IntegrityProtected)), // TS 24.501 4.4.6
		"identity-response-suci":              must(BuildIdentityResponse(suci)),
		"authentication-response":             must(BuildAuthenticationResponse(bytes.Repeat([]byte{0x5A}, 16))),
		"authentication-failure-mac":          must(BuildAuthenticationFailure(CauseMACFailure, nil)),
		"authentication-failure-synch":        must(BuildAuthenticationFailure(CauseSynchFailure, bytes.Repeat([]byte{0xA5}, 14))),
		"security-mode-complete":              smc,
		"security-mode-complete-imeisv":       testSecurityModeCompleteWithIMEISV(t, "4370816125816151", full),
		"security-mode-complete-protected":    must(clear.Protect(smc, security.IntegrityProtectedCipheredNewCtx)),
		"security-mode-reject":                must(BuildSecurityModeReject(CauseUESecurityCapMismatch)),
		"registration-complete":               must(BuildRegistrationComplete()),
		"registration-complete-ciphered":      must(ciphered.Protect(must(BuildRegistrationComplete()), security.IntegrityProtectedAndCiphered)),
		"configuration-update-complete":       must(BuildConfigurationUpdateComplete()),
		"deregistration-request":              must(BuildDeregistrationRequest(false, 1, guti)),
		"deregistration-request-switch-off":   must(BuildDeregistrationRequest(true, 1, guti)),
		"service-request-mt": must(BuildServiceRequest(ServiceRequest{ServiceType: ServiceTypeMobileTerminated, NgKSI: 1,
			STMSI: GUTI{GUAMI: testGUAMI(1), TMSI: 7}.STMSI(), UplinkDataStatus: psis(1), PDUSessionStatus: psis(1, 2)})),
		"status-from-ue": must(BuildStatus(CauseMessageNotCompatibleWithState)),
		"ul-nas-transport-pdu-session": must(BuildULNASTransport(ULNASTransport{PayloadType: PayloadN1SMInformation,
			Payload: must(BuildPDUSessionEstablishmentRequest(1, 1)), PDUSessionID: 1, RequestType: RequestInitial, DNN: "internet"})),
	}
}

// testSecurityModeCompleteWithIMEISV is Security Mode Complete with the
// IMEISV the AMF asks for (TS 24.501 8.2.26.2).
func testSecurityModeCompleteWithIMEISV(t testing.TB, imeisv string, container []byte) []byte {
	b, err := BuildSecurityModeCompleteWithIMEISV(container, imeisv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The uplink seeds decode (behind the security header when not ciphered)
// and carry the IEs the AMF reads; -update-seeds writes them to the corpus.
func TestUplinkSeedsReachTheParsers(t *testing.T) {
	for name, b := range uplinkSamples(t) {
		plain := b
		if h, err := PeekHeader(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		} else if h.Protected() {
			if name == "registration-complete-ciphered" {
				continue
			}
			plain = b[7:]
		}
		m, err := Decode(plain)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "registration-request-guti", "registration-request-guti-protected":
			id, err := ParseMobileIdentity(m.RegistrationRequest.MobileIdentity5GS.Buffer)
			if err != nil || id.Type != IdentityGUTI || id.GUTI.TMSI != 7 || m.RegistrationRequest.RequestedNSSAI == nil {
				t.Fatalf("%s: identity %+v, %v", name, id, err)
			}
		case "security-mode-complete-imeisv":
			c := m.SecurityModeComplete
			id, err := ParseMobileIdentity(c.IMEISV.Octet[:c.IMEISV.GetLen()])
			if err != nil || id.PEI != "imeisv-4370816125816151" || c.NASMessageContainer == nil {
				t.Fatalf("%s: PEI %q, %v", name, id.PEI, err)
			}
		case "deregistration-request-switch-off":
			if m.DeregistrationRequestUEOriginatingDeregistration.NgksiAndDeregistrationType.GetSwitchOff() != 1 {
				t.Fatalf("%s: not switch-off", name)
			}
		}
	}
	if *updateSeeds {
		fuzzseed.Write(t, filepath.Join("testdata", "fuzz", "FuzzDecodeNAS"), uplinkSamples(t))
	}
}
