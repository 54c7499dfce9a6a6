package redact

import "strings"

// inAlphabet reports whether c belongs to the alphabet of outside text.
func inAlphabet(c byte) bool {
	if c < ' ' || c > '~' {
		return false
	}
	return c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// alphabetByte returns the byte that c is shown as: a double quote as an
// apostrophe, any other byte outside the alphabet as '?', the rest as it is.
func alphabetByte(c byte) byte {
	if c == '"' {
		return '\''
	}
	if !inAlphabet(c) {
		return '?'
	}
	return c
}

// Alphabet returns text with every byte in the alphabet: a rune beyond
// ASCII becomes one '?' per byte. It knows no secret and clips nothing, for
// text that holds none, such as an endpoint's ID. Applying it twice
// changes nothing.
func Alphabet(text string) string {
	i := strings.IndexFunc(text, func(r rune) bool {
		return r > '~' || !inAlphabet(byte(r))
	})
	if i < 0 {
		return text
	}
	b := []byte(text)
	for ; i < len(b); i++ {
		b[i] = alphabetByte(b[i])
	}
	return string(b)
}
