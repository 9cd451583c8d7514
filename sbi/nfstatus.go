package sbi

import (
	"context"
	"net/http"
	"path"
	"slices"

	"github.com/free5gc/openapi/models"
)

// NFStatusSubscribe / NFStatusNotify (TS 29.510 5.2.2.5, 5.2.2.6): every
// NF subscribes, for each NF type it discovers, to that type's
// registrations, deregistrations and profile changes, so a peer that left
// or was suspended is dropped from the discovery cache at once and a new
// one is found without waiting for the cache to expire.

// SubscriptionsPath is the NFStatusSubscribe collection (TS 29.510 6.1.3).
const SubscriptionsPath = "/nnrf-nfm/v1/subscriptions"

// NFStatusNotifyPath is where every NF (nf.Run) serves the NRF's
// notifications; the NRF learns it from the subscription (TS 29.510
// 6.1.5, nfStatusNotificationUri).
const NFStatusNotifyPath = "/callback/nnrf-nfm/v1/nf-status"

// subscription is the SubscriptionData of TS 29.510 6.1.6.2 with what
// this client sends. models.SubscrCond is the union of every condition
// with empty members that would encode as present, so the one condition
// used (NfTypeCond) has its own type.
type subscription struct {
	NfStatusNotificationUri string                         `json:"nfStatusNotificationUri"`
	ReqNfInstanceId         string                         `json:"reqNfInstanceId,omitempty"`
	ReqNfType               models.NrfNfManagementNfType   `json:"reqNfType,omitempty"`
	SubscrCond              nfTypeCond                     `json:"subscrCond"`
	ReqNotifEvents          []models.NotificationEventType `json:"reqNotifEvents"`
	SubscriptionId          string                         `json:"subscriptionId,omitempty"`
}

type nfTypeCond struct {
	NfType models.NrfNfManagementNfType `json:"nfType"`
}

// notificationData is NotificationData (TS 29.510 6.1.6.2) as read
// here: models.ChangeItem types newValue as an object, so a changed
// nfStatus (a string) would not decode.
type notificationData struct {
	Event          models.NotificationEventType     `json:"event"`
	NfInstanceUri  string                           `json:"nfInstanceUri"`
	NfProfile      *models.NrfNfManagementNfProfile `json:"nfProfile,omitempty"`
	ProfileChanges []changeItem                     `json:"profileChanges,omitempty"`
}

// changeItem is ChangeItem (TS 29.571) with any newValue.
type changeItem struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	NewValue any    `json:"newValue,omitempty"`
}

// NotifyAt sets the URI (this NF's apiRoot + NFStatusNotifyPath) the NRF
// is to notify; without it the client does not subscribe.
func (n *NRFClient) NotifyAt(uri string) {
	n.mu.Lock()
	n.notifyURI = uri
	n.mu.Unlock()
}

// subscribe subscribes to target's status once per registration. A failed
// subscription is tried again at the next discovery of target: until then
// the cache expiry and Failover still keep the peers right.
func (n *NRFClient) subscribe(ctx context.Context, target models.NrfNfManagementNfType) {
	n.mu.Lock()
	uri, self, done := n.notifyURI, n.self.NfInstanceId, n.subscribed[target]
	n.mu.Unlock()
	if uri == "" || done {
		return
	}
	sub := subscription{NfStatusNotificationUri: uri, ReqNfInstanceId: self, ReqNfType: n.selfType,
		SubscrCond: nfTypeCond{NfType: target},
		ReqNotifEvents: []models.NotificationEventType{models.NotificationEventType_REGISTERED,
			models.NotificationEventType_DEREGISTERED, models.NotificationEventType_PROFILE_CHANGED}}
	if _, err := n.client.Do(ctx, http.MethodPost, n.nrfURI+SubscriptionsPath, sub, nil); err != nil {
		return
	}
	n.mu.Lock()
	n.subscribed[target] = true
	n.mu.Unlock()
}

// NotifyHandler serves NFStatusNotify (TS 29.510 5.2.2.6): 204, after the
// discovery cache has taken the news in.
func (n *NRFClient) NotifyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var nd notificationData
		if !DecodeJSON(w, r, &nd) {
			return
		}
		id := path.Base(nd.NfInstanceUri) // .../nf-instances/{nfInstanceID}
		if nd.NfInstanceUri == "" || id == "." || id == "/" {
			WriteProblem(w, http.StatusBadRequest, CauseMandatoryIEMissing, "nfInstanceUri")
			return
		}
		n.notified(nd.Event, id, nd.NfProfile, nd.ProfileChanges)
		w.WriteHeader(http.StatusNoContent)
	})
}

// notified applies one notification to the cache.
func (n *NRFClient) notified(ev models.NotificationEventType, id string, p *models.NrfNfManagementNfProfile, changes []changeItem) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case ev == models.NotificationEventType_DEREGISTERED || !available(p, changes):
		n.forgetInstance(id)
	case p != nil:
		// Registered anew or changed while registered: ask the NRF at the
		// next selection, which then includes it (and its new values).
		delete(n.failed, id)
		n.forgetType(p.NfType)
	default:
		delete(n.failed, id)
		n.forgetInstanceSearches(id)
	}
}

// available says whether the notified profile (or, when only changes were
// sent, its nfStatus change) leaves the instance discoverable.
func available(p *models.NrfNfManagementNfProfile, changes []changeItem) bool {
	if p != nil {
		return p.NfStatus == models.NrfNfManagementNfStatus_REGISTERED
	}
	for _, c := range changes {
		if c.Path == "/nfStatus" {
			s, _ := c.NewValue.(string)
			return s == string(models.NrfNfManagementNfStatus_REGISTERED)
		}
	}
	return true
}

// forgetInstance removes id from every cached search at once (TS 29.510
// 5.2.2.6: the consumer no longer uses a deregistered or suspended NF);
// n.mu held.
func (n *NRFClient) forgetInstance(id string) {
	for _, c := range n.cache {
		c.profiles = slices.DeleteFunc(slices.Clone(c.profiles), func(p models.NrfNfDiscoveryNfProfile) bool {
			return p.NfInstanceId == id
		})
		c.ranked = nil
	}
	delete(n.failed, id)
	for a, ch := range n.chosen {
		if ch.id == id {
			delete(n.chosen, a)
		}
	}
}

// forgetInstanceSearches drops the cached searches that list id; n.mu held.
func (n *NRFClient) forgetInstanceSearches(id string) {
	for key, c := range n.cache {
		if slices.ContainsFunc(c.profiles, func(p models.NrfNfDiscoveryNfProfile) bool { return p.NfInstanceId == id }) {
			delete(n.cache, key)
		}
	}
}
