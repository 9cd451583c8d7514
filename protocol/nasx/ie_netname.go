package nasx

// NetworkName encodes a network name IE value (TS 24.501 9.11.3.35 refers to
// TS 24.008 10.5.3.5a): octet 3 = ext 1, coding scheme 000 (GSM default
// alphabet, packed 7-bit per TS 23.038 6.1.2.2), add CI 0, spare bits in last
// octet; then the packed text. Characters outside the ASCII letters, digits
// and common punctuation map to '?' since their GSM codes differ.
func NetworkName(name string) []byte {
	septets := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		septets = append(septets, gsm7(name[i]))
	}
	packed := packSeptets(septets)
	spare := (8*len(packed) - 7*len(septets)) & 7
	return append([]byte{0x80 | byte(spare)}, packed...)
}

// packSeptets packs 7-bit characters LSB first (TS 23.038 6.1.2.2.1).
func packSeptets(s []byte) []byte {
	out := make([]byte, (7*len(s)+7)/8)
	bit := 0
	for _, c := range s {
		for i := 0; i < 7; i++ {
			if c&(1<<i) != 0 {
				out[bit/8] |= 1 << (bit % 8)
			}
			bit++
		}
	}
	return out
}

func gsm7(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return c
	case c == ' ' || c == '!' || c == '"' || c == '#' || c == '%' || c == '&' || c == '\'' ||
		c == '(' || c == ')' || c == '*' || c == '+' || c == ',' || c == '-' || c == '.' ||
		c == '/' || c == ':' || c == ';' || c == '<' || c == '=' || c == '>' || c == '?':
		return c
	}
	return '?'
}
