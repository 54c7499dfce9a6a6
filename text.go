package blocklag

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Check's errors end up in operators' logs and terminals, and parts of them
// come from outside: member values and RPC error messages from providers,
// and the text of transport errors, which may cite response bytes, a
// proxy's answer or whatever a custom Base wrote. quote and printable are
// the only ways such text enters a message. Both keep it short, and both
// escape the same runes, those that plain rejects: every one that
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
// strconv.IsPrint rejects and any invalid byte.
func quote(text string) string {
	text, cut := clip(text, maxQuoted)
	if cut {
		return strconv.Quote(text) + "..."
	}
	return strconv.Quote(text)
}

// refusal is an answer judged unacceptable: a message whose %s verbs show
// values the provider sent. It keeps the values raw until the message is
// rendered, so that the endpoint's secrets, which a provider may echo back,
// can be masked in them before they are clipped.
type refusal struct {
	format string   // one %s for each value
	values []string // as the provider sent them
	json   bool     // the values are undecoded JSON text
}

func refuse(format string, values ...string) error { return &refusal{format: format, values: values} }

func (r *refusal) Error() string { return r.render(nil) }

// render shows each value with quote, after masking forms in it. A JSON
// value whose decoded strings or numbers hold a secret, which its text may
// hide behind JSON escapes such as \/ or \u0053, is shown as [redacted]
// whole.
func (r *refusal) render(forms []string) string {
	shown := make([]any, len(r.values))
	for i, v := range r.values {
		if r.json && decodedHolds(v, forms) {
			v = "[redacted]"
		}
		shown[i] = quote(mask(v, forms))
	}
	return fmt.Sprintf(r.format, shown...)
}

// decodedHolds reports whether any string, member name or number in the
// JSON text value, once decoded, holds one of forms.
func decodedHolds(value string, forms []string) bool {
	if len(forms) == 0 {
		return false // nothing to look for: the common case of Error
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // the end of value; judge only refuses valid JSON values
		}
		var text string
		switch t := tok.(type) {
		case string:
			text = t
		case json.Number:
			text = t.String()
		default:
			continue
		}
		if holdsAny(text, forms) {
			return true
		}
	}
}

// printable shows a transport error's text unquoted, escaping the same runes
// as quote, each as strconv.QuoteRune writes it (\n, \x1b, \u2028), and each
// invalid byte as \xNN. The result is at most maxTransportText bytes,
// escapes included, plus "..." when text was cut; an escape is never cut in
// two. A backslash stays as it is, so that net/http's own quoting reads as
// it does elsewhere: text that looks like an escape cannot forge a line.
func printable(text string) string {
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
		if b.Len()+len(shown) > maxTransportText {
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
