package smf

import (
	"testing"

	"github.com/l25gc/l25gc/sbi"
)

// TS 23.502 4.3.2.2.1 step 4: the UE's sm-data and the UECM registration
// are asked of the UDM at once. This UDM answers the sm-data only once the
// registration has arrived: asked in turn, the establishment would wait
// for the request's timeout and fail.
func TestSubscriptionAndUECMRegistrationAskedAtOnce(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.core.smDataAfterUECM = true
	_, tr := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	if decodeGSM(t, tr.n1).PDUSessionEstablishmentAccept == nil {
		t.Fatal("want PDU Session Establishment Accept")
	}
	if uecm, _ := s.core.live(); uecm != 1 {
		t.Fatalf("%d UECM registrations, want 1", uecm)
	}
}

// A new establishment with a PDU session ID in use tears the old session
// down before step 4: the old session's UECM deregistration reaches the
// UDM ahead of the new one's registration, which stays.
func TestReplacingSessionKeepsItsUECMRegistration(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.established(t, subscribed, 2, establishmentRequest(t, 2, 1))
	s.established(t, subscribed, 2, establishmentRequest(t, 2, 2))
	if uecm, _ := s.core.live(); uecm != 1 {
		t.Fatalf("%d UECM registrations after the replacement, want 1 (the new session's)", uecm)
	}
}
