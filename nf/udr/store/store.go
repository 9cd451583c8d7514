// Package store is the UDR's data layer: one interface over the subscriber
// data of TS 29.504 (Nudr_DataRepository, subscription and policy data), with
// two backends — store/embedded (a file under the data dir) and
// store/mongodb (free5GC's MongoDB layout, so a database written by free5GC's
// web console works unchanged).
//
// A subscriber is held in free5GC's shape: the openapi models of each
// free5GC collection, keyed by ueId ("imsi-<IMSI>", TS 29.571 5.3.2 Supi)
// and, for provisioned data, the serving PLMN ("<MCC><MNC>").
package store

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// ErrNotFound says the UE (or the requested data set of it) is not stored.
var ErrNotFound = errors.New("store: not found")

// ErrConflict says a compare-and-set lost: the stored value was not the
// expected one.
var ErrConflict = errors.New("store: conflict")

// Subscriber is every data set the UDR holds for one UE, as free5GC stores it.
type Subscriber struct {
	UeID          string `json:"ueId"`          // "imsi-208930000000001"
	ServingPlmnID string `json:"servingPlmnId"` // "20893": key of the provisioned data
	// OP is kept only to show how the subscriber was provisioned: Auth
	// holds the OPc derived from it (encOpcKey), as free5GC's web console
	// does, so that any UDM reads the subscriber the same way.
	OP           string                                     `json:"op,omitempty"`
	Auth         models.AuthenticationSubscription          `json:"authenticationSubscription"`
	AM           models.AccessAndMobilitySubscriptionData   `json:"amData"`
	SM           []models.SessionManagementSubscriptionData `json:"smData,omitempty"`
	SMFSelection models.SmfSelectionSubscriptionData        `json:"smfSelectionSubscriptionData"`
	AMPolicy     models.AmPolicyData                        `json:"amPolicyData"`
	// SMPolicy is the PCF's session management policy data (TS 29.519
	// 5.2.x policy-data/ues/{ueId}/sm-data): per S-NSSAI and DNN.
	SMPolicy models.SmPolicyData `json:"smPolicyData"`
	// FlowRules and QosFlows are the subscriber's QoS flows beyond the
	// default one, in free5GC's web console shape: the PCF makes them PCC
	// rules with QoS data (TS 29.512 5.6.2.6, 5.6.2.8).
	FlowRules []FlowRule `json:"flowRules,omitempty"`
	QosFlows  []QosFlow  `json:"qosFlows,omitempty"`
}

// FlowRule is one service data flow of a subscriber's policy, as free5GC's
// web console keeps it (policyData.ues.flowRule): an IP filter on a slice
// (SNSSAIKey form) and DNN, bound by QosRef to the QosFlow of the same
// slice, DNN and QosRef.
type FlowRule struct {
	Filter     string `json:"filter"` // TS 29.512 FlowDescription (an IPFilterRule, RFC 6733 4.3) or an address/prefix of the data network
	Precedence int    `json:"precedence,omitempty"`
	Snssai     string `json:"snssai"`
	Dnn        string `json:"dnn"`
	QosRef     int    `json:"qosRef"`
}

// QosFlow is the QoS of the flow rules that name its QosRef
// (policyData.ues.qosFlow): 5QI and TS 29.571 BitRate strings.
type QosFlow struct {
	Snssai string `json:"snssai"`
	Dnn    string `json:"dnn"`
	QosRef int    `json:"qosRef"`
	FiveQI int    `json:"5qi"`
	MBRUL  string `json:"mbrUL,omitempty"`
	MBRDL  string `json:"mbrDL,omitempty"`
	GBRUL  string `json:"gbrUL,omitempty"`
	GBRDL  string `json:"gbrDL,omitempty"`
}

// IMSI is the subscriber's IMSI (its ueId without the "imsi-" prefix).
func (s *Subscriber) IMSI() string { return strings.TrimPrefix(s.UeID, "imsi-") }

// SQN is the subscriber's current sequence number, 12 hex digits.
func (s *Subscriber) SQN() string {
	if s.Auth.SequenceNumber == nil {
		return ""
	}
	return s.Auth.SequenceNumber.Sqn
}

