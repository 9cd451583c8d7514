// Package security is the one crypto layer of L25GC+, used by the network
// (UDM, AUSF, AMF) and by the UE simulator alike:
//
//   - Milenage f1..f5* (TS 35.206) and the 5G HE authentication vector of
//     5G AKA (TS 33.501 6.1.3.2), AUTN checks and AUTS resynchronisation
//     (TS 33.102 6.3.3, 6.3.5);
//   - the key hierarchy of TS 33.501 Annex A: KAUSF, RES*/XRES*, HXRES*,
//     KSEAF, KAMF, NAS keys, KgNB, over the KDF of TS 33.220 B.2;
//   - SUCI concealment and deconcealment (TS 33.501 C.3, C.4): null scheme,
//     Profile A (X25519) and Profile B (P-256);
//   - NAS message protection (TS 24.501 4.4, TS 33.501 6.4): security
//     headers, NIA2 integrity, NEA2 ciphering, COUNT estimation and replay
//     rejection.
//
// Every function is checked against the published vectors in
// shared/testvectors. Nothing here panics on bad input: lengths are checked
// and errors returned.
package security
