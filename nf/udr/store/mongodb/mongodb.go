// Package mongodb is the UDR store in free5GC's MongoDB layout, so that a
// database written by free5GC's web console (v3.4 and later, and the older
// permanentKey/opc shape) is read unchanged, and a free5GC UDR can read what
// we write.
//
// Layout (database "free5gc" by default), one document per UE and data set,
// each carrying "ueId" and, for provisioned data, "servingPlmnId"; field
// names are the JSON names of the openapi models, as the web console writes
// them (it converts through JSON, not bson tags):
//
//	subscriptionData.authenticationData.authenticationSubscription   AuthenticationSubscription (encPermanentKey, encOpcKey, sequenceNumber.sqn, …)
//	subscriptionData.authenticationData.webAuthenticationSubscription the web console's own view (permanentKey, opc/milenage.op, sequenceNumber)
//	subscriptionData.provisionedData.amData                          AccessAndMobilitySubscriptionData
//	subscriptionData.provisionedData.smData                          SessionManagementSubscriptionData, one per S-NSSAI
//	subscriptionData.provisionedData.smfSelectionSubscriptionData    SmfSelectionSubscriptionData
//	policyData.ues.amData                                            AmPolicyData
//	policyData.ues.smData                                            SmPolicyData
//	policyData.ues.flowRule, policyData.ues.qosFlow                  store.FlowRule, store.QosFlow, one document each (with ueId and servingPlmnId)
//	subscriptionData.contextData.amf3gppAccess                       Amf3GppAccessRegistration
//	subscriptionData.contextData.smfRegistrations                    SmfRegistration, one per PDU session (keyed by ueId and pduSessionId)
//
// Keys are hex strings. DNN keys of dnnConfigurations and smPolicyDnnData
// have "." escaped as "_" (free5GC's convention, MongoDB field names); they
// are unescaped on read.
package mongodb

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/security"
)

// Collection names of free5GC's layout.
const (
	CollAuth     = "subscriptionData.authenticationData.authenticationSubscription"
	CollWebAuth  = "subscriptionData.authenticationData.webAuthenticationSubscription"
	CollAM       = "subscriptionData.provisionedData.amData"
	CollSM       = "subscriptionData.provisionedData.smData"
	CollSMFSel   = "subscriptionData.provisionedData.smfSelectionSubscriptionData"
	CollAMPolicy = "policyData.ues.amData"
	CollSMPolicy = "policyData.ues.smData"
	CollFlowRule = "policyData.ues.flowRule"
	CollQosFlow  = "policyData.ues.qosFlow"
	CollAMF3GPP  = "subscriptionData.contextData.amf3gppAccess"
	CollSMFRegs  = "subscriptionData.contextData.smfRegistrations"
)

// subscriberColls hold a subscriber's data; DeleteSubscriber clears them all.
var subscriberColls = []string{CollAuth, CollWebAuth, CollAM, CollSM, CollSMFSel, CollAMPolicy, CollSMPolicy, CollFlowRule, CollQosFlow, CollAMF3GPP, CollSMFRegs}

// maxCASRetries bounds IncrementSQN under contention; each retry means
// another writer made progress, so this is only hit by a pathological storm.
const maxCASRetries = 1000

// sqnStripes is how many locks serialise SQN updates per UE in-process.
const sqnStripes = 256

// Store is the mongodb backend; it is safe for concurrent use.
//
// SQN updates are serialised twice: per UE inside this process (a striped
// lock), and across processes by compare-and-set on the stored value. The
// first is what makes increments safe on servers whose single-document
// updates are not atomic under concurrency (FerretDB on SQLite is one); the
// second keeps several UDRs on one real MongoDB correct.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
	sqnMu  [sqnStripes]sync.Mutex
}

// lockSQN locks the stripe of ueID and returns its unlock.
func (s *Store) lockSQN(ueID string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ueID))
	mu := &s.sqnMu[h.Sum32()%sqnStripes]
	mu.Lock()
	return mu.Unlock
}

var _ store.Store = (*Store)(nil)

