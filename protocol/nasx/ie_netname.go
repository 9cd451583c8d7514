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

// DecodeNetworkName reads a network name IE (TS 24.008 10.5.3.5a) coded in
// GSM 7-bit default alphabet or UCS2.
func DecodeNetworkName(b []byte) string {
	if len(b) < 1 {
		return ""
	}
	coding := (b[0] >> 4) & 0x7
	spare := int(b[0] & 0x7)
	text := b[1:]
	if coding == 1 { // UCS2
		r := make([]rune, 0, len(text)/2)
		for i := 0; i+1 < len(text); i += 2 {
			r = append(r, rune(text[i])<<8|rune(text[i+1]))
		}
		return string(r)
	}
	nchars := (len(text)*8 - spare) / 7
	out := make([]byte, 0, nchars)
	for i := 0; i < nchars; i++ {
		bit := i * 7
		v := uint16(text[bit/8]) >> (bit % 8)
		if bit%8 > 1 && bit/8+1 < len(text) {
			v |= uint16(text[bit/8+1]) << (8 - bit%8)
		}
		out = append(out, byte(v&0x7F))
	}
	return string(out)
}
