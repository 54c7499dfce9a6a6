package blocklag

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Check's errors end up in operators' logs and terminals, and parts of them
// come from outside: member values and RPC error messages from providers,
// and the text of transport errors, which may cite response bytes, a
// proxy's answer or whatever a custom Base wrote. quote (with quoted, its
// inside) and printable are the only ways such text enters a message, and
// escape the one way into the text of an error built by hand. The first
// two keep it short, and all escape the same runes, those that plain
// rejects: every one that
// strconv.IsPrint rejects (C0 and C1 controls, DEL, line and paragraph
// separators, bidirectional and zero-width formatting, the BOM) and every
// byte that is not valid UTF-8. So a hostile provider, proxy or Base can
// neither flood a log, nor write a line of its own into it, nor reorder how
// it reads.

// maxQuoted is how many bytes of one value from a provider a message shows.
const maxQuoted = 100

// maxTransportText is how many bytes of a transport error's text a message
// shows: more than maxQuoted, since net/http's own explanation comes ahead
// of any response bytes it cites.
const maxTransportText = 300

// quote shows a value that a provider sent: clipped to maxQuoted bytes, in
// Go's double-quoted form, which escapes exactly the runes that
// strconv.IsPrint rejects and any invalid byte, with "..." before the
// closing quote when it was clipped.
func quote(text string) string { return `"` + quoted(text) + `"` }

// quoted is quote without its quotes: what an RPCError's Message holds.
func quoted(text string) string {
	text, cut := clip(text, maxQuoted)
	q := strconv.Quote(text)
	q = q[1 : len(q)-1]
	if cut {
		q += "..."
	}
	return q
}

// printable shows a transport error's text unquoted, escaping the same runes
// as quote, each as strconv.QuoteRune writes it (\n, \x1b, \u2028), and each
// invalid byte as \xNN. The result is at most maxTransportText bytes,
// escapes included, plus "..." when text was cut; an escape is never cut in
// two. A backslash stays as it is, so that net/http's own quoting reads as
// it does elsewhere: text that looks like an escape cannot forge a line.
func printable(text string) string { return escapeWithin(text, maxTransportText) }

// escape is printable without the limit on length. Text that is already
// safe comes back as it is, so escaping twice changes nothing.
func escape(text string) string {
	if showable(text) {
		return text
	}
	return escapeWithin(text, -1)
}

// escapeWithin escapes text as printable does, within limit bytes, or
// whole when limit is negative.
func escapeWithin(text string, limit int) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		shown := text[i : i+size]
		switch {
		case plain(r, size): // shown as it is
		case size == 1 && r == utf8.RuneError:
			shown = fmt.Sprintf(`\x%02x`, text[i])
		default:
			q := strconv.QuoteRune(r)
			shown = q[1 : len(q)-1]
		}
		if limit >= 0 && b.Len()+len(shown) > limit {
			b.WriteString("...")
			break
		}
		b.WriteString(shown)
		i += size
	}
	return b.String()
}

// plain reports whether the rune r, decoded from size bytes, may appear in
// a message as itself: it is valid UTF-8 and strconv.IsPrint accepts it.
// This is the one definition of what is safe to show.
func plain(r rune, size int) bool {
	return strconv.IsPrint(r) && !(size == 1 && r == utf8.RuneError)
}

// showable reports whether every rune of text is plain, so that it may be
// shown as it is.
func showable(text string) bool {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !plain(r, size) {
			return false
		}
		i += size
	}
	return true
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
