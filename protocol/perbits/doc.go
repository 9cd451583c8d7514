// Package perbits is a small bit writer and reader for ASN.1 aligned PER
// (ITU-T X.691): fields of a few bits packed most significant bit first,
// octet alignment with zero padding (X.691 10.1.3), and the length
// determinants of X.691 10.9 up to 16383, the largest not fragmented.
//
// It holds no knowledge of any ASN.1 module: protocol packages (NGAP in
// protocol/ngapx) write their hot messages with it by hand, where the
// reflective free5gc/aper coder costs tens of microseconds per message.
package perbits
