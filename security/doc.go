// Package security is the one crypto layer of L25GC+, used by the network
// (UDM, AUSF, AMF) and by the UE simulator alike.
//
//   - Milenage f1, f1*, f2..f5, f5* and OPc (TS 35.206 4.1), the 5G HE
//     authentication vector (TS 33.501 6.1.3.2), the USIM's AUTN checks with
//     MAC failure, synchronisation failure and the AMF separation bit kept
//     apart (TS 33.102 6.3.3, TS 33.501 6.1.3.2), and re-synchronisation
//     with AUTS (TS 33.102 6.3.3, 6.3.5): milenage.go, aka.go.
//   - The key hierarchy of TS 33.501 Annex A over the KDF of TS 33.220 B.2
//     (every parameter followed by its 2-byte length): KAUSF (A.2), RES* and
//     XRES* (A.4), HRES* and HXRES* (A.5), KSEAF (A.6), KAMF (A.7), KNASenc
//     and KNASint (A.8), KgNB (A.9); the serving network name of TS 24.501
//     9.12.1: kdf.go. DeriveX checks input lengths; X is the unchecked form.
//   - SUCI (TS 33.501 6.12, Annex C): null scheme, ECIES Profile A (X25519)
//     and Profile B (P-256, compressed points), X9.63 KDF, AES-128-CTR,
//     HMAC-SHA-256/64; the MSIN as BCD scheme input (TS 24.501 9.11.3.4):
//     suci.go, ecies.go.
//   - NAS protection (TS 24.501 4.4, TS 33.501 6.4): security protected
//     5GMM messages with NIA2/NEA2 (free5GC nas/security), COUNT estimation
//     from the 8-bit SQN and replay rejection: nas.go (stateless functions
//     and ReceiveCount) and nas_context.go (NASContext, one per UE).
//
// The tests reproduce the published vectors of shared/testvectors (TS 35.208
// set 1, TS 33.501 C.4), RFC 5448 for the KDF, and TS 33.401 C.1/C.2 for
// NEA2/NIA2. Nothing here panics on input from the network: lengths and
// points are checked and errors returned (see FuzzDeconcealSUCI,
// FuzzUnprotectNAS).
package security
