package nrf

// Nnrf_NFDiscovery producer (TS 29.510 5.3.2.2, resource of 6.2.3.2).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

// query is a discovery request as the NRF filters on it (TS 29.510
// 6.2.3.2.3.1). Every parameter it accepts narrows or orders the answer;
// any other is refused (parseQuery), so a consumer never gets instances
// it did not ask for because the NRF ignored a parameter.
type query struct {
	target     models.NrfNfManagementNfType
	requester  models.NrfNfManagementNfType
	services   []models.ServiceName
	snssais    []models.Snssai
	plmns      []models.PlmnId
	dnn        string
	tai        *models.Tai
	locality   string // preferred-locality
	instanceID string
	limit      int // 0 = all
}

// handleDiscover answers NFDiscover with the REGISTERED instances matching
// the query, valid for the configured validity period (6.2.6.2.3).
func (n *NF) handleDiscover(w http.ResponseWriter, r *http.Request) {
	q, missing, invalid := parseQuery(r.URL.Query())
	if len(missing) > 0 {
		// TS 29.510 6.2.3.2.3.1: target-nf-type and requester-nf-type are mandatory.
		writeInvalidParams(w, sbi.CauseMandatoryQueryParamMissing, missing)
		return
	}
	if len(invalid) > 0 {
		writeInvalidParams(w, sbi.CauseInvalidQueryParam, invalid)
		return
	}
	found := q.rank(n.reg.match(q.matches))
	res := models.SearchResult{ValidityPeriod: int32(n.validity.Seconds()), NfInstances: []models.NrfNfDiscoveryNfProfile{}}
	for _, p := range found {
		dp, err := discoveryProfile(p)
		if err != nil {
			n.log.Warn("profile not convertible for discovery", "nfInstanceId", p.NfInstanceId, "err", err)
			continue
		}
		res.NfInstances = append(res.NfInstances, dp)
	}
	sbi.WriteJSON(w, http.StatusOK, res)
}

// writeInvalidParams answers 400 naming each offending parameter
// (TS 29.500 5.2.7.2 ProblemDetails invalidParams).
func writeInvalidParams(w http.ResponseWriter, cause string, params []models.InvalidParam) {
	w.Header().Set("Content-Type", sbi.ContentTypeProblem)
	w.WriteHeader(http.StatusBadRequest)
	detail := make([]string, len(params))
	for i, p := range params {
		detail[i] = p.Param + ": " + p.Reason
	}
	_ = json.NewEncoder(w).Encode(models.ProblemDetails{Title: http.StatusText(http.StatusBadRequest),
		Status: http.StatusBadRequest, Cause: cause, Detail: strings.Join(detail, "; "), InvalidParams: params})
}

// informational parameters say who asks; they select nothing here.
var informational = map[string]bool{"requester-nf-instance-id": true, "supported-features": true}

// parseQuery reads the query parameters of 6.2.3.2.3.1; it returns the
// missing mandatory ones and the malformed or unsupported ones.
func parseQuery(v url.Values) (q query, missing, invalid []models.InvalidParam) {
	bad := func(param, reason string) {
		invalid = append(invalid, models.InvalidParam{Param: param, Reason: reason})
	}
	for _, m := range []string{"target-nf-type", "requester-nf-type"} {
		if v.Get(m) == "" {
			missing = append(missing, models.InvalidParam{Param: m, Reason: "mandatory"})
		}
	}
	for name, vals := range v {
		if p, ok := parsers[name]; ok {
			if err := p(&q, vals); err != nil {
				bad(name, err.Error())
			}
		} else if !informational[name] {
			bad(name, "not a discovery parameter this NRF supports")
		}
	}
	slices.SortFunc(invalid, func(a, b models.InvalidParam) int { return strings.Compare(a.Param, b.Param) })
	return q, missing, invalid
}

// parsers read each supported parameter into the query. Arrays of
// objects and objects are JSON in the query (TS 29.501 5.2.4, content
// application/json).
var parsers = map[string]func(q *query, vals []string) error{
	"target-nf-type":        one(func(q *query, s string) error { return nfType(&q.target, s) }),
	"requester-nf-type":     one(func(q *query, s string) error { return nfType(&q.requester, s) }),
	"service-names":         parseServices,
	"snssais":               one(func(q *query, s string) error { return parseSNSSAIs(&q.snssais, s) }),
	"target-plmn-list":      one(func(q *query, s string) error { return parsePLMNs(&q.plmns, s) }),
	"dnn":                   one(func(q *query, s string) error { q.dnn = s; return nil }),
	"tai":                   one(func(q *query, s string) error { return parseTAI(&q.tai, s) }),
	"preferred-locality":    one(func(q *query, s string) error { q.locality = s; return nil }),
	"target-nf-instance-id": one(func(q *query, s string) error { q.instanceID = s; return nil }),
	"limit":                 one(func(q *query, s string) error { return parseLimit(&q.limit, s) }),
}

