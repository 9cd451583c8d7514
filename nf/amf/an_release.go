package amf

// AMF-initiated AN release (TS 23.502 4.2.6 step 1b): after a registration
// update from CM-IDLE (periodic, or mobility into a new TA) the UE has
// nothing more to do unless it says so with "follow-on request pending"
// (TS 24.501 5.5.1.3.4, 5.3.1.3): the AMF releases the N2 connection, the
// UE goes back to CM-IDLE with its sessions kept and its mobile reachable
// timer restarted (dropConnection, mobile_reachable.go).

import (
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// releaseUnlessFollowOn ends a completed registration update: release
// without follow-on request, else the UE stays connected.
func (n *NF) releaseUnlessFollowOn(ue *ueContext) (State, error) {
	if ue.reg.regType == nasMessage.RegistrationType5GSInitialRegistration || ue.reg.followOn || len(ue.paged) > 0 {
		return StateRegistered, nil
	}
	n.log.Debug("registration update without follow-on request: AN release", "amfUeNgapId", ue.amfID)
	return n.release(ue, ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease))
}
