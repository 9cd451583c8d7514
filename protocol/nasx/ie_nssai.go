package nasx

import (
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// nssaiOctets gives the value part of an NSSAI IE (TS 24.501 9.11.3.37) for
// slices the NFs hold as openapi models; the encoding is the domain package's.
func nssaiOctets(list []models.Snssai) ([]byte, error) {
	slices, err := domain.SNSSAIsFromModels(list)
	if err != nil {
		return nil, err
	}
	return domain.NSSAIToNAS(slices)
}

// NSSAIModels reads the value part of an NSSAI IE into the openapi models
// the NFs hold (TS 24.501 9.11.3.37); the decoding is the domain package's.
func NSSAIModels(b []byte) ([]models.Snssai, error) {
	slices, err := domain.NSSAIFromNAS(b)
	if err != nil {
		return nil, err
	}
	return domain.SNSSAIsToModels(slices), nil
}
