package ransim

// A registered UE after its gNB's association ended (the AMF restarted):
// it camps on a new association, keeps its 5G-GUTI and 5G NAS security
// context (TS 24.501 5.3.1: an N2 failure moves it to 5GMM-IDLE, still
// 5GMM-REGISTERED), and its next registration is identified by the GUTI
// and integrity protected, so a network that kept its context accepts it
// without authentication (TS 24.501 5.5.1.3.2, TS 33.501 6.4.6).

// MoveTo puts the UE, CM-IDLE, under gNB g. Run it between procedures.
func (u *UE) MoveTo(g *GNB) {
	u.drain()
	u.g = g
	u.ranID.Store(0)
	u.amfID.Store(-1)
}

// Authenticated says whether the UE's last registration ran 5G AKA: the
// UE answered an Authentication Request (register clears the RAND of the
// last challenge answered, onAuthenticationRequest records it).
func (u *UE) Authenticated() bool { return u.lastRAND != nil }
