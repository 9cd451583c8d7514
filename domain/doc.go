// Package domain holds the identifiers every NF, the simulator and the config
// share — PLMN, TAI, S-NSSAI, GUAMI, DNN and SUPI/IMSI — each with one parse,
// one validation, one equality and, where the specifications define one, one
// matching rule, and the conversions to and from the forms the wire and the
// SBI carry them in: free5GC's openapi models (TS 29.571), NGAP IEs
// (ngapType, TS 38.413) and NAS value octets (TS 24.501).
//
// Code outside this package converts through it and never packs BCD, SD hex
// or AMF ID bits itself, so two NFs can never disagree on what an identifier
// is or when two of them are the same.
package domain
