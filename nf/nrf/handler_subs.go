package nrf

// NFStatusSubscribe / NFStatusUnsubscribe / NFStatusNotify (TS 29.510
// 5.2.2.5, 5.2.2.7, 5.2.2.6; resources of 6.1.3, callbacks of 6.1.5).

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// notifyTimeout bounds one notification: a dead subscriber must not hold
// the ones behind it for long.
const notifyTimeout = 2 * time.Second

// maxPending bounds the notifications queued for one subscriber; past it
// the oldest are dropped (the subscriber is not reading them anyway).
const maxPending = 256

// handleSubscribe is NFStatusSubscribe (TS 29.510 5.2.2.5.2): 201 with the
// subscription and its Location. A subscriber that subscribes again to
// the same condition at the same URI (an NF restarted under its id)
// replaces its earlier subscription rather than being notified twice.
// No validityTime is granted: a subscription lasts until it is deleted or
// its NF deregisters.
func (n *NF) handleSubscribe(w http.ResponseWriter, r *http.Request) {
	var sd models.NrfNfManagementSubscriptionData
	if !sbi.DecodeJSON(w, r, &sd) {
		return
	}
	if u, err := url.Parse(sd.NfStatusNotificationUri); err != nil || !u.IsAbs() || u.Host == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidMsgFormat,
			fmt.Sprintf("nfStatusNotificationUri %q is not an absolute URI", sd.NfStatusNotificationUri))
		return
	}
	// The subscription is the caller's: its reqNfInstanceId is the
	// instance its credential names, so no one else can end it.
	if sd.ReqNfInstanceId == "" && n.env.Security != nil {
		sd.ReqNfInstanceId = sbi.PrincipalOf(r.Context())
	}
	if !n.mayChange(w, r, sd.ReqNfInstanceId) {
		return
	}
	sd = n.subs.add(sd)
	w.Header().Set("Location", sbi.ResourceURI(r, sbi.SubscriptionsPath+"/"+sd.SubscriptionId))
	sbi.WriteJSON(w, http.StatusCreated, sd)
}

