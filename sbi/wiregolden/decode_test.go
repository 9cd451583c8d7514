package wiregolden

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// TestOddButLegalBodiesDecodeAsTheClassicDecoderDid pins what a consumer
// gets from bodies other cores may send: keys in another case (free5GC's
// own clients never do, hand-written tools do), a key twice, unknown keys
// from a newer release, null for a field that is not a pointer, and bytes
// that are not UTF-8. The expectations are the classic decoder's answers;
// jsonv2 keeps them in encoding/json's v1 mode, and the SBI's decoder
// (sbi.UnmarshalJSON, goccy/go-json) gives them too.
func TestOddButLegalBodiesDecodeAsTheClassicDecoderDid(t *testing.T) {
	cases := []struct {
		name string
		body string
		want models.AuthenticationInfo
	}{
		{"keys in another case", `{"SUPIORSUCI":"imsi-1","servingnetworkname":"5G:x"}`,
			models.AuthenticationInfo{SupiOrSuci: "imsi-1", ServingNetworkName: "5G:x"}},
		{"the last of a duplicate key wins", `{"supiOrSuci":"imsi-1","supiOrSuci":"imsi-2"}`,
			models.AuthenticationInfo{SupiOrSuci: "imsi-2"}},
		{"unknown keys are skipped", `{"supiOrSuci":"imsi-1","future":{"a":[1,2]}}`,
			models.AuthenticationInfo{SupiOrSuci: "imsi-1"}},
		{"null leaves a plain field alone", `{"supiOrSuci":null,"n5gcInd":null}`,
			models.AuthenticationInfo{SupiOrSuci: "kept", N5gcInd: true}},
		{"invalid UTF-8 becomes U+FFFD", "{\"supiOrSuci\":\"imsi-\xff\"}",
			models.AuthenticationInfo{SupiOrSuci: "imsi-\uFFFD"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := models.AuthenticationInfo{SupiOrSuci: "kept", N5gcInd: true}
			if c.name != "null leaves a plain field alone" {
				got = models.AuthenticationInfo{}
			}
			if err := sbi.UnmarshalJSON([]byte(c.body), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestBadBodiesAreStillRejected: the bodies that become 400 ProblemDetails
// in our producers (sbi.DecodeJSON) stay errors under the SBI's decoder,
// with the classic decoder's error type where callers may inspect it and
// the same text, which the ProblemDetails detail carries.
func TestBadBodiesAreStillRejected(t *testing.T) {
	var snssai models.Snssai
	err := json.Unmarshal([]byte(`{"sst":"1"}`), &snssai)
	var typeErr *json.UnmarshalTypeError
	if !errorAs(err, &typeErr) || typeErr.Field != "sst" {
		t.Errorf("string for int32: got %v (%T), want an UnmarshalTypeError on sst", err, err)
	}
	err = json.Unmarshal([]byte(`{"sst":99999999999}`), &snssai)
	if !errorAs(err, &typeErr) {
		t.Errorf("int32 overflow: got %v (%T), want an UnmarshalTypeError", err, err)
	}
	var syntaxErr *json.SyntaxError
	for _, body := range []string{`{"sst":1`, `{"sst":1} x`, ``} {
		err = json.Unmarshal([]byte(body), &snssai)
		if !errorAs(err, &syntaxErr) {
			t.Errorf("%q: got %v (%T), want a SyntaxError", body, err, err)
		}
	}
	for _, body := range []string{`{"sst":"1"}`, `{"sst":99999999999}`, `{"sst":1,"sd":5}`, `[1]`, `{"sst":1`, `{"sst":1} x`, ``} {
		classic := json.Unmarshal([]byte(body), &models.Snssai{})
		got := sbi.UnmarshalJSON([]byte(body), &models.Snssai{})
		if got == nil || got.Error() != classic.Error() {
			t.Errorf("%q: sbi.UnmarshalJSON gave %v, encoding/json %v", body, got, classic)
		}
	}
}

func errorAs(err error, target any) bool { return err != nil && errors.As(err, target) }

// TestGoldenBodiesDecodeAsTheClassicDecoderDid: every golden body (the
// openapi models of registration and PDU session, with times, enums,
// nested and optional fields) decodes under the SBI's decoder to the value
// encoding/json gives.
func TestGoldenBodiesDecodeAsTheClassicDecoderDid(t *testing.T) {
	for _, body := range registrationBodies() {
		data, err := os.ReadFile(goldenPath(body.name))
		if err != nil {
			t.Fatal(err)
		}
		want, got := body.fresh(), body.fresh()
		if err := json.Unmarshal(data, want); err != nil {
			t.Fatalf("%s: %v", body.name, err)
		}
		if err := sbi.UnmarshalJSON(data, got); err != nil {
			t.Fatalf("%s: %v", body.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: sbi.UnmarshalJSON gave %+v, encoding/json %+v", body.name, got, want)
		}
	}
}
