package nssf

import "sync"

// maxAnswers bounds the cache: a core's UEs ask with a handful of
// distinct subscribed/requested NSSAI combinations, so a full cache means
// many distinct ones; it is emptied and refills with the live ones.
const maxAnswers = 1024

// answerCache keeps the encoded answer to each distinct registration
// query. TS 29.531 5.2.2.2.2: the answer is a function of the query
// (subscribed and requested NSSAI, TAI) and of the slices and TAs this
// NSSF serves, which the node config fixes for its life. Every UE of a
// subscription profile asks the same question at each registration; the
// NSSF's CPU went to decoding the query's JSON and encoding the same
// answer again (half of its profile in `bench registration --profile`).
// Only answers to valid queries are kept: a bad query is decoded, and
// refused, every time.
type answerCache struct {
	mu      sync.RWMutex
	answers map[string][]byte
}

func newAnswerCache() *answerCache { return &answerCache{answers: map[string][]byte{}} }

// key names a query by its raw parameters, which decide the answer.
func answerKey(sliceInfo, tai string) string { return sliceInfo + "\x00" + tai }

func (c *answerCache) get(key string) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	b, ok := c.answers[key]
	return b, ok
}

func (c *answerCache) put(key string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) >= maxAnswers {
		clear(c.answers)
	}
	c.answers[key] = body
}

func (c *answerCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.answers)
}
