package blocklag

import (
	"strings"
	"unicode/utf8"
)

// shownByte reports whether c is in the shown alphabet that ProbeError's
// doc states: one that every quoting a log applies writes as it is.
func shownByte(c byte) bool {
	return ' ' <= c && c <= '~' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// reduce writes text in the shown alphabet: a double quote as an
// apostrophe, anything else outside it as one '?'. Reducing twice changes
// nothing.
func reduce(text string) string {
	reduced, _ := reduceUpTo(text, len(text))
	return reduced
}

// reduceUpTo is reduce, also returning how long the reduction of the
// characters that begin within text's first n bytes is.
func reduceUpTo(text string, n int) (string, int) {
	if !strings.ContainsFunc(text, func(r rune) bool { return r > '~' || !shownByte(byte(r)) }) {
		return text, min(n, len(text))
	}
	var b strings.Builder
	cut := -1
	for i := 0; i < len(text); {
		if cut < 0 && i >= n {
			cut = b.Len()
		}
		c, size := text[i], 1
		switch {
		case shownByte(c):
		case c == '"':
			c = '\''
		default:
			c = '?'
			_, size = utf8.DecodeRuneInString(text[i:])
		}
		b.WriteByte(c)
		i += size
	}
	if cut < 0 {
		cut = b.Len()
	}
	return b.String(), cut
}
