package udm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The UDM relays the UDR's sm-data without decoding it into the models;
// the body is byte for byte what decoding and encoding them again gave.
func TestSMDataAnswerIsTheReencodedModels(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := udmOverRealUDR(t, tr)
		q := "?single-nssai=" + url.QueryEscape(`{"sst":1,"sd":"010203"}`) + "&dnn=internet"
		for _, uri := range []string{base + "/nudm-sdm/v2/" + sessionSUPI + "/sm-data" + q, base + "/nudm-sdm/v2/" + sessionSUPI + "/sm-data"} {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, uri, nil)
			rsp, err := authorizedGet(c, req)
			if err != nil {
				t.Fatal(err)
			}
			var sm []models.SessionManagementSubscriptionData
			if err := json.Unmarshal(rsp, &sm); err != nil || len(sm) == 0 {
				t.Fatalf("%s: %v %q", uri, err, rsp)
			}
			var want bytes.Buffer
			if err := sbi.EncodeJSON(&want, sm); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rsp, want.Bytes()) {
				t.Fatalf("%s: answer\n%s\nwant the re-encoded models\n%s", uri, rsp, want.Bytes())
			}
		}
	})
}

// authorizedGet sends req through the SBI client's transport and returns
// the body of a 200.
func authorizedGet(c *sbi.Client, req *http.Request) ([]byte, error) {
	rsp, err := c.HTTP().Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	if err == nil && rsp.StatusCode != http.StatusOK {
		err = &sbi.ProblemError{Status: rsp.StatusCode, Body: b}
	}
	return b, err
}

func TestEmptyJSONArray(t *testing.T) {
	for raw, want := range map[string][2]bool{
		"": {true, true}, "null": {true, true}, "[]": {true, true}, " [ \n ] ": {true, true},
		`[{}]`: {false, true}, `{}`: {false, false}, `"x"`: {false, false},
	} {
		empty, ok := emptyJSONArray(json.RawMessage(raw))
		if empty != want[0] || ok != want[1] {
			t.Errorf("%q: empty %v ok %v, want %v %v", raw, empty, ok, want[0], want[1])
		}
	}
}