// Open connects to uri, checks the server answers, and makes sure every
// collection has an index on ueId (harmless on a free5GC database, and what
// keeps lookups fast with 10,000+ subscribers).
func Open(ctx context.Context, uri, database string) (*Store, error) {
	opts := options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second)
	client, err := mongo.Connect(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("mongodb store %s: %w", uri, err)
	}
	s := &Store{client: client, db: client.Database(database)}
	if err := client.Ping(ctx, nil); err != nil {
		_ = client.Disconnect(ctx)
		return nil, fmt.Errorf("mongodb store %s: ping: %w", uri, err)
	}
	if err := s.ensureIndexes(ctx); err != nil {
		_ = client.Disconnect(ctx)
		return nil, err
	}
	return s, nil
}

func (s *Store) ensureIndexes(ctx context.Context) error {
	for _, c := range subscriberColls {
		_, err := s.db.Collection(c).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "ueId", Value: 1}}})
		if err != nil {
			return fmt.Errorf("mongodb store: index on %s: %w", c, err)
		}
	}
	return nil
}

// Close implements store.Store.
func (s *Store) Close(ctx context.Context) error { return s.client.Disconnect(ctx) }

func (s *Store) coll(name string) *mongo.Collection { return s.db.Collection(name) }

// toDoc converts a model to a document the way free5GC does: through its
// JSON encoding, plus the key fields.
func toDoc(v any, keys bson.M) (bson.M, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m bson.M
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = bson.M{}
	}
	for k, v := range keys {
		m[k] = v
	}
	return m, nil
}

// fromDoc decodes a stored document into a model through JSON, which
// ignores the key fields and whatever else free5GC added (tenantId, _id).
func fromDoc(m bson.M, out any) error {
	delete(m, "_id")
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// findOne decodes the one document matching filter, or ErrNotFound.
func (s *Store) findOne(ctx context.Context, coll string, filter bson.M) (bson.M, error) {
	var m bson.M
	err := s.coll(coll).FindOne(ctx, filter).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("mongodb store: %s: %w", coll, err)
	}
	return m, nil
}

func (s *Store) findMany(ctx context.Context, coll string, filter bson.M) ([]bson.M, error) {
	cur, err := s.coll(coll).Find(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("mongodb store: %s: %w", coll, err)
	}
	var out []bson.M
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("mongodb store: %s: %w", coll, err)
	}
	return out, nil
}

// --- authentication subscription ---

// authFromDoc reads an authentication subscription in free5GC v3.4's shape
// (encPermanentKey, encOpcKey, sequenceNumber{sqn}) or in the older web
// console shape (permanentKey{permanentKeyValue}, opc{opcValue} or
// milenage{op{opValue}}, sequenceNumber as a string).
func authFromDoc(m bson.M) (*models.AuthenticationSubscription, error) {
	legacySQN, _ := m["sequenceNumber"].(string)
	if legacySQN != "" {
		delete(m, "sequenceNumber")
	}
	var a models.AuthenticationSubscription
	if err := fromDoc(m, &a); err != nil {
		return nil, fmt.Errorf("mongodb store: authentication subscription: %w", err)
	}
	if legacySQN != "" {
		a.SequenceNumber = &models.SequenceNumber{SqnScheme: models.SqnScheme_GENERAL, Sqn: legacySQN}
	}
	if a.EncPermanentKey == "" {
		a.EncPermanentKey = nested(m, "permanentKey", "permanentKeyValue")
	}
	if a.EncOpcKey == "" && a.EncTopcKey == "" {
		opc, err := legacyOPc(m, a.EncPermanentKey)
		if err != nil {
			return nil, err
		}
		a.EncOpcKey = opc
	}
	return &a, nil
}

// legacyOPc finds OPc in the old shape, deriving it from OP if needed, as
// free5GC's UDM did (TS 35.206 4.1).
func legacyOPc(m bson.M, k string) (string, error) {
	if opc := nested(m, "opc", "opcValue"); opc != "" {
		return opc, nil
	}
	op := nested(m, "milenage", "op", "opValue")
	if op == "" {
		return "", nil
	}
	kb, err1 := hex.DecodeString(k)
	opb, err2 := hex.DecodeString(op)
	if err := errors.Join(err1, err2); err != nil {
		return "", fmt.Errorf("mongodb store: permanentKey/opValue: %w", err)
	}
	opc, err := security.DeriveOPc(kb, opb)
	if err != nil {
		return "", fmt.Errorf("mongodb store: %w", err)
	}
	return hex.EncodeToString(opc), nil
}

