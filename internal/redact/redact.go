// Package redact decides what text from outside blocklag may show in its
// messages: a provider's values and error messages, the text of transport
// errors, the errors an application hands to Monitor.Redact.
//
// Such text is shown in one alphabet: the printable ASCII bytes 0x20 to
// 0x7E except '"', '\', '<', '>' and '&'. A '"' is shown as an apostrophe
// and every other byte outside the alphabet as one '?', byte by byte, so
// that every offset stays where it was. Each quoting that a log, a terminal
// or a JSON encoder applies writes these bytes as they are, so redacted
// text can neither break a line nor forge the structure around it.
//
// The secrets are every endpoint's: the user name, the password, the two
// together and their base64 as a Basic Authorization header carries them;
// the whole path unless it is "/"; the whole query; and each path segment
// and each query value that looks like a key (8 bytes with a digit, or 20
// bytes). A text is read two ways, as written and percent-decoded, '+'
// read as a space and each byte put in the alphabet; a stretch of it is
// replaced by "[redacted]" when either reading holds a secret's decoded
// form, or the as-written reading holds the secret as configured. So one
// rule finds a secret however a serializer escapes it.
//
// Secrets are found with an Aho-Corasick automaton, which reads a text
// once whatever the number of secrets: the cost stays linear in the text
// and in the secrets' bytes at any number of endpoints.
package redact

import "strings"

// Limits on outside text, in bytes of what is shown.
const (
	ValueLimit = 100 // a value or a message that a provider sent
	ErrorLimit = 300 // the text of a transport error: its explanation comes first
)

// marker is what a redacted stretch of text shows instead.
const marker = "[redacted]"

// Redactor redacts the secrets of a fixed set of URLs. New builds it and
// nothing writes it afterwards, so it is safe for concurrent use. A nil
// *Redactor knows no secret: it still puts text in the alphabet and clips it.
type Redactor struct {
	secrets *automaton
	// repass is set when a secret could be completed by a marker written
	// beside it, so that Message passes until the text stands.
	repass bool
}

// New returns the Redactor of the secrets that urls hold, each URL as
// written. Its cost is linear in the secrets' bytes.
func New(urls []string) *Redactor {
	var forms []string
	for _, u := range urls {
		forms = append(forms, secretForms(u)...)
	}
	repass := false
	for _, f := range forms {
		repass = repass || touchesMarker(f)
	}
	return &Redactor{secrets: newAutomaton(forms), repass: repass}
}

// touchesMarker reports whether a marker written beside a text could
// complete form there: form holds the marker, or begins with the marker's
// end, or ends with its start, as the password "b[red" does.
func touchesMarker(form string) bool {
	if strings.Contains(form, marker) {
		return true
	}
	for i := 1; i < len(marker); i++ {
		if strings.HasSuffix(form, marker[:i]) || strings.HasPrefix(form, marker[i:]) {
			return true
		}
	}
	return false
}

// Message returns msg, a message blocklag has finished, with every stretch
// that holds a secret shown as "[redacted]". What blocklag writes beside
// outside text, a quote or a number, may complete a secret, so a message
// is redacted whole once it is written. Redacting twice changes nothing.
func (r *Redactor) Message(msg string) string {
	for {
		redacted, _ := r.upTo(msg, len(msg))
		// Text outside the stretches is left as it was, so a further pass
		// can find only a secret that a marker completes. A pass that
		// changes the text takes bytes other than markers into one, or
		// joins two markers, so the passes end, though each may take in
		// only a byte or so.
		if redacted == msg || !r.repass {
			return redacted
		}
		msg = redacted
	}
}

// Outside returns outside text as a message shows it: in the alphabet,
// every secret redacted, and clipped to what its first limit bytes show,
// then "..." when anything was left out. A "[redacted]" whose stretch
// begins within the limit is shown whole. It reads at most limit bytes and
// the lookahead past them, so a text of megabytes costs what a short one
// does.
func (r *Redactor) Outside(text string, limit int) string {
	lookahead := 0
	if r != nil {
		lookahead = r.secrets.lookahead
	}
	window := text[:min(len(text), limit+lookahead)]
	shown, cut := r.upTo(Alphabet(window), limit)
	if cut || len(window) < len(text) {
		shown += "..."
	}
	// The dots may complete a secret that ends in dots.
	return r.Message(shown)
}

// upTo returns the first n bytes of text with every secret redacted, a
// redacted stretch that begins within them shown whole, and reports
// whether anything of text was left out.
func (r *Redactor) upTo(text string, n int) (string, bool) {
	var stretches []stretch
	if r != nil {
		stretches = r.secrets.stretches(text)
	}
	if stretches == nil && n >= len(text) {
		return text, false
	}
	var b strings.Builder
	shown := 0
	for _, s := range stretches {
		if s.start >= n {
			break
		}
		b.WriteString(text[shown:s.start])
		b.WriteString(marker)
		shown = s.end
	}
	end := max(shown, min(n, len(text)))
	b.WriteString(text[shown:end])
	return b.String(), end < len(text)
}
