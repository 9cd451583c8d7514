package amf

import (
	"net/http"
	"testing"
)

// The UDM's deregistration notification is a counted procedure: for a
// connected UE from the notification to UE Context Release Complete, for
// a CM-IDLE one while its clean-up runs; E_current is back to 0 after both.
func TestUDMDeregistrationIsCountedUntilTheReleaseEnds(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	idle := h.newUE(g, "0000000070", 1)
	idle.register()
	idle.goIdle(1)
	connected := h.newUE(g, "0000000071", 2)
	connected.register()
	h.eventually("registrations ended", func() bool { return h.amf.limiter.State().ECurrent == 0 })
	started := h.amf.limiter.State().Started

	body := `{"deregReason":"SUBSCRIPTION_WITHDRAWN","accessType":"3GPP_ACCESS"}`
	for _, ue := range []*testUE{idle, connected} {
		if code, p := h.callback("/namf-callback/v1/"+ue.supi+"/dereg-notify", body); code != http.StatusNoContent {
			t.Fatalf("%s: %d %+v, want 204", ue.supi, code, p)
		}
	}
	g.expect("UEContextReleaseCommand")
	if s := h.amf.limiter.State(); s.ECurrent != 1 || s.Started != started+2 {
		t.Fatalf("during the release: E_current %d, started %d; want 1 (the connected UE's) and %d", s.ECurrent, s.Started, started+2)
	}
	g.send(releaseComplete(t, connected.amfID, connected.ranID))
	h.eventually("the deregistration's slot ended", func() bool { return h.amf.limiter.State().ECurrent == 0 })
}
