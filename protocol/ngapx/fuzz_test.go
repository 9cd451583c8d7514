package ngapx

import "testing"

// FuzzDecodeNGAP: the AMF's NGAP path never panics, whatever arrives: the
// decoder, the summary that routes a PDU, the parsers of the messages the
// AMF reads, and what it sends back built from what it read.
func FuzzDecodeNGAP(f *testing.F) {
	for _, seeds := range []map[string][]byte{samples(f), uplinkSamples(f)} {
		for _, b := range seeds {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pdu, err := Decode(b)
		if err != nil {
			return
		}
		if s, err := Summarize(pdu); err == nil {
			_ = CauseString(s.Cause) // logged for release requests, setup failures, error indications
		}
		_, _ = ParseNGSetupRequest(pdu)
		_, _ = ParseRANConfigurationUpdate(pdu)
		_, _ = ParseInitialUEMessage(pdu)
		_, _ = ParseUERadioCapability(pdu)
		_, _ = ParsePDUSessionResourceAnswer(pdu)
		_, _ = ParseInitialContextSetupOutcomes(pdu) // a Service Request's sessions (TS 23.502 4.2.3.2 step 13)
		_, _, _ = ReleaseRequestSessions(pdu)        // the AN release's sessions (TS 23.502 4.2.6)
		_ = Criticality(pdu)                         // decides whether an unhandled procedure gets an Error Indication
		if _, part, err := ResetAll(pdu); err == nil {
			// TS 38.413 8.7.4.2.1: a partial reset is acknowledged with its list.
			_, _ = BuildNGResetAcknowledge(part)
		}
	})
}
