package udr

import (
	"context"
	"errors"
	"net/http"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// Application error causes (TS 29.504 6.1.7.3, TS 29.500 5.2.7.2).
const (
	causeUserNotFound     = sbi.CauseUserNotFound
	causeDataNotFound     = sbi.CauseDataNotFound
	causeInvalidFormat    = sbi.CauseInvalidMsgFormat
	causeInvalidQuery     = sbi.CauseInvalidQueryParam
	causeMandatoryMissing = sbi.CauseMandatoryIEMissing
	causeModNotAllowed    = sbi.CauseModificationNotAllowed
	causeSystemFailure    = sbi.CauseSystemFailure
	causeNotFound         = sbi.CauseResourceURIStructureNotFound
)

// writeStoreError answers a failed store call about ueID: a missing UE is
// USER_NOT_FOUND, a missing data set of a known UE DATA_NOT_FOUND (TS
// 29.504 6.1.7.3), a lost compare-and-set 409, anything else a 500 that is
// logged (the store's error stays out of the answer).
func (n *NF) writeStoreError(ctx context.Context, w http.ResponseWriter, ueID string, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		if _, aerr := n.store.AuthSubscription(ctx, ueID); aerr == nil {
			sbi.WriteProblem(w, http.StatusNotFound, causeDataNotFound, "no such data set for "+ueID)
			return
		}
		sbi.WriteProblem(w, http.StatusNotFound, causeUserNotFound, "no subscriber "+ueID)
	case errors.Is(err, store.ErrConflict):
		sbi.WriteProblem(w, http.StatusConflict, causeModNotAllowed, "the stored value is not the one the patch tests (RFC 6902 4.6)")
	default:
		n.log.Error("store", "ueId", ueID, "err", err)
		sbi.WriteProblem(w, http.StatusInternalServerError, causeSystemFailure, "subscriber data store failure")
	}
}