// one reads a parameter that has a single value.
func one(parse func(q *query, s string) error) func(q *query, vals []string) error {
	return func(q *query, vals []string) error {
		if len(vals) != 1 {
			return fmt.Errorf("given %d times", len(vals))
		}
		return parse(q, vals[0])
	}
}

func parseServices(q *query, vals []string) error {
	for _, s := range splitList(vals) {
		q.services = append(q.services, models.ServiceName(s))
	}
	return nil
}

// nfType checks an NFType (TS 29.510 6.1.6.3.3): upper case letters,
// digits and '_', as every value of the enumeration is written.
func nfType(dst *models.NrfNfManagementNfType, s string) error {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') }) >= 0 {
		return fmt.Errorf("%q is not an NF type", s)
	}
	*dst = models.NrfNfManagementNfType(s)
	return nil
}

// parseSNSSAIs reads an array of S-NSSAIs: SST 0..255, SD 6 hex digits
// when present (TS 29.571 5.4.4.2).
func parseSNSSAIs(dst *[]models.Snssai, s string) error {
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return err
	}
	for _, sn := range *dst {
		if sn.Sst < 0 || sn.Sst > 255 {
			return fmt.Errorf("sst %d is not 0..255", sn.Sst)
		}
		if sn.Sd != "" && !isHex(sn.Sd, 6) {
			return fmt.Errorf("sd %q is not 6 hex digits", sn.Sd)
		}
	}
	return nil
}

func parsePLMNs(dst *[]models.PlmnId, s string) error {
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return err
	}
	for _, p := range *dst {
		if !validPLMN(&p) {
			return fmt.Errorf("%+v is not a PLMN (mcc 3 digits, mnc 2 or 3)", p)
		}
	}
	return nil
}

// parseTAI reads a Tai (TS 29.571 5.4.4.3): a PLMN and a TAC of 4 or 6 hex digits.
func parseTAI(dst **models.Tai, s string) error {
	var t models.Tai
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return err
	}
	if t.PlmnId == nil || !validPLMN(t.PlmnId) || !(isHex(t.Tac, 4) || isHex(t.Tac, 6)) {
		return fmt.Errorf("%s is not a TAI (plmnId and a tac of 4 or 6 hex digits)", s)
	}
	*dst = &t
	return nil
}

func parseLimit(dst *int, s string) error {
	l, err := strconv.Atoi(s)
	if err != nil || l < 1 {
		return fmt.Errorf("%q is not a positive integer", s)
	}
	*dst = l
	return nil
}

func validPLMN(p *models.PlmnId) bool {
	return isDigits(p.Mcc, 3, 3) && isDigits(p.Mnc, 2, 3)
}

func isDigits(s string, min, max int) bool {
	return len(s) >= min && len(s) <= max && strings.Trim(s, "0123456789") == ""
}