// Store is the UDR's data. Values returned by a Store belong to the caller
// only as far as the top-level struct goes: nested maps and slices may be
// shared with the store and must be treated as read-only.
type Store interface {
	// PutSubscriber creates or replaces the whole subscriber.
	PutSubscriber(ctx context.Context, s *Subscriber) error
	// AddAbsent stores those subscribers whose ueId is not stored yet and
	// leaves the others (their SQNs especially) alone; it returns how many
	// it added. Provisioning at start and bulk adds use it. The store may
	// keep the given values: the caller must not modify them afterwards.
	AddAbsent(ctx context.Context, subs []*Subscriber) (added int, err error)
	// Subscriber returns the whole subscriber, or ErrNotFound.
	Subscriber(ctx context.Context, ueID string) (*Subscriber, error)
	// DeleteSubscriber removes every data set of the UE, or ErrNotFound.
	DeleteSubscriber(ctx context.Context, ueID string) error
	// List returns up to limit subscribers in ueId order from offset, and
	// how many are stored in all.
	List(ctx context.Context, offset, limit int) (subs []*Subscriber, total int, err error)

	// AuthSubscription is the authentication subscription (TS 29.505 5.4.2.2).
	AuthSubscription(ctx context.Context, ueID string) (*models.AuthenticationSubscription, error)
	// SetSQN replaces the SQN with next if it is currently expected
	// (ErrConflict otherwise); an empty expected sets it unconditionally.
	SetSQN(ctx context.Context, ueID, expected, next string) error
	// IncrementSQN adds delta to the SQN (mod 2^48) atomically and returns
	// the new value: concurrent callers never lose an increment (TS 33.102
	// C.3: SQN_HE must only ever move forward).
	IncrementSQN(ctx context.Context, ueID string, delta uint64) (string, error)

	// AMData is the access and mobility subscription data for servingPlmnID.
	AMData(ctx context.Context, ueID, servingPlmnID string) (*models.AccessAndMobilitySubscriptionData, error)
	// SMFSelection is the SMF selection subscription data for servingPlmnID.
	SMFSelection(ctx context.Context, ueID, servingPlmnID string) (*models.SmfSelectionSubscriptionData, error)
	// SMData is the session management subscription data for servingPlmnID,
	// filtered by S-NSSAI and DNN when given (TS 29.504 6.1.3.6 query
	// parameters single-nssai and dnn).
	SMData(ctx context.Context, ueID, servingPlmnID string, snssai *models.Snssai, dnn string) ([]models.SessionManagementSubscriptionData, error)
	// AMPolicy is the access and mobility policy data (TS 29.519 5.2.2).
	AMPolicy(ctx context.Context, ueID string) (*models.AmPolicyData, error)

	// SMPolicy is the session management policy data (TS 29.519 5.2.2,
	// SmPolicyData), keeping only the slice snssai and the DNN dnn when
	// given (its query parameters of the same names); ErrNotFound when the
	// UE has none.
	SMPolicy(ctx context.Context, ueID string, snssai *models.Snssai, dnn string) (*models.SmPolicyData, error)
	// PolicyFlows are the UE's flow rules and QoS flows (none is no
	// error); ErrNotFound only for an unknown UE.
	PolicyFlows(ctx context.Context, ueID string) ([]FlowRule, []QosFlow, error)

	// PutSMFRegistration stores (or replaces) the SMF serving the PDU
	// session reg.PduSessionId (context data, TS 29.505 5.2.2.x
	// smf-registrations/{pduSessionId}, written by the UDM's UECM) and says
	// whether it replaced one. The UE must be stored.
	PutSMFRegistration(ctx context.Context, ueID string, reg *models.SmfRegistration) (replaced bool, err error)
	// SMFRegistrations are the UE's SMF registrations in PDU session id order.
	SMFRegistrations(ctx context.Context, ueID string) ([]models.SmfRegistration, error)
	// DeleteSMFRegistration removes one, or ErrNotFound.
	DeleteSMFRegistration(ctx context.Context, ueID string, pduSessionID int32) error

	// PutAMF3GPPAccess stores the AMF registration for 3GPP access
	// (context data written by the UDM on registration, TS 29.504 5.2.2.3).
	PutAMF3GPPAccess(ctx context.Context, ueID string, reg *models.Amf3GppAccessRegistration) error
	// AMF3GPPAccess returns the stored AMF registration, or ErrNotFound.
	AMF3GPPAccess(ctx context.Context, ueID string) (*models.Amf3GppAccessRegistration, error)

	// Close flushes and releases the store.
	Close(ctx context.Context) error
}

