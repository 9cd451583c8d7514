package main

import (
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/n2"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/amf"
	"github.com/l25gc/l25gc/nf/ausf"
	"github.com/l25gc/l25gc/nf/nrf"
	"github.com/l25gc/l25gc/nf/pcf"
	"github.com/l25gc/l25gc/nf/udm"
	"github.com/l25gc/l25gc/nf/udr"
)

func init() {
	nfKinds["nrf"] = nfKind{models.NrfNfManagementNfType_NRF,
		func(c *config.Config) config.NF { return c.NRF.NF },
		func(e *nf.Env) (nf.Function, error) { return nrf.New(e) }}
	nfKinds["udr"] = nfKind{models.NrfNfManagementNfType_UDR,
		func(c *config.Config) config.NF { return c.UDR.NF },
		func(e *nf.Env) (nf.Function, error) { return udr.New(e) }}
	nfKinds["udm"] = nfKind{models.NrfNfManagementNfType_UDM,
		func(c *config.Config) config.NF { return c.UDM.NF },
		func(e *nf.Env) (nf.Function, error) { return udm.New(e) }}
	nfKinds["ausf"] = nfKind{models.NrfNfManagementNfType_AUSF,
		func(c *config.Config) config.NF { return c.AUSF },
		func(e *nf.Env) (nf.Function, error) { return ausf.New(e) }}
	nfKinds["pcf"] = nfKind{models.NrfNfManagementNfType_PCF,
		func(c *config.Config) config.NF { return c.PCF },
		func(e *nf.Env) (nf.Function, error) { return pcf.New(e) }}
	nfKinds["amf"] = nfKind{models.NrfNfManagementNfType_AMF,
		func(c *config.Config) config.NF { return c.AMF.NF },
		func(e *nf.Env) (nf.Function, error) {
			return amf.NewWithOptions(e, amf.Options{Listen: amf.AdaptListen(n2.Options{Metrics: n2.NewMetrics(e.Registry)}.Listen)})
		}}
}
