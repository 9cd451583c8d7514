package xiohttp

import (
	"fmt"
	"testing"
	"time"
)

// A peer a probe found elsewhere is reached over TCP for reprobeAfter,
// then probed again (it may have moved to this node); what the NRF says
// holds until the NRF says otherwise and is not overridden by probes.
func TestPeerTable(t *testing.T) {
	now := time.Unix(1000, 0)
	pt := newPeerTable()
	pt.now = func() time.Time { return now }

	if p := pt.lookup("a:1"); p.path != pathProbe {
		t.Fatalf("unknown peer: %+v, want a probe", p)
	}
	pt.learn("a:1", pathTCP)
	if p := pt.lookup("a:1"); p.path != pathTCP {
		t.Fatalf("probed elsewhere: %+v, want TCP", p)
	}
	now = now.Add(reprobeAfter + time.Second)
	if p := pt.lookup("a:1"); p.path != pathProbe {
		t.Fatalf("probed elsewhere %v ago: %+v, want a new probe", reprobeAfter, p)
	}

	pt.fromNRF(map[string]bool{"b:1": true, "c:1": false})
	pt.learn("b:1", pathTCP) // X-IO refused once: the NRF's word stands
	now = now.Add(time.Hour)
	if b, c := pt.lookup("b:1"), pt.lookup("c:1"); b.path != pathXIO || c.path != pathTCP {
		t.Fatalf("from the NRF: b %+v, c %+v; want X-IO and TCP, an hour later too", b, c)
	}
	pt.fromNRF(map[string]bool{"b:1": false})
	if b := pt.lookup("b:1"); b.path != pathTCP {
		t.Fatalf("b moved elsewhere: %+v", b)
	}

	for i := 0; i < maxProbed+10; i++ {
		pt.learn(fmt.Sprintf("x:%d", i), pathXIO)
	}
	if n := len(*pt.m.Load()); n > maxProbed {
		t.Fatalf("%d peers remembered, at most %d", n, maxProbed)
	}
	if b := pt.lookup("b:1"); b.path != pathTCP || !b.byNRF {
		t.Fatalf("forgetting probed peers forgot the NRF's: %+v", b)
	}
}
