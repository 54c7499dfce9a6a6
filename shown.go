package blocklag

import "strings"

// inAlphabet reports whether c belongs to the alphabet that outside text is
// shown in: printable ASCII without '"', '\', '<', '>' and '&'. Every quoting
// that a log, a terminal or a JSON encoder applies writes these bytes as they
// are, so shown text can neither break a line nor forge its structure.
func inAlphabet(c byte) bool {
	if c < ' ' || c > '~' {
		return false
	}
	return c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// reducedByte returns the byte that c is shown as: a double quote as an
// apostrophe, any other byte outside the alphabet as '?', the rest as it is.
func reducedByte(c byte) byte {
	if c == '"' {
		return '\''
	}
	if !inAlphabet(c) {
		return '?'
	}
	return c
}

// reduce returns text with every byte shown as reducedByte shows it. A rune
// beyond ASCII becomes one '?' per byte, so every offset stays where it was
// and a secret's reduced form is found in the reduced text whatever bytes
// stand around it. Reducing twice changes nothing.
func reduce(text string) string {
	i := strings.IndexFunc(text, func(r rune) bool {
		return r > '~' || !inAlphabet(byte(r))
	})
	if i < 0 {
		return text
	}
	b := []byte(text)
	for ; i < len(b); i++ {
		b[i] = reducedByte(b[i])
	}
	return string(b)
}
