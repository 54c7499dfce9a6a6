package blocklag

import "strings"

// shownByte reports whether c is in the shown alphabet that ProbeError's doc
// states: one that every quoting a log applies writes as it is.
func shownByte(c byte) bool {
	return ' ' <= c && c <= '~' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// shownAs is the byte that sanitize shows c as.
func shownAs(c byte) byte {
	if c == '"' {
		return '\''
	} else if !shownByte(c) {
		return '?'
	}
	return c
}

// sanitize writes text in the shown alphabet, byte by byte: a double quote as
// an apostrophe, any other byte outside it as one '?' (so each byte of a rune
// beyond ASCII is one). It keeps every offset, so that a secret's sanitized
// form is in the sanitized text whatever bytes stand around it. Sanitizing
// twice changes nothing.
func sanitize(text string) string {
	i := strings.IndexFunc(text, func(r rune) bool { return r > '~' || !shownByte(byte(r)) })
	if i < 0 {
		return text
	}
	b := []byte(text)
	for ; i < len(b); i++ {
		b[i] = shownAs(b[i])
	}
	return string(b)
}
