package nssf

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/free5gc/openapi/models"
)

func rawGet(h http.Handler, q url.Values) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, SelectionPath+"?"+q.Encode(), nil))
	return w
}

// A repeated registration query is answered from the cache with the same
// bytes; a query differing in the NSSAI or the TAI gets its own answer,
// never another query's.
func TestRegistrationAnswersCachedPerQuery(t *testing.T) {
	n, _ := newNSSF(t)
	h := n.Handler()
	info := models.SliceInfoForRegistration{RequestedNssai: []models.Snssai{sliceA}, SubscribedNssai: subscribed([]models.Snssai{sliceA})}
	first := rawGet(h, regQuery(info, &ourTAI))
	again := rawGet(h, regQuery(info, &ourTAI))
	if first.Code != 200 || again.Code != 200 || first.Body.String() != again.Body.String() {
		t.Fatalf("first %d %s, again %d %s: want the same 200 answer", first.Code, first.Body, again.Code, again.Body)
	}
	if again.Header().Get("Content-Type") != "application/json" {
		t.Errorf("cached answer Content-Type %q", again.Header().Get("Content-Type"))
	}
	if n.answers.len() != 1 {
		t.Fatalf("%d cached answers after one distinct query", n.answers.len())
	}

	otherTA := &models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000099"}
	var got models.AuthorizedNetworkSliceInfo
	if code, p := get(t, h, regQuery(info, otherTA), &got); code != 200 || len(allowedOf(got)) != 0 || !same(got.RejectedNssaiInTa, []models.Snssai{sliceA}) {
		t.Fatalf("other TA: %d %+v %+v: want sliceA rejected in the TA, not the cached answer", code, p, got)
	}
	other := models.SliceInfoForRegistration{RequestedNssai: []models.Snssai{sliceB}, SubscribedNssai: subscribed([]models.Snssai{sliceB})}
	if code, p := get(t, h, regQuery(other, &ourTAI), &got); code != 200 || !same(allowedOf(got), []models.Snssai{sliceB}) {
		t.Fatalf("other NSSAI: %d %+v allowed %v: want sliceB", code, p, allowedOf(got))
	}
	if n.answers.len() != 3 {
		t.Fatalf("%d cached answers after three distinct queries", n.answers.len())
	}
}

// A malformed query is refused every time and never cached.
func TestBadRegistrationQueryNotCached(t *testing.T) {
	n, _ := newNSSF(t)
	h := n.Handler()
	q := url.Values{"nf-type": {"AMF"}, "nf-id": {"amf-1"}, "slice-info-request-for-registration": {"{not json"}}
	for i := 0; i < 2; i++ {
		if w := rawGet(h, q); w.Code != http.StatusBadRequest {
			t.Fatalf("try %d: %d, want 400", i, w.Code)
		}
	}
	q.Set("slice-info-request-for-registration", jsonQ(models.SliceInfoForRegistration{}))
	q.Set("tai", "{bad")
	if w := rawGet(h, q); w.Code != http.StatusBadRequest {
		t.Fatalf("bad tai: %d, want 400", w.Code)
	}
	if n.answers.len() != 0 {
		t.Fatalf("%d answers cached from bad queries", n.answers.len())
	}
}

// The cache stays bounded however many distinct queries come.
func TestAnswerCacheBounded(t *testing.T) {
	c := newAnswerCache()
	for i := 0; i <= maxAnswers; i++ {
		c.put(answerKey(strconv.Itoa(i), ""), []byte("{}"))
	}
	if c.len() > maxAnswers {
		t.Fatalf("%d answers kept, bound %d", c.len(), maxAnswers)
	}
	if _, ok := c.get(answerKey(strconv.Itoa(maxAnswers), "")); !ok {
		t.Fatal("the newest answer was not kept")
	}
}