// nested returns the string at a path of sub-documents, or "".
func nested(m bson.M, path ...string) string {
	var cur any = m
	for _, p := range path {
		doc, ok := asMap(cur)
		if !ok {
			return ""
		}
		cur = doc[p]
	}
	s, _ := cur.(string)
	return s
}

func asMap(v any) (map[string]any, bool) {
	switch d := v.(type) {
	case bson.M:
		return d, true
	case map[string]any:
		return d, true
	case bson.D:
		return d.Map(), true
	}
	return nil, false
}

// AuthSubscription implements store.Store.
func (s *Store) AuthSubscription(ctx context.Context, ueID string) (*models.AuthenticationSubscription, error) {
	m, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	return authFromDoc(m)
}

// storedSQN reads the SQN as stored and says which shape holds it.
func (s *Store) storedSQN(ctx context.Context, ueID string) (sqn string, legacy bool, err error) {
	m, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID})
	if err != nil {
		return "", false, err
	}
	if str, ok := m["sequenceNumber"].(string); ok {
		return str, true, nil
	}
	return nested(m, "sequenceNumber", "sqn"), false, nil
}

// casSQN replaces cur by next only if the document still holds cur; it
// reports whether it did.
func (s *Store) casSQN(ctx context.Context, ueID, cur, next string, legacy bool) (bool, error) {
	field := "sequenceNumber.sqn"
	if legacy {
		field = "sequenceNumber"
	}
	filter := bson.M{"ueId": ueID, field: cur}
	if cur == "" && !legacy {
		filter = bson.M{"ueId": ueID} // no SQN yet: first writer wins below
		filter[field] = bson.M{"$exists": false}
	}
	res, err := s.coll(CollAuth).UpdateOne(ctx, filter, bson.M{"$set": bson.M{field: next}})
	if err != nil {
		return false, fmt.Errorf("mongodb store: update SQN: %w", err)
	}
	return res.MatchedCount == 1, nil
}

// SetSQN implements store.Store.
func (s *Store) SetSQN(ctx context.Context, ueID, expected, next string) error {
	if err := store.CheckSQN(next); err != nil {
		return err
	}
	defer s.lockSQN(ueID)()
	for i := 0; i < maxCASRetries; i++ {
		cur, legacy, err := s.storedSQN(ctx, ueID)
		if err != nil {
			return err
		}
		if expected != "" && !strings.EqualFold(cur, expected) {
			return store.ErrConflict
		}
		ok, err := s.casSQN(ctx, ueID, cur, next, legacy)
		if err != nil || ok {
			return err
		}
	}
	return store.ErrConflict
}

