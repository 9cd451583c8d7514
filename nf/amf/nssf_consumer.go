package amf

// Network slice selection during registration (TS 23.502 4.2.2.2.3: the
// AMF asks the NSSF, Nnssf_NSSelection_Get, TS 29.531 5.2.2.2.2).
//
// Decision: the NSSF's answer decides the allowed NSSAI; when the NSSF
// cannot be reached (not deployed, down, answering 5xx or garbage) the AMF
// falls back on its own computation (allowedNSSAI: requested ∩ subscribed
// ∩ served), the same rule over the same configuration, so a core without
// an NSSF still registers UEs and a failing NSSF costs no registration.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// SliceSelector asks the NSSF which slices a UE may use.
type SliceSelector interface {
	// ForRegistration is Nnssf_NSSelection_Get for registration (TS
	// 29.531 6.1.3.2.3.1, slice-info-request-for-registration).
	ForRegistration(ctx context.Context, nfID string, info models.SliceInfoForRegistration, tai models.Tai) (models.AuthorizedNetworkSliceInfo, error)
}

// NSSelectionPath is the Nnssf_NSSelection resource (TS 29.531 6.1.3.2.1).
const NSSelectionPath = "/nnssf-nsselection/v2/network-slice-information"

type sbiSlices struct {
	c       *sbi.Client
	nrf     *sbi.NRFClient
	answers *nssfAnswers
}

// NewSBISlices returns the SliceSelector that reaches an NSSF found
// through nrf.
func NewSBISlices(c *sbi.Client, nrf *sbi.NRFClient) SliceSelector {
	return &sbiSlices{c: c, nrf: nrf, answers: newNSSFAnswers(time.Now)}
}

func (s *sbiSlices) ForRegistration(ctx context.Context, nfID string, info models.SliceInfoForRegistration, tai models.Tai) (models.AuthorizedNetworkSliceInfo, error) {
	var out models.AuthorizedNetworkSliceInfo
	if s.nrf == nil {
		return out, fmt.Errorf("no NRF to find an NSSF")
	}
	base, err := s.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_NSSF, models.ServiceName_NNSSF_NSSELECTION)
	if err != nil {
		return out, fmt.Errorf("no reachable NSSF: %v", err)
	}
	ij, _ := json.Marshal(info)
	tj, _ := json.Marshal(tai)
	q := url.Values{"nf-type": {string(models.NrfNfManagementNfType_AMF)}, "nf-id": {nfID},
		"slice-info-request-for-registration": {string(ij)}, "tai": {string(tj)}}
	uri := base + NSSelectionPath + "?" + q.Encode()
	if a, ok := s.answers.get(uri); ok {
		return a, nil
	}
	if _, err = s.c.Do(ctx, http.MethodGet, uri, nil, &out); err != nil {
		return out, err
	}
	s.answers.put(uri, out)
	return out, nil
}

// sliceRequest is what the AMF tells the NSSF (TS 29.531 6.1.6.2.2): the
// requested NSSAI and the subscribed S-NSSAIs, defaults marked.
func sliceRequest(requested []models.Snssai, sub *models.Nssai) models.SliceInfoForRegistration {
	info := models.SliceInfoForRegistration{RequestedNssai: requested}
	if sub == nil {
		return info
	}
	for i := range sub.DefaultSingleNssais {
		info.SubscribedNssai = append(info.SubscribedNssai, models.SubscribedSnssai{SubscribedSnssai: &sub.DefaultSingleNssais[i], DefaultIndication: true})
	}
	for i := range sub.SingleNssais {
		info.SubscribedNssai = append(info.SubscribedNssai, models.SubscribedSnssai{SubscribedSnssai: &sub.SingleNssais[i]})
	}
	return info
}

// askNSSF runs on the registration's SBI goroutine (completeRegistration):
// the NSSF's answer, or nil when it cannot be had (see the decision above).
func (n *NF) askNSSF(ctx context.Context, supi string, requested []models.Snssai, sub *models.Nssai, tai models.Tai) *models.AuthorizedNetworkSliceInfo {
	got, err := n.opts.Slices.ForRegistration(ctx, n.id, sliceRequest(requested, sub), tai)
	if err != nil {
		n.log.Info("NSSF not reached; allowed NSSAI computed by the AMF", "supi", supi, "err", err)
		return nil
	}
	return &got
}

// allowedFrom takes the allowed NSSAI for 3GPP access from the NSSF's
// answer, or computes it when there is none.
func (n *NF) allowedFrom(nssf *models.AuthorizedNetworkSliceInfo, requested []models.Snssai, sub *models.Nssai) []models.Snssai {
	if nssf == nil {
		return n.allowedNSSAI(requested, sub)
	}
	var out []models.Snssai
	for _, a := range nssf.AllowedNssaiList {
		if a.AccessType != "" && a.AccessType != models.AccessType__3_GPP_ACCESS {
			continue
		}
		for _, s := range a.AllowedSnssaiList {
			if s.AllowedSnssai != nil && !containsSNSSAI(out, *s.AllowedSnssai) {
				out = append(out, *s.AllowedSnssai)
			}
		}
	}
	return out
}
