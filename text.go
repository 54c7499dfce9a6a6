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
// proxy's answer, a TLS certificate's names or whatever a custom Base
// wrote. quote (with quoted, its inside) is the only way such text enters a
// message, and escape the one way into the text of an error built by hand.
// quote keeps it short and puts it inside Go's double quotes, so that no
// outside text can read as part of the message's own structure (a second
// failure, say); both escape the same runes, those that plain rejects:
// every one that strconv.IsPrint rejects (C0 and C1 controls, DEL, line and
// paragraph separators, bidirectional and zero-width formatting, the BOM)
// and every byte that is not valid UTF-8. So a hostile provider, proxy or
// Base can neither flood a log, nor write a line of its own into it, nor
// reorder how it reads.

// maxQuoted is how many bytes, as shown, a message gives one value that a
// provider sent.
const maxQuoted = 100

// maxTransportText is how many bytes, as shown, a message gives a transport
// error's text: more than maxQuoted, since net/http's own explanation comes
// ahead of any response bytes it cites.
const maxTransportText = 300

// quote shows outside text in Go's double-quoted form, as quoted writes
// its inside.
func (s *secrets) quote(text string, limit int) string { return `"` + s.quoted(text, limit) + `"` }

// quoted escapes text as strconv.Quote does (which escapes exactly the
// runes that strconv.IsPrint rejects, any invalid byte, the quote and the
// backslash), masks the secrets of s in the escaped text, and clips the
// result to at most limit bytes, ending it with "..." when anything was
// left out. The clip keeps markers and escapes whole. Masking comes after
// escaping, so that no escape can complete a secret (BEL is written \a,
// which may begin a key "abc..."), and before the clip, so that a secret
// the clip would cut is not left half shown.
//
// Of text it reads only what the result can show: masking shortens what it
// replaces, so it reads on until the clip is decided, and then as far again
// as the masking of the shown part can depend on, so that no form is cut
// at the edge. A text of megabytes costs what a short one does.
func (s *secrets) quoted(text string, limit int) string {
	var reach int
	if !s.empty() {
		reach = s.reach
	}
	for n := limit + reach; ; n *= 2 {
		part, whole := text, len(text) <= n
		if !whole {
			// Cut where a character starts, when one starts near: what
			// lies beyond the reach of the clip cannot change it anyway.
			cut := n
			for k := 0; k < utf8.UTFMax && cut > 1 && !utf8.RuneStart(text[cut]); k++ {
				cut--
			}
			part = text[:cut]
		}
		escaped := strconv.Quote(part)
		escaped = escaped[1 : len(escaped)-1]
		spans := s.spans(escaped)
		end := clipEnd(escaped, spans, limit)
		if !whole && len(escaped)-end < reach {
			continue // the clip, or the masking before it, is not decided yet
		}
		var b strings.Builder
		shown := 0
		for _, span := range spans {
			if span[0] >= end {
				break
			}
			b.WriteString(escaped[shown:span[0]])
			b.WriteString(marker)
			shown = span[1]
		}
		b.WriteString(escaped[shown:end])
		if end < len(escaped) || !whole {
			b.WriteString("...")
		}
		return b.String()
	}
}

// clipEnd returns where in escaped the shown text ends when it is clipped
// to limit bytes once spans are masked: never inside a span, nor inside an
// escape or a character.
func clipEnd(escaped string, spans [][2]int, limit int) int {
	shown, next := 0, 0
	for i := 0; i < len(escaped); {
		if next < len(spans) && spans[next][0] <= i {
			if shown+len(marker) > limit {
				return i
			}
			shown += len(marker)
			i = spans[next][1]
			next++
			continue
		}
		n := unit(escaped, i, false)
		if shown+n > limit {
			return i
		}
		shown += n
		i += n
	}
	return len(escaped)
}

// escape shows text unquoted, escaping each rune that plain rejects as
// strconv.QuoteRune writes it (\n, \x1b, \u2028) and each invalid byte as
// \xNN; a backslash stays as it is. Text that is already safe comes back as
// it is, so escaping twice changes nothing. It is for text that reaches a
// message from an error built by hand.
func escape(text string) string {
	if showable(text) {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case plain(r, size):
			b.WriteString(text[i : i+size])
		case size == 1 && r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, text[i])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
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