// IncrementSQN implements store.Store by compare-and-set: read, add, write
// only if unchanged, else retry. Every success is one distinct increment.
func (s *Store) IncrementSQN(ctx context.Context, ueID string, delta uint64) (string, error) {
	defer s.lockSQN(ueID)()
	for i := 0; i < maxCASRetries; i++ {
		cur, legacy, err := s.storedSQN(ctx, ueID)
		if err != nil {
			return "", err
		}
		next, err := store.AddSQN(cur, delta)
		if err != nil {
			return "", err
		}
		ok, err := s.casSQN(ctx, ueID, cur, next, legacy)
		if err != nil {
			return "", err
		}
		if ok {
			return next, nil
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("mongodb store: SQN of %s: %w after %d attempts", ueID, store.ErrConflict, maxCASRetries)
}

// --- provisioned and policy data ---

// AMData implements store.Store.
func (s *Store) AMData(ctx context.Context, ueID, plmn string) (*models.AccessAndMobilitySubscriptionData, error) {
	m, err := s.findOne(ctx, CollAM, bson.M{"ueId": ueID, "servingPlmnId": plmn})
	if err != nil {
		return nil, err
	}
	var am models.AccessAndMobilitySubscriptionData
	if err := fromDoc(m, &am); err != nil {
		return nil, fmt.Errorf("mongodb store: amData: %w", err)
	}
	return &am, nil
}

// SMFSelection implements store.Store.
func (s *Store) SMFSelection(ctx context.Context, ueID, plmn string) (*models.SmfSelectionSubscriptionData, error) {
	m, err := s.findOne(ctx, CollSMFSel, bson.M{"ueId": ueID, "servingPlmnId": plmn})
	if err != nil {
		return nil, err
	}
	var sel models.SmfSelectionSubscriptionData
	if err := fromDoc(m, &sel); err != nil {
		return nil, fmt.Errorf("mongodb store: smfSelectionSubscriptionData: %w", err)
	}
	return &sel, nil
}

// SMData implements store.Store. A UE with amData for the PLMN but no
// matching SM data gets an empty list; a UE without any gets ErrNotFound.
func (s *Store) SMData(ctx context.Context, ueID, plmn string, snssai *models.Snssai, dnn string) ([]models.SessionManagementSubscriptionData, error) {
	docs, err := s.findMany(ctx, CollSM, bson.M{"ueId": ueID, "servingPlmnId": plmn})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		if _, err := s.findOne(ctx, CollAM, bson.M{"ueId": ueID, "servingPlmnId": plmn}); err != nil {
			return nil, err
		}
	}
	all, err := smFromDocs(docs)
	if err != nil {
		return nil, err
	}
	return store.FilterSM(all, snssai, dnn), nil
}

func smFromDocs(docs []bson.M) ([]models.SessionManagementSubscriptionData, error) {
	out := make([]models.SessionManagementSubscriptionData, 0, len(docs))
	for _, d := range docs {
		var sm models.SessionManagementSubscriptionData
		if err := fromDoc(d, &sm); err != nil {
			return nil, fmt.Errorf("mongodb store: smData: %w", err)
		}
		sm.DnnConfigurations = renameKeys(sm.DnnConfigurations, unescapeDNN)
		out = append(out, sm)
	}
	return out, nil
}

func escapeDNN(dnn string) string   { return strings.ReplaceAll(dnn, ".", "_") }
func unescapeDNN(key string) string { return strings.ReplaceAll(key, "_", ".") }

func renameKeys[V any](m map[string]V, f func(string) string) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[f(k)] = v
	}
	return out
}

// renamePolicyDNNs applies f to the DNN keys of every slice's policy data.
func renamePolicyDNNs(p models.SmPolicyData, f func(string) string) models.SmPolicyData {
	if p.SmPolicySnssaiData == nil {
		return p
	}
	slices := make(map[string]models.SmPolicySnssaiData, len(p.SmPolicySnssaiData))
	for k, sd := range p.SmPolicySnssaiData {
		sd.SmPolicyDnnData = renameKeys(sd.SmPolicyDnnData, f)
		slices[k] = sd
	}
	p.SmPolicySnssaiData = slices
	return p
}

func smPolicyFromDoc(m bson.M) (*models.SmPolicyData, error) {
	var p models.SmPolicyData
	if err := fromDoc(m, &p); err != nil {
		return nil, fmt.Errorf("mongodb store: policy smData: %w", err)
	}
	p = renamePolicyDNNs(p, unescapeDNN)
	return &p, nil
}

// SMPolicy implements store.Store.
func (s *Store) SMPolicy(ctx context.Context, ueID string, snssai *models.Snssai, dnn string) (*models.SmPolicyData, error) {
	m, err := s.findOne(ctx, CollSMPolicy, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	p, err := smPolicyFromDoc(m)
	if err != nil {
		return nil, err
	}
	f := store.FilterSMPolicy(*p, snssai, dnn)
	return &f, nil
}

// AMPolicy implements store.Store.
func (s *Store) AMPolicy(ctx context.Context, ueID string) (*models.AmPolicyData, error) {
	m, err := s.findOne(ctx, CollAMPolicy, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	var p models.AmPolicyData
	if err := fromDoc(m, &p); err != nil {
		return nil, fmt.Errorf("mongodb store: policy amData: %w", err)
	}
	return &p, nil
}

// --- context data ---

// PutAMF3GPPAccess implements store.Store; the UE must be provisioned.
func (s *Store) PutAMF3GPPAccess(ctx context.Context, ueID string, reg *models.Amf3GppAccessRegistration) error {
	if _, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID}); err != nil {
		return err
	}
	doc, err := toDoc(reg, bson.M{"ueId": ueID})
	if err != nil {
		return fmt.Errorf("mongodb store: amf3gppAccess: %w", err)
	}
	_, err = s.coll(CollAMF3GPP).ReplaceOne(ctx, bson.M{"ueId": ueID}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("mongodb store: amf3gppAccess: %w", err)
	}
	return nil
}

