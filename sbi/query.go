package sbi

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/free5gc/openapi/models"
)

// Query is one NFDiscover search (TS 29.510 6.2.3.2.3.1): which NF
// instances a consumer may use. The NRF filters by every field set; the
// consumer caches each answer under the whole query, so an SMF of one
// slice is never mistaken for the SMF of another.
//
// The fields are the query parameters L25GC+ sends today; a later
// selection (e.g. an SMF by S-NSSAI and DNN, a UPF by serving area) adds
// its parameter here and in values, and the cache key follows by itself.
type Query struct {
	Target            models.NrfNfManagementNfType // target-nf-type (mandatory)
	Services          []models.ServiceName         // service-names: one of them offered
	SNSSAIs           []models.Snssai              // snssais: one of them served
	DNN               string                       // dnn
	TAI               *models.Tai                  // tai
	PreferredLocality string                       // preferred-locality: ranks, does not filter
	TargetInstanceID  string                       // target-nf-instance-id
}

// values encodes q with the requester's type as the query string of
// NFDiscover. Arrays of strings go comma separated (form style, explode
// false); objects and arrays of objects as JSON (TS 29.501 5.2.4,
// TS 29.510 6.2.3.2.3.1 "content application/json").
func (q Query) values(requester models.NrfNfManagementNfType) url.Values {
	v := url.Values{"target-nf-type": {string(q.Target)}, "requester-nf-type": {string(requester)}}
	if len(q.Services) > 0 {
		names := make([]string, len(q.Services))
		for i, s := range q.Services {
			names[i] = string(s)
		}
		v.Set("service-names", strings.Join(names, ","))
	}
	if len(q.SNSSAIs) > 0 {
		v.Set("snssais", jsonParam(q.SNSSAIs))
	}
	if q.DNN != "" {
		v.Set("dnn", q.DNN)
	}
	if q.TAI != nil {
		v.Set("tai", jsonParam(q.TAI))
	}
	if q.PreferredLocality != "" {
		v.Set("preferred-locality", q.PreferredLocality)
	}
	if q.TargetInstanceID != "" {
		v.Set("target-nf-instance-id", q.TargetInstanceID)
	}
	return v
}

func jsonParam(v any) string {
	b, _ := json.Marshal(v) // plain structs of strings and numbers always encode
	return string(b)
}

// service is the service whose URI a selection returns: the first named.
func (q Query) service() models.ServiceName {
	if len(q.Services) == 0 {
		return ""
	}
	return q.Services[0]
}
