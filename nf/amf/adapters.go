package amf

// There is no default N2 listener: the caller passes one (cmd/l25gc:
// amf.AdaptListen(n2.Listen)), so the AMF does not import its transport.
// The default Crypto is package security (securityCrypto).
