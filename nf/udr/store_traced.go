package udr

import (
	"context"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/nf/udr/store"
)

// tracedStore records each data access of the SBI's hot paths as a store
// span under the request's server span (issue 15: store access per
// procedure); provisioning calls pass through the embedded Store. Used
// only with tracing on (withTracing), so the store costs what it did off.
type tracedStore struct{ store.Store }

func withTracing(on bool, st store.Store) store.Store {
	if !on {
		return st
	}
	return tracedStore{st}
}

func storeSpan(ctx context.Context, name string) (context.Context, func()) {
	ctx, span := tracing.Start(ctx, name, tracing.HopStore)
	return ctx, func() { span.End() }
}

func (s tracedStore) AuthSubscription(ctx context.Context, ueID string) (*models.AuthenticationSubscription, error) {
	ctx, end := storeSpan(ctx, "AuthSubscription")
	defer end()
	return s.Store.AuthSubscription(ctx, ueID)
}

func (s tracedStore) SetSQN(ctx context.Context, ueID, expected, next string) error {
	ctx, end := storeSpan(ctx, "SetSQN")
	defer end()
	return s.Store.SetSQN(ctx, ueID, expected, next)
}

func (s tracedStore) IncrementSQN(ctx context.Context, ueID string, delta uint64) (string, error) {
	ctx, end := storeSpan(ctx, "IncrementSQN")
	defer end()
	return s.Store.IncrementSQN(ctx, ueID, delta)
}

func (s tracedStore) AMData(ctx context.Context, ueID, plmn string) (*models.AccessAndMobilitySubscriptionData, error) {
	ctx, end := storeSpan(ctx, "AMData")
	defer end()
	return s.Store.AMData(ctx, ueID, plmn)
}

func (s tracedStore) SMFSelection(ctx context.Context, ueID, plmn string) (*models.SmfSelectionSubscriptionData, error) {
	ctx, end := storeSpan(ctx, "SMFSelection")
	defer end()
	return s.Store.SMFSelection(ctx, ueID, plmn)
}

func (s tracedStore) SMData(ctx context.Context, ueID, plmn string, snssai *models.Snssai, dnn string) ([]models.SessionManagementSubscriptionData, error) {
	ctx, end := storeSpan(ctx, "SMData")
	defer end()
	return s.Store.SMData(ctx, ueID, plmn, snssai, dnn)
}

func (s tracedStore) AMPolicy(ctx context.Context, ueID string) (*models.AmPolicyData, error) {
	ctx, end := storeSpan(ctx, "AMPolicy")
	defer end()
	return s.Store.AMPolicy(ctx, ueID)
}

func (s tracedStore) SMPolicy(ctx context.Context, ueID string, snssai *models.Snssai, dnn string) (*models.SmPolicyData, error) {
	ctx, end := storeSpan(ctx, "SMPolicy")
	defer end()
	return s.Store.SMPolicy(ctx, ueID, snssai, dnn)
}

func (s tracedStore) PolicyFlows(ctx context.Context, ueID string) ([]store.FlowRule, []store.QosFlow, error) {
	ctx, end := storeSpan(ctx, "PolicyFlows")
	defer end()
	return s.Store.PolicyFlows(ctx, ueID)
}

func (s tracedStore) PutSMFRegistration(ctx context.Context, ueID string, reg *models.SmfRegistration) (bool, error) {
	ctx, end := storeSpan(ctx, "PutSMFRegistration")
	defer end()
	return s.Store.PutSMFRegistration(ctx, ueID, reg)
}

func (s tracedStore) SMFRegistrations(ctx context.Context, ueID string) ([]models.SmfRegistration, error) {
	ctx, end := storeSpan(ctx, "SMFRegistrations")
	defer end()
	return s.Store.SMFRegistrations(ctx, ueID)
}

func (s tracedStore) DeleteSMFRegistration(ctx context.Context, ueID string, id int32) error {
	ctx, end := storeSpan(ctx, "DeleteSMFRegistration")
	defer end()
	return s.Store.DeleteSMFRegistration(ctx, ueID, id)
}

func (s tracedStore) PutAMF3GPPAccess(ctx context.Context, ueID string, reg *models.Amf3GppAccessRegistration) error {
	ctx, end := storeSpan(ctx, "PutAMF3GPPAccess")
	defer end()
	return s.Store.PutAMF3GPPAccess(ctx, ueID, reg)
}

func (s tracedStore) AMF3GPPAccess(ctx context.Context, ueID string) (*models.Amf3GppAccessRegistration, error) {
	ctx, end := storeSpan(ctx, "AMF3GPPAccess")
	defer end()
	return s.Store.AMF3GPPAccess(ctx, ueID)
}
