package redact

// readingAt returns the byte that a reading of text holds at byte i, and
// how many of text's bytes make it. Read as written, each byte stands for
// itself; percent-decoded, an escape %XX (hex digits of either case) stands
// for the byte it encodes. Either way '+' reads as a space, as a query
// writes one, and the byte is then put in the alphabet.
func readingAt(text string, i int, decoded bool) (byte, int) {
	c := text[i]
	n := 1
	if decoded && isEscape(text, i) {
		c = byte(hexValue(text[i+1])<<4 | hexValue(text[i+2]))
		n = 3
	}
	if c == '+' {
		return ' ', n
	}
	return alphabetByte(c), n
}

// reading returns the whole of a reading of text, as written or decoded.
func reading(text string, decoded bool) string {
	b := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		c, n := readingAt(text, i, decoded)
		b = append(b, c)
		i += n
	}
	return string(b)
}

// isEscape reports whether text holds an escape %XX at i.
func isEscape(text string, i int) bool {
	if i+2 >= len(text) || text[i] != '%' {
		return false
	}
	return hexValue(text[i+1]) >= 0 && hexValue(text[i+2]) >= 0
}

// hexValue returns the value of c as a hex digit of either case, or -1.
func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
