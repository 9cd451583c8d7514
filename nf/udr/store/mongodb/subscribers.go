package mongodb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/l25gc/l25gc/nf/udr/store"
)

// batch bounds $in lists and InsertMany calls.
const batch = 1000

// provisionedColls are rewritten by PutSubscriber; context data (the AMF
// registration) stays, as it describes the UE's current registration.
var provisionedColls = []string{CollAuth, CollWebAuth, CollAM, CollSM, CollSMFSel, CollAMPolicy, CollSMPolicy, CollFlowRule, CollQosFlow}

// docs lays one subscriber out as free5GC's web console does.
func docs(sub *store.Subscriber) (map[string][]any, error) {
	ue := bson.M{"ueId": sub.UeID}
	uePlmn := bson.M{"ueId": sub.UeID, "servingPlmnId": sub.ServingPlmnID}
	out := map[string][]any{}
	add := func(coll string, v any, keys bson.M) error {
		d, err := toDoc(v, keys)
		if err != nil {
			return fmt.Errorf("mongodb store: %s of %s: %w", coll, sub.UeID, err)
		}
		out[coll] = append(out[coll], d)
		return nil
	}
	if err := add(CollAuth, sub.Auth, ue); err != nil {
		return nil, err
	}
	out[CollWebAuth] = []any{webAuthDoc(sub)}
	if err := add(CollAM, sub.AM, uePlmn); err != nil {
		return nil, err
	}
	for _, sm := range sub.SM {
		sm.DnnConfigurations = renameKeys(sm.DnnConfigurations, escapeDNN)
		if err := add(CollSM, sm, uePlmn); err != nil {
			return nil, err
		}
	}
	if err := add(CollSMFSel, sub.SMFSelection, uePlmn); err != nil {
		return nil, err
	}
	if err := add(CollAMPolicy, sub.AMPolicy, ue); err != nil {
		return nil, err
	}
	if sub.SMPolicy.SmPolicySnssaiData != nil {
		if err := add(CollSMPolicy, renamePolicyDNNs(sub.SMPolicy, escapeDNN), ue); err != nil {
			return nil, err
		}
	}
	for _, r := range sub.FlowRules {
		if err := add(CollFlowRule, r, uePlmn); err != nil {
			return nil, err
		}
	}
	for _, q := range sub.QosFlows {
		if err := add(CollQosFlow, q, uePlmn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// webAuthDoc is the web console's view of the keys, so that free5GC's web
// console lists and edits subscribers we provisioned. Exactly one of opc and
// milenage.op holds a value, as the console writes them.
func webAuthDoc(sub *store.Subscriber) bson.M {
	key := func(field, value string) bson.M {
		return bson.M{field: value, "encryptionKey": 0, "encryptionAlgorithm": 0}
	}
	opc, op := sub.Auth.EncOpcKey, sub.OP
	if op != "" {
		opc = ""
	}
	return bson.M{
		"ueId":                          sub.UeID,
		"authenticationMethod":          string(sub.Auth.AuthenticationMethod),
		"permanentKey":                  key("permanentKeyValue", sub.Auth.EncPermanentKey),
		"sequenceNumber":                sub.SQN(),
		"authenticationManagementField": sub.Auth.AuthenticationManagementField,
		"opc":                           key("opcValue", opc),
		"milenage":                      bson.M{"op": key("opValue", op)},
	}
}

func (s *Store) insert(ctx context.Context, all map[string][]any) error {
	for coll, ds := range all {
		for i := 0; i < len(ds); i += batch {
			end := min(i+batch, len(ds))
			if _, err := s.coll(coll).InsertMany(ctx, ds[i:end], options.InsertMany().SetOrdered(false)); err != nil {
				return fmt.Errorf("mongodb store: insert into %s: %w", coll, err)
			}
		}
	}
	return nil
}

// PutSubscriber implements store.Store. The data sets are replaced one
// collection after the other (MongoDB without a replica set has no
// multi-document transactions); a reader may briefly see the old AM data
// with the new keys, never a mix inside one data set.
func (s *Store) PutSubscriber(ctx context.Context, sub *store.Subscriber) error {
	if sub == nil || sub.UeID == "" {
		return fmt.Errorf("mongodb store: subscriber without ueId")
	}
	ds, err := docs(sub)
	if err != nil {
		return err
	}
	for _, coll := range provisionedColls {
		if _, err := s.coll(coll).DeleteMany(ctx, bson.M{"ueId": sub.UeID}); err != nil {
			return fmt.Errorf("mongodb store: replace %s: %w", coll, err)
		}
	}
	return s.insert(ctx, ds)
}

// AddAbsent implements store.Store.
func (s *Store) AddAbsent(ctx context.Context, subs []*store.Subscriber) (int, error) {
	ids := make([]string, 0, len(subs))
	for _, sub := range subs {
		if sub == nil || sub.UeID == "" {
			return 0, fmt.Errorf("mongodb store: subscriber without ueId")
		}
		ids = append(ids, sub.UeID)
	}
	existing, err := s.existing(ctx, ids)
	if err != nil {
		return 0, err
	}
	all := map[string][]any{}
	added := 0
	for _, sub := range subs {
		if existing[sub.UeID] {
			continue
		}
		existing[sub.UeID] = true // a duplicate in subs is added once
		ds, err := docs(sub)
		if err != nil {
			return 0, err
		}
		for coll, d := range ds {
			all[coll] = append(all[coll], d...)
		}
		added++
	}
	return added, s.insert(ctx, all)
}

// existing says which of ids have an authentication subscription.
func (s *Store) existing(ctx context.Context, ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	for i := 0; i < len(ids); i += batch {
		chunk := ids[i:min(i+batch, len(ids))]
		cur, err := s.coll(CollAuth).Find(ctx, bson.M{"ueId": bson.M{"$in": chunk}},
			options.Find().SetProjection(bson.M{"ueId": 1}))
		if err != nil {
			return nil, fmt.Errorf("mongodb store: %w", err)
		}
		var rows []struct {
			UeID string `bson:"ueId"`
		}
		if err := cur.All(ctx, &rows); err != nil {
			return nil, fmt.Errorf("mongodb store: %w", err)
		}
		for _, r := range rows {
			found[r.UeID] = true
		}
	}
	return found, nil
}

// Subscriber implements store.Store.
func (s *Store) Subscriber(ctx context.Context, ueID string) (*store.Subscriber, error) {
	subs, err := s.load(ctx, []string{ueID})
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		return nil, store.ErrNotFound
	}
	return subs[0], nil
}

// DeleteSubscriber implements store.Store.
func (s *Store) DeleteSubscriber(ctx context.Context, ueID string) error {
	if _, err := s.findOne(ctx, CollAuth, bson.M{"ueId": ueID}); err != nil {
		return err
	}
	for _, coll := range subscriberColls {
		if _, err := s.coll(coll).DeleteMany(ctx, bson.M{"ueId": ueID}); err != nil {
			return fmt.Errorf("mongodb store: delete from %s: %w", coll, err)
		}
	}
	return nil
}

// List implements store.Store: subscribers are those with an authentication
// subscription, in ueId order.
func (s *Store) List(ctx context.Context, offset, limit int) ([]*store.Subscriber, int, error) {
	total, err := s.coll(CollAuth).CountDocuments(ctx, bson.M{})
	if err != nil {
		return nil, 0, fmt.Errorf("mongodb store: count: %w", err)
	}
	opts := options.Find().SetSort(bson.D{{Key: "ueId", Value: 1}}).SetProjection(bson.M{"ueId": 1}).SetSkip(int64(max(offset, 0)))
	if limit >= 0 {
		if limit == 0 {
			return []*store.Subscriber{}, int(total), nil
		}
		opts.SetLimit(int64(limit))
	}
	cur, err := s.coll(CollAuth).Find(ctx, bson.M{}, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("mongodb store: list: %w", err)
	}
	var rows []struct {
		UeID string `bson:"ueId"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, 0, fmt.Errorf("mongodb store: list: %w", err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.UeID
	}
	subs, err := s.load(ctx, ids)
	return subs, int(total), err
}

// load assembles the subscribers of ids (in that order, skipping unknown
// ones) with one query per collection.
func (s *Store) load(ctx context.Context, ids []string) ([]*store.Subscriber, error) {
	if len(ids) == 0 {
		return []*store.Subscriber{}, nil
	}
	byColl := map[string]map[string][]map[string]any{}
	for _, coll := range provisionedColls {
		docs, err := s.findMany(ctx, coll, bson.M{"ueId": bson.M{"$in": ids}})
		if err != nil {
			return nil, err
		}
		byUE := map[string][]map[string]any{}
		for _, d := range docs {
			id, _ := d["ueId"].(string)
			byUE[id] = append(byUE[id], d)
		}
		byColl[coll] = byUE
	}
	out := make([]*store.Subscriber, 0, len(ids))
	for _, id := range ids {
		sub, err := assemble(id, byColl)
		if err != nil {
			return nil, err
		}
		if sub != nil {
			out = append(out, sub)
		}
	}
	return out, nil
}

// assemble builds one subscriber from its documents; nil if it has no
// authentication subscription.
func assemble(ueID string, byColl map[string]map[string][]map[string]any) (*store.Subscriber, error) {
	auths := byColl[CollAuth][ueID]
	if len(auths) == 0 {
		return nil, nil
	}
	auth, err := authFromDoc(auths[0])
	if err != nil {
		return nil, err
	}
	sub := &store.Subscriber{UeID: ueID, Auth: *auth}
	if web := byColl[CollWebAuth][ueID]; len(web) > 0 {
		sub.OP = nested(web[0], "milenage", "op", "opValue")
	}
	if am := byColl[CollAM][ueID]; len(am) > 0 {
		sub.ServingPlmnID, _ = am[0]["servingPlmnId"].(string)
		if err := fromDoc(am[0], &sub.AM); err != nil {
			return nil, fmt.Errorf("mongodb store: amData of %s: %w", ueID, err)
		}
	}
	if sub.SM, err = smFromDocs(samePlmn(byColl[CollSM][ueID], sub.ServingPlmnID)); err != nil {
		return nil, err
	}
	if sel := samePlmn(byColl[CollSMFSel][ueID], sub.ServingPlmnID); len(sel) > 0 {
		if err := fromDoc(sel[0], &sub.SMFSelection); err != nil {
			return nil, fmt.Errorf("mongodb store: smfSelectionSubscriptionData of %s: %w", ueID, err)
		}
	}
	if pol := byColl[CollAMPolicy][ueID]; len(pol) > 0 {
		if err := fromDoc(pol[0], &sub.AMPolicy); err != nil {
			return nil, fmt.Errorf("mongodb store: policy amData of %s: %w", ueID, err)
		}
	}
	if err := decodeFlows(sub, byColl); err != nil {
		return nil, err
	}
	if pol := byColl[CollSMPolicy][ueID]; len(pol) > 0 {
		p, err := smPolicyFromDoc(pol[0])
		if err != nil {
			return nil, err
		}
		sub.SMPolicy = *p
	}
	return sub, nil
}

func samePlmn(docs []map[string]any, plmn string) []bson.M {
	var out []bson.M
	for _, d := range docs {
		if p, _ := d["servingPlmnId"].(string); p == plmn {
			out = append(out, d)
		}
	}
	return out
}

// decodeFlows reads the subscriber's flow rules and QoS flows of its PLMN.
func decodeFlows(sub *store.Subscriber, byColl map[string]map[string][]map[string]any) error {
	for _, d := range samePlmn(byColl[CollFlowRule][sub.UeID], sub.ServingPlmnID) {
		var r store.FlowRule
		if err := fromDoc(d, &r); err != nil {
			return fmt.Errorf("mongodb store: flowRule of %s: %w", sub.UeID, err)
		}
		sub.FlowRules = append(sub.FlowRules, r)
	}
	for _, d := range samePlmn(byColl[CollQosFlow][sub.UeID], sub.ServingPlmnID) {
		var q store.QosFlow
		if err := fromDoc(d, &q); err != nil {
			return fmt.Errorf("mongodb store: qosFlow of %s: %w", sub.UeID, err)
		}
		sub.QosFlows = append(sub.QosFlows, q)
	}
	return nil
}