// handleUnsubscribe is NFStatusUnsubscribe (TS 29.510 5.2.2.7).
func (n *NF) handleUnsubscribe(w http.ResponseWriter, r *http.Request) {
	if owner, ok := n.subs.owner(r.PathValue("subscriptionID")); ok && !n.mayChange(w, r, owner) {
		return
	}
	if !n.subs.remove(r.PathValue("subscriptionID")) {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseSubscriptionNotFound, "no subscription "+r.PathValue("subscriptionID"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// notify tells every subscriber whose condition p meets about ev
// (TS 29.510 5.2.2.6). The profile goes along except for a
// deregistration (6.1.6.2 NotificationData: nfProfile for NF_REGISTERED and
// NF_PROFILE_CHANGED).
func (n *NF) notify(ev models.NotificationEventType, p models.NrfNfManagementNfProfile) {
	nd := models.NrfNfManagementNotificationData{Event: ev,
		NfInstanceUri: n.env.Config.NRFURI() + sbi.NFManagementPath + p.NfInstanceId}
	if ev != models.NotificationEventType_DEREGISTERED {
		nd.NfProfile = &p
	}
	n.subs.notify(ev, &p, nd)
}

// subscriptions holds the status subscriptions by id, each with its own
// queue, so notifications reach a subscriber in order and a slow one
// delays only itself.
type subscriptions struct {
	client *sbi.Client // nil: notifications are not sent (tests of the registry)
	log    *slog.Logger
	nextID atomic.Uint64

	mu   sync.Mutex
	byID map[string]*subscriber
}

type subscriber struct {
	data models.NrfNfManagementSubscriptionData

	mu      sync.Mutex
	pending []models.NrfNfManagementNotificationData
	sending bool
}

func newSubscriptions(c *sbi.Client, log *slog.Logger) *subscriptions {
	return &subscriptions{client: c, log: log, byID: map[string]*subscriber{}}
}

// add stores sd under a new id, replacing a subscription of the same
// subscriber, condition and URI, and returns it with its id.
func (s *subscriptions) add(sd models.NrfNfManagementSubscriptionData) models.NrfNfManagementSubscriptionData {
	sd.SubscriptionId = strconv.FormatUint(s.nextID.Add(1), 10)
	sd.ValidityTime = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, old := range s.byID {
		if sd.ReqNfInstanceId != "" && sameSubscriber(old.data, sd) {
			delete(s.byID, id)
		}
	}
	s.byID[sd.SubscriptionId] = &subscriber{data: sd}
	return sd
}

func sameSubscriber(a, b models.NrfNfManagementSubscriptionData) bool {
	return a.ReqNfInstanceId == b.ReqNfInstanceId && a.NfStatusNotificationUri == b.NfStatusNotificationUri &&
		condNfType(a) == condNfType(b)
}

func condNfType(sd models.NrfNfManagementSubscriptionData) string {
	if sd.SubscrCond == nil {
		return ""
	}
	return sd.SubscrCond.NfType
}

func (s *subscriptions) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byID[id]
	delete(s.byID, id)
	return ok
}

// owner is the NF instance that made subscription id.
func (s *subscriptions) owner(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.byID[id]
	if !ok {
		return "", false
	}
	return sub.data.ReqNfInstanceId, true
}

// removeOf ends the subscriptions an NF instance made.
func (s *subscriptions) removeOf(nfInstanceID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sub := range s.byID {
		if sub.data.ReqNfInstanceId == nfInstanceID {
			delete(s.byID, id)
		}
	}
}

// notify queues nd for each subscription that wants ev about p.
func (s *subscriptions) notify(ev models.NotificationEventType, p *models.NrfNfManagementNfProfile, nd models.NrfNfManagementNotificationData) {
	if s.client == nil {
		return
	}
	for _, sub := range s.wanting(ev, p) {
		sub.push(nd, s)
	}
}

func (s *subscriptions) wanting(ev models.NotificationEventType, p *models.NrfNfManagementNfProfile) []*subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	var to []*subscriber
	for _, sub := range s.byID {
		if wants(sub.data, ev, p) {
			to = append(to, sub)
		}
	}
	return to
}

// wants says whether a subscription covers ev about p: the events asked
// for (all when none listed) and the condition (TS 29.510 6.1.6.2
// subscrCond: NfTypeCond, NfInstanceIdCond, ServiceNameCond; none = every
// NF instance).
func wants(sd models.NrfNfManagementSubscriptionData, ev models.NotificationEventType, p *models.NrfNfManagementNfProfile) bool {
	if len(sd.ReqNotifEvents) > 0 && !slices.Contains(sd.ReqNotifEvents, ev) {
		return false
	}
	c := sd.SubscrCond
	switch {
	case c == nil:
		return true
	case c.NfType != "":
		return c.NfType == string(p.NfType)
	case c.NfInstanceId != "":
		return c.NfInstanceId == p.NfInstanceId
	case c.ServiceName != "":
		return slices.ContainsFunc(p.NfServices, func(s models.NrfNfManagementNfService) bool { return s.ServiceName == c.ServiceName })
	}
	return true
}

// push queues nd and starts the subscriber's sender unless it runs.
func (sub *subscriber) push(nd models.NrfNfManagementNotificationData, s *subscriptions) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if len(sub.pending) == maxPending {
		sub.pending = sub.pending[1:]
	}
	sub.pending = append(sub.pending, nd)
	if !sub.sending {
		sub.sending = true
		go sub.drain(s)
	}
}

// drain sends the queued notifications in order, then ends.
func (sub *subscriber) drain(s *subscriptions) {
	for {
		sub.mu.Lock()
		if len(sub.pending) == 0 {
			sub.sending = false
			sub.mu.Unlock()
			return
		}
		nd := sub.pending[0]
		sub.pending = sub.pending[1:]
		sub.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		_, err := s.client.Do(ctx, http.MethodPost, sub.data.NfStatusNotificationUri, nd, nil)
		cancel()
		if err != nil {
			s.log.Warn("NF status notification not delivered", "subscriptionId", sub.data.SubscriptionId,
				"uri", sub.data.NfStatusNotificationUri, "event", nd.Event, "err", err)
		}
	}
}
