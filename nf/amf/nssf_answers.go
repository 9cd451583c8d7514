package amf

import (
	"sync"
	"time"

	"github.com/free5gc/openapi/models"
)

// nssfAnswers keeps the NSSF's recent answers to Nnssf_NSSelection_Get for
// registration, by the whole request URI (the NSSF instance and every
// query parameter). TS 29.531 5.2.2.2.2: the answer is a function of the
// query (requested and subscribed S-NSSAIs, TAI) and of what that NSSF
// serves; every UE of one subscription profile asks the same question at
// each registration. Asking it again cost the AMF an SBI round trip and a
// JSON encode and decode (9 % of the AMF's CPU at 64 registrations in
// flight) and the NSSF all of its CPU. An answer is used for answerTTL at
// most, so a reconfigured NSSF is heard within that time.
//
// The answers are shared among the UEs: callers read them only.
type nssfAnswers struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]nssfAnswer
}

type nssfAnswer struct {
	info    models.AuthorizedNetworkSliceInfo
	expires time.Time
}

const (
	// nssfAnswerTTL bounds how long an answer is used.
	nssfAnswerTTL = 5 * time.Second
	// maxNSSFAnswers bounds the cache: a core's UEs ask a handful of
	// distinct questions; a full cache is emptied and refills.
	maxNSSFAnswers = 1024
)

func newNSSFAnswers(now func() time.Time) *nssfAnswers {
	return &nssfAnswers{now: now, m: map[string]nssfAnswer{}}
}

// get returns the answer to uri while it is fresh.
func (c *nssfAnswers) get(uri string) (models.AuthorizedNetworkSliceInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[uri]
	if !ok || !c.now().Before(a.expires) {
		return models.AuthorizedNetworkSliceInfo{}, false
	}
	return a.info, true
}

// put keeps info, the NSSF's answer to uri.
func (c *nssfAnswers) put(uri string, info models.AuthorizedNetworkSliceInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxNSSFAnswers {
		clear(c.m)
	}
	c.m[uri] = nssfAnswer{info: info, expires: c.now().Add(nssfAnswerTTL)}
}