func isHex(s string, n int) bool {
	return len(s) == n && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// splitList reads an array of strings sent in form style: comma separated,
// or the parameter repeated (both occur in the field).
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// matches says whether a registered profile answers the query.
func (q query) matches(p *models.NrfNfManagementNfProfile) bool {
	return p.NfType == q.target &&
		p.NfStatus == models.NrfNfManagementNfStatus_REGISTERED &&
		(q.instanceID == "" || p.NfInstanceId == q.instanceID) &&
		q.allowsRequester(p) && q.offersService(p) && q.servesSlice(p) && q.servesPLMN(p) &&
		q.servesDNN(p) && q.servesTAI(p)
}

// allowsRequester: a profile listing allowedNfTypes is discovered only by
// those types (TS 29.510 6.1.6.2.2).
func (q query) allowsRequester(p *models.NrfNfManagementNfProfile) bool {
	return len(p.AllowedNfTypes) == 0 || slices.Contains(p.AllowedNfTypes, q.requester)
}

// offersService: at least one requested service is offered.
func (q query) offersService(p *models.NrfNfManagementNfProfile) bool {
	if len(q.services) == 0 {
		return true
	}
	for _, s := range p.NfServices {
		if slices.Contains(q.services, s.ServiceName) {
			return true
		}
	}
	return false
}

// servesSlice: a profile without sNssais serves every slice (TS 29.510
// 6.1.6.2.2); otherwise one of its entries must serve a requested S-NSSAI
// (domain.MatchModelSNSSAI: wildcardSd and sdRanges as declared, an entry
// without an SD only the SST-only slice).
func (q query) servesSlice(p *models.NrfNfManagementNfProfile) bool {
	if len(q.snssais) == 0 || len(p.SNssais) == 0 {
		return true
	}
	for _, want := range q.snssais {
		for _, have := range p.SNssais {
			if domain.MatchModelSNSSAI(have, want) {
				return true
			}
		}
	}
	return false
}

// servesPLMN: a profile without plmnList serves the NRF's PLMN, which we
// treat as any; otherwise one requested PLMN must be listed.
func (q query) servesPLMN(p *models.NrfNfManagementNfProfile) bool {
	if len(q.plmns) == 0 || len(p.PlmnList) == 0 {
		return true
	}
	for _, want := range q.plmns {
		if slices.Contains(p.PlmnList, want) {
			return true
		}
	}
	return false
}

// servesDNN: an SMF or UPF listing DNNs per slice (smfInfo, upfInfo,
// TS 29.510 6.1.6.2) serves those; a profile listing none
// does not restrict the DNN.
func (q query) servesDNN(p *models.NrfNfManagementNfProfile) bool {
	if q.dnn == "" {
		return true
	}
	var dnns []string
	if p.SmfInfo != nil {
		for _, s := range p.SmfInfo.SNssaiSmfInfoList {
			for _, d := range s.DnnSmfInfoList {
				if name, ok := d.Dnn.(string); ok {
					dnns = append(dnns, name)
				}
			}
		}
	}
	if p.UpfInfo != nil {
		for _, s := range p.UpfInfo.SNssaiUpfInfoList {
			for _, d := range s.DnnUpfInfoList {
				dnns = append(dnns, d.Dnn)
			}
		}
	}
	// DNNs compare case-insensitively (TS 23.003 9.1: labels as in DNS).
	return len(dnns) == 0 || slices.ContainsFunc(dnns, func(d string) bool { return strings.EqualFold(d, q.dnn) })
}

// servesTAI: an AMF, SMF or UPF listing TAIs (amfInfo, smfInfo, upfInfo
// taiList) serves those; a profile listing none does not restrict the TAI.
func (q query) servesTAI(p *models.NrfNfManagementNfProfile) bool {
	if q.tai == nil {
		return true
	}
	var tais []models.Tai
	if p.AmfInfo != nil {
		tais = append(tais, p.AmfInfo.TaiList...)
	}
	if p.SmfInfo != nil {
		tais = append(tais, p.SmfInfo.TaiList...)
	}
	if p.UpfInfo != nil {
		tais = append(tais, p.UpfInfo.TaiList...)
	}
	return len(tais) == 0 || slices.ContainsFunc(tais, func(t models.Tai) bool {
		return t.PlmnId != nil && *t.PlmnId == *q.tai.PlmnId && strings.EqualFold(t.Tac, q.tai.Tac)
	})
}

// rank orders the matches and applies limit. With a preferred-locality,
// instances there come first and every other gets a priority below theirs
// (TS 29.510 6.2.3.2.3.1: "the NRF should set a lower priority for any
// additional NFs ... not matching the preferred target NF location"), so
// a consumer ranking by priority keeps the preference.
func (q query) rank(found []models.NrfNfManagementNfProfile) []models.NrfNfManagementNfProfile {
	if q.locality != "" {
		here := func(p models.NrfNfManagementNfProfile) bool { return p.Locality == q.locality }
		slices.SortStableFunc(found, func(a, b models.NrfNfManagementNfProfile) int {
			switch {
			case here(a) == here(b):
				return 0
			case here(a):
				return -1
			}
			return 1
		})
		var worst int32
		for _, p := range found {
			if here(p) {
				worst = max(worst, maxPriority(p))
			}
		}
		for i := range found {
			if !here(found[i]) {
				found[i] = withPriorityAfter(found[i], worst)
			}
		}
	}
	if q.limit > 0 && len(found) > q.limit {
		found = found[:q.limit]
	}
	return found
}

// maxPriority is the largest (least preferred) priority p or one of its
// services carries.
func maxPriority(p models.NrfNfManagementNfProfile) int32 {
	m := p.Priority
	for _, s := range p.NfServices {
		m = max(m, s.Priority)
	}
	return m
}

// withPriorityAfter returns p with its priorities moved past worst
// (priority is 0..65535, TS 29.510 6.1.6.2.2); its services are copied,
// the stored profile is shared with other readers.
func withPriorityAfter(p models.NrfNfManagementNfProfile, worst int32) models.NrfNfManagementNfProfile {
	shift := func(v int32) int32 { return min(v+worst+1, 65535) }
	p.Priority = shift(p.Priority)
	services := slices.Clone(p.NfServices)
	for i := range services {
		if services[i].Priority != 0 {
			services[i].Priority = shift(services[i].Priority)
		}
	}
	p.NfServices = services
	return p
}