// PolicyFlows implements store.Store.
func (s *Store) PolicyFlows(ctx context.Context, ueID string) ([]store.FlowRule, []store.QosFlow, error) {
	if _, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID}); err != nil {
		return nil, nil, err
	}
	rules, err := decodeAll[store.FlowRule](ctx, s, CollFlowRule, ueID)
	if err != nil {
		return nil, nil, err
	}
	flows, err := decodeAll[store.QosFlow](ctx, s, CollQosFlow, ueID)
	return rules, flows, err
}

// decodeAll decodes the UE's documents of coll.
func decodeAll[T any](ctx context.Context, s *Store, coll, ueID string) ([]T, error) {
	docs, err := s.findMany(ctx, coll, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	out := make([]T, len(docs))
	for i, d := range docs {
		if err := fromDoc(d, &out[i]); err != nil {
			return nil, fmt.Errorf("mongodb store: %s: %w", coll, err)
		}
	}
	return out, nil
}

// PutSMFRegistration implements store.Store; the UE must be provisioned.
func (s *Store) PutSMFRegistration(ctx context.Context, ueID string, reg *models.SmfRegistration) (bool, error) {
	if _, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID}); err != nil {
		return false, err
	}
	key := bson.M{"ueId": ueID, "pduSessionId": reg.PduSessionId}
	doc, err := toDoc(reg, key)
	if err != nil {
		return false, fmt.Errorf("mongodb store: smfRegistrations: %w", err)
	}
	res, err := s.coll(CollSMFRegs).ReplaceOne(ctx, key, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return false, fmt.Errorf("mongodb store: smfRegistrations: %w", err)
	}
	return res.MatchedCount > 0, nil
}

// SMFRegistrations implements store.Store.
func (s *Store) SMFRegistrations(ctx context.Context, ueID string) ([]models.SmfRegistration, error) {
	if _, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID}); err != nil {
		return nil, err
	}
	docs, err := s.findMany(ctx, CollSMFRegs, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	out := make([]models.SmfRegistration, len(docs))
	for i, d := range docs {
		if err := fromDoc(d, &out[i]); err != nil {
			return nil, fmt.Errorf("mongodb store: smfRegistrations: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b models.SmfRegistration) int { return int(a.PduSessionId - b.PduSessionId) })
	return out, nil
}

// DeleteSMFRegistration implements store.Store.
func (s *Store) DeleteSMFRegistration(ctx context.Context, ueID string, pduSessionID int32) error {
	res, err := s.coll(CollSMFRegs).DeleteOne(ctx, bson.M{"ueId": ueID, "pduSessionId": pduSessionID})
	if err != nil {
		return fmt.Errorf("mongodb store: smfRegistrations: %w", err)
	}
	if res.DeletedCount == 0 {
		return store.ErrNotFound
	}
	return nil
}

// AMF3GPPAccess implements store.Store.
func (s *Store) AMF3GPPAccess(ctx context.Context, ueID string) (*models.Amf3GppAccessRegistration, error) {
	m, err := s.findOne(ctx, CollAMF3GPP, bson.M{"ueId": ueID})
	if err != nil {
		return nil, err
	}
	var r models.Amf3GppAccessRegistration
	if err := fromDoc(m, &r); err != nil {
		return nil, fmt.Errorf("mongodb store: amf3gppAccess: %w", err)
	}
	return &r, nil
}
