package udr

// Several provisioned data sets in one read: TS 29.505 5.2.2.1 (resource
// provisioned-data, query dataset-names, answer ProvisionedDataSets). The
// UDM reads the AM data and the SMF selection data of a registering UE
// this way (TS 23.502 4.2.2.2.2 step 14b), one UDR round trip for both.

import (
	"errors"
	"net/http"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// Data set names this UDR answers (TS 29.505 6.1.6.3.2 DataSetName).
const (
	dataSetAM     = "AM"
	dataSetSMFSel = "SMF_SEL"
)

// getProvisionedData answers the named data sets the UE has; a set it does
// not have is left out. None of them: 404 as for a single set
// (USER_NOT_FOUND for an unknown UE, DATA_NOT_FOUND otherwise). Names of
// sets this UDR does not keep are ignored; no name is 400.
func (n *NF) getProvisionedData(w http.ResponseWriter, r *http.Request) {
	ue, plmn := r.PathValue("ueId"), r.PathValue("servingPlmnId")
	names := dataSetNames(r.URL.Query()["dataset-names"])
	if len(names) == 0 {
		sbi.WriteProblem(w, http.StatusBadRequest, causeInvalidQuery, "dataset-names names no data set")
		return
	}
	var out models.ProvisionedDataSets
	var missing error
	for name := range names {
		var err error
		switch name {
		case dataSetAM:
			out.AmData, err = n.store.AMData(r.Context(), ue, plmn)
		case dataSetSMFSel:
			out.SmfSelData, err = n.store.SMFSelection(r.Context(), ue, plmn)
		default:
			continue
		}
		if errors.Is(err, store.ErrNotFound) {
			missing = err
			continue
		}
		if err != nil {
			n.writeStoreError(r.Context(), w, ue, err)
			return
		}
	}
	if out.AmData == nil && out.SmfSelData == nil {
		if missing == nil {
			missing = store.ErrNotFound // only sets this UDR does not keep
		}
		n.writeStoreError(r.Context(), w, ue, missing)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, out)
}

// dataSetNames reads dataset-names, comma-separated (explode false) or
// repeated.
func dataSetNames(vals []string) map[string]bool {
	names := map[string]bool{}
	for _, v := range vals {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				names[name] = true
			}
		}
	}
	return names
}
