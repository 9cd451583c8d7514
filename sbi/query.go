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

// encode is q with the requester's type as the query string of
// NFDiscover, exactly as url.Values.Encode would write it (parameters
// sorted by name, values query-escaped). Arrays of strings go comma
// separated (form style, explode false); objects and arrays of objects as
// JSON (TS 29.501 5.2.4, TS 29.510 6.2.3.2.3.1 "content application/json").
// It is also the discovery cache's key, built on every selection: written
// straight into one buffer instead of through a url.Values map and a sort.
func (q Query) encode(requester models.NrfNfManagementNfType) string {
	var b strings.Builder
	b.Grow(128)
	param := func(name, value string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(value))
	}
	// In the order url.Values.Encode sorts them.
	if q.DNN != "" {
		param("dnn", q.DNN)
	}
	if q.PreferredLocality != "" {
		param("preferred-locality", q.PreferredLocality)
	}
	param("requester-nf-type", string(requester))
	if len(q.Services) > 0 {
		param("service-names", serviceList(q.Services))
	}
	if len(q.SNSSAIs) > 0 {
		param("snssais", jsonParam(q.SNSSAIs))
	}
	if q.TAI != nil {
		param("tai", jsonParam(q.TAI))
	}
	if q.TargetInstanceID != "" {
		param("target-nf-instance-id", q.TargetInstanceID)
	}
	param("target-nf-type", string(q.Target))
	return b.String()
}

// serviceList is service-names' value: the names comma separated.
func serviceList(services []models.ServiceName) string {
	if len(services) == 1 {
		return string(services[0])
	}
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
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