// SQNLen is the length of SQN in hex digits (48 bits, TS 33.102 6.3.2).
const SQNLen = 12

// AddSQN returns sqn+delta mod 2^48 as 12 lowercase hex digits.
func AddSQN(sqn string, delta uint64) (string, error) {
	if err := CheckSQN(sqn); err != nil {
		return "", err
	}
	n, _ := new(big.Int).SetString(sqn, 16)
	n.Add(n, new(big.Int).SetUint64(delta))
	n.And(n, new(big.Int).SetUint64(1<<48-1))
	return fmt.Sprintf("%012x", n), nil
}

// CheckSQN says whether sqn is 12 hex digits.
func CheckSQN(sqn string) error {
	if len(sqn) != SQNLen {
		return fmt.Errorf("store: SQN %q is not %d hex digits", sqn, SQNLen)
	}
	for _, c := range sqn {
		if !isHex(c) {
			return fmt.Errorf("store: SQN %q is not %d hex digits", sqn, SQNLen)
		}
	}
	return nil
}

func isHex(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// FilterSM keeps the SM data sets of the requested slice (all when snssai
// is nil) that configure dnn (when dnn is not empty). Slices and DNNs match
// by the domain rules: a request without an SD asks for the slice without
// an SD, not for every SD of the SST (domain.SNSSAI.Equal, TS 23.501
// 5.15.2.1), and a configured wildcard DNN serves every DNN (domain.DNN.Match).
func FilterSM(all []models.SessionManagementSubscriptionData, snssai *models.Snssai, dnn string) []models.SessionManagementSubscriptionData {
	out := make([]models.SessionManagementSubscriptionData, 0, len(all))
	for _, sm := range all {
		if snssai != nil && (sm.SingleNssai == nil || !domain.SameModelSNSSAI(*sm.SingleNssai, *snssai)) {
			continue
		}
		if dnn != "" && !configuresDNN(sm.DnnConfigurations, domain.DNN(dnn)) {
			continue
		}
		out = append(out, sm)
	}
	return out
}

func configuresDNN(confs map[string]models.DnnConfiguration, dnn domain.DNN) bool {
	for configured := range confs {
		if domain.DNN(configured).Match(dnn) {
			return true
		}
	}
	return false
}

// SetSQNIn returns a copy of a with SQN replaced, leaving a untouched: stores
// share stored values with readers, so updates must never write in place.
func SetSQNIn(a models.AuthenticationSubscription, sqn string) models.AuthenticationSubscription {
	seq := models.SequenceNumber{SqnScheme: models.SqnScheme_GENERAL}
	if a.SequenceNumber != nil {
		seq = *a.SequenceNumber
	}
	seq.Sqn = sqn
	a.SequenceNumber = &seq
	return a
}

// FilterSMPolicy keeps the policy data of the requested slice (all when
// snssai is nil) and, inside each slice, of the DNN dnn (all when empty),
// by the same rules as FilterSM. The result shares nothing mutable with p.
func FilterSMPolicy(p models.SmPolicyData, snssai *models.Snssai, dnn string) models.SmPolicyData {
	out := p
	out.SmPolicySnssaiData = make(map[string]models.SmPolicySnssaiData, len(p.SmPolicySnssaiData))
	for key, sd := range p.SmPolicySnssaiData {
		if snssai != nil && (sd.Snssai == nil || !domain.SameModelSNSSAI(*sd.Snssai, *snssai)) {
			continue
		}
		if dnn != "" {
			kept := map[string]models.SmPolicyDnnData{}
			for d, dd := range sd.SmPolicyDnnData {
				if domain.DNN(d).Match(domain.DNN(dnn)) {
					kept[d] = dd
				}
			}
			sd.SmPolicyDnnData = kept
		}
		out.SmPolicySnssaiData[key] = sd
	}
	return out
}

// SNSSAIKey is how free5GC keys a slice in maps (smPolicySnssaiData,
// subscribedSnssaiInfos): SST in 2 hex digits, then the SD.
func SNSSAIKey(n models.Snssai) string { return fmt.Sprintf("%02x%s", n.Sst, n.Sd) }
