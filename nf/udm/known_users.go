package udm

// Subscribers the UDR answered for a moment ago. In a registration the AMF
// sends Nudm_SDM_Subscribe (TS 23.502 4.2.2.2.2 step 14c) at the same time
// as the UECM registration, right after the SDM Gets (14b) the UDM served
// from the UDR: asking the UDR once more whether the subscriber exists
// cost a UDR round trip and both NFs' CPU per registration, to learn what
// the UDM had just read.
//
// Invalidation is by age only: an entry proves existence for knownFor
// after the read. A subscriber deleted at the UDR meanwhile can still be
// subscribed to for that long, which costs nothing: no data change will
// ever be notified for it, and the AMF's registration fails at the UDR
// (UECM) anyway. Entries are per subscriber, so the map is bounded by the
// subscribers, like ueState's.

import (
	"sync"
	"time"
)

// knownFor is how long a UDR answer proves the subscriber exists: longer
// than a registration, short beside any provisioning change.
const knownFor = 10 * time.Second

type recentUsers struct {
	mu  sync.Mutex
	at  map[string]time.Time // supi → when the UDR last answered for it
	now func() time.Time     // time.Now; tests move it
}

func newRecentUsers() *recentUsers {
	return &recentUsers{at: map[string]time.Time{}, now: time.Now}
}

// saw records that the UDR just answered with supi's data.
func (r *recentUsers) saw(supi string) {
	r.mu.Lock()
	r.at[supi] = r.now()
	r.mu.Unlock()
}

// known says whether the UDR answered for supi within knownFor; an older
// entry is dropped.
func (r *recentUsers) known(supi string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[supi]
	if ok && r.now().Sub(t) > knownFor {
		delete(r.at, supi)
		return false
	}
	return ok
}
