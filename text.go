package blocklag

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Check's errors end up in operators' logs, and parts of them come from
// providers: member values, RPC error messages, and the response bytes that
// net/http cites when an answer is malformed. quote and printable are the
// only ways such text enters a message; both keep it short and on one line,
// so that a hostile provider can neither flood a log nor write a line of
// its own into it.

// maxQuoted is how many bytes of one value from a provider a message shows.
const maxQuoted = 100

// maxTransportText is how many bytes of net/http's error text a message
// shows: more than maxQuoted, since net/http's own explanation comes ahead
// of any response bytes it cites.
const maxTransportText = 300

// quote shows a value that a provider sent: clipped to maxQuoted bytes, in
// Go's double-quoted form, which escapes every control character.
func quote(text string) string {
	text, cut := clip(text, maxQuoted)
	if cut {
		return strconv.Quote(text) + "..."
	}
	return strconv.Quote(text)
}

// printable shows net/http's error text: clipped to maxTransportText bytes,
// with each control character written as a \x escape.
func printable(msg string) string {
	msg, cut := clip(msg, maxTransportText)
	var b strings.Builder
	for _, r := range msg {
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	if cut {
		b.WriteString("...")
	}
	return b.String()
}

// clip returns at most max bytes of text, never splitting a character, and
// whether it left anything out.
func clip(text string, max int) (string, bool) {
	if len(text) <= max {
		return text, false
	}
	for max > 0 && !utf8.RuneStart(text[max]) {
		max--
	}
	return text[:max], true
}
