package blocklag

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode"
)

// secrets finds the secret forms of every configured endpoint in a text
// in the shown alphabet: the forms that ProbeError's documentation lists,
// each reduced as text is. Each endpoint's messages mask all endpoints'
// secrets, since endpoints of one provider share hosts, connections and
// Bases, so that one's error may quote another's request. New builds it;
// it is read-only afterwards, and so safe for concurrent use. A nil
// *secrets holds none.
//
// The forms make up an Aho-Corasick automaton: a trie of the forms in
// which each state also knows where to fall back when the text stops
// matching. Finding every form then takes one pass over a text, at most
// two steps per byte however many forms there are, so a message costs the
// same with a thousand endpoints as with two. State 0 is the empty string;
// every other state is a non-empty prefix of some form, and states are
// numbered in order of length.
type secrets struct {
	// next holds the trie's edges: next[edge(s, c)] is the state for s's
	// prefix followed by the byte c. One map for all states, since most
	// states have a single edge.
	next map[uint32]int32

	// root[c] is the edge from the empty string by c, or 0: a text mostly
	// steps from there, so those steps skip the map.
	root [256]int32

	// fail[s] is the state of the longest proper suffix of s's prefix
	// that is a state too: where matching goes on when s has no edge for
	// the next byte.
	fail []int32

	// longest[s] is the length of the longest form that ends s's prefix,
	// or 0. Every other form ending there is a suffix of that one, so
	// masking the longest masks them all.
	longest []int32

	// reach is the length of the longest form as written, before it was
	// reduced: how far past the bytes it shows a clipped text is read.
	reach int
}

// edge is the key in secrets.next of the edge from state s by byte c.
func edge(s int32, c byte) uint32 { return uint32(s)<<8 | uint32(c) }

// marker is what a masked stretch shows instead.
const marker = "[redacted]"

// newSecrets gathers the secret forms of every URL, each as configured.
func newSecrets(rawURLs []string) *secrets {
	s := &secrets{next: map[uint32]int32{}, fail: []int32{0}, longest: []int32{0}}
	parent, via := []int32{0}, []byte{0} // the edge that made each state
	type growing struct {
		form  string
		state int32 // the state of the form's bytes added so far
	}
	var live []growing
	for _, raw := range rawURLs {
		for _, f := range secretForms(raw) {
			s.reach = max(s.reach, len(f))
			if f = reduce(f); f != "" {
				live = append(live, growing{form: f})
			}
		}
	}
	// Add every form one byte at a time, all forms in step, so that
	// states come out numbered by length and fail needs no queue below.
	for depth := 0; len(live) > 0; depth++ {
		kept := live[:0]
		for _, g := range live {
			c := g.form[depth]
			child, ok := s.next[edge(g.state, c)]
			if !ok {
				child = int32(len(parent))
				s.next[edge(g.state, c)] = child
				parent, via = append(parent, g.state), append(via, c)
				s.fail, s.longest = append(s.fail, 0), append(s.longest, 0)
			}
			g.state = child
			if depth+1 == len(g.form) {
				s.longest[child] = int32(len(g.form))
			} else {
				kept = append(kept, g)
			}
		}
		live = kept
	}
	for c := range s.root {
		s.root[c] = s.next[edge(0, byte(c))]
	}
	// A state's fail and longest depend only on shorter states, which
	// come first; states of one byte fail to the empty string.
	for state := int32(1); state < int32(len(parent)); state++ {
		if p := parent[state]; p != 0 {
			s.fail[state] = s.step(s.fail[p], via[state])
		}
		s.longest[state] = max(s.longest[state], s.longest[s.fail[state]])
	}
	return s
}

// step returns the state that state moves to on byte c: its edge for c,
// or else that of the longest suffix that has one, or else the empty
// string. Each fall back shortens the match, so a text takes at most two
// steps per byte in all.
func (s *secrets) step(state int32, c byte) int32 {
	for state != 0 {
		if child, ok := s.next[edge(state, c)]; ok {
			return child
		}
		state = s.fail[state]
	}
	return s.root[c]
}

// spans returns the stretches of text that show a form, as [start, end)
// pairs in order; stretches that overlap or touch are merged into one. A
// marker that text already holds is skipped whole, so that masking again
// what was masked changes nothing, even for a one-letter password.
func (s *secrets) spans(text string) [][2]int {
	if s == nil || len(s.fail) == 1 {
		return nil
	}
	var spans [][2]int
	state := int32(0)
	hasMarker := strings.Contains(text, marker)
	for i := 0; i < len(text); i++ {
		if hasMarker && strings.HasPrefix(text[i:], marker) {
			i += len(marker) - 1
			state = 0
			continue
		}
		state = s.step(state, text[i])
		if n := int(s.longest[state]); n > 0 {
			start := i + 1 - n
			for len(spans) > 0 && start <= spans[len(spans)-1][1] {
				start = min(start, spans[len(spans)-1][0])
				spans = spans[:len(spans)-1]
			}
			spans = append(spans, [2]int{start, i + 1})
		}
	}
	return spans
}

// mask is text with every stretch that spans finds shown as the marker:
// the last step of every message, so that nothing blocklag wrote beside
// outside text (a number, "...") completes a secret.
func (s *secrets) mask(text string) string {
	masked, _ := s.masked(text, len(text))
	return masked
}

// masked is text with the spans that begin within its first n bytes shown
// as the marker, cut after n bytes or after the last of those spans,
// whichever is later. It reports whether it left anything out.
func (s *secrets) masked(text string, n int) (string, bool) {
	spans := s.spans(text)
	if spans == nil && n >= len(text) {
		return text, false
	}
	var b strings.Builder
	shown := 0
	for _, span := range spans {
		if span[0] >= n {
			break
		}
		b.WriteString(text[shown:span[0]])
		b.WriteString(marker)
		shown = span[1]
	}
	end := max(shown, min(n, len(text)))
	b.WriteString(text[shown:end])
	return b.String(), end < len(text)
}

// piece shows outside text as a message holds it between quotes: reduced
// to the shown alphabet, masked, and clipped to what its first limit bytes
// show, then "..." when anything was left out. Of text it reads only limit
// bytes and as far again as the longest form, enough to mask whole every
// secret that begins within the limit; a text of megabytes costs what a
// short one does. The result is masked once more as it reads, dots
// included, since they might complete a secret.
func (s *secrets) piece(text string, limit int) string {
	var reach int
	if s != nil {
		reach = s.reach
	}
	window := text[:min(len(text), limit+reach)]
	reduced, cut := reduceUpTo(window, limit)
	shown, cutShort := s.masked(reduced, cut)
	if cutShort || len(window) < len(text) {
		shown += "..."
	}
	return s.mask(shown)
}

// minAlone and minAloneWithoutDigit are how long, in bytes as written in
// the URL, a path segment or a query value must be to count as a secret on
// its own: hosted providers' keys are long and hold digits, while the
// words of their URL formats (v3, mainnet, ethereum, ?network=ethereum)
// are short or letters only, and must stay readable in host names.
const (
	minAlone             = 8
	minAloneWithoutDigit = 20
)

// secretForms lists the forms of the secrets of the URL raw, as New
// accepted it: its user name, password and whole user information, the
// base64 of "user:password" that a Basic Authorization header carries
// (with and without its padding), its path unless it is "/", its query,
// and each path segment and query value that is long enough to count
// alone. Each but the base64 comes in every spelling that spellings gives.
func secretForms(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	_, rest, _ := strings.Cut(raw, "://")
	authority := rest[:strings.IndexAny(rest+"/", "/?")]
	written, query, _ := strings.Cut(rest[len(authority):], "?")
	var parts, forms []string
	userinfo := authority[:max(0, strings.LastIndex(authority, "@"))]
	if name, password, _ := strings.Cut(userinfo, ":"); name != "" || password != "" {
		parts = append(parts, userinfo, name, password)
		decodedPassword, _ := u.User.Password()
		basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + decodedPassword))
		forms = append(forms, basic, strings.TrimRight(basic, "="))
	}
	if written != "/" {
		parts = append(parts, written)
		for _, segment := range strings.Split(written, "/") {
			parts = appendAlone(parts, segment)
		}
	}
	parts = append(parts, query)
	// Servers may split a query at ';' as well as at '&'. A pair without
	// '=' is a bare key, which some providers take as the API key.
	for _, pair := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		_, value, found := strings.Cut(pair, "=")
		if !found {
			value = pair
		}
		parts = appendAlone(parts, value)
	}
	for _, p := range parts {
		if p != "" {
			forms = append(forms, spellings(p)...)
		}
	}
	return forms
}

// appendAlone appends part to parts when it counts as a secret on its own.
func appendAlone(parts []string, part string) []string {
	if len(part) >= minAloneWithoutDigit || len(part) >= minAlone && strings.ContainsAny(part, "0123456789") {
		return append(parts, part)
	}
	return parts
}

// spellings are the ways a text may spell one part of a URL: as written,
// percent-decoded as a path and as a query, each decoding escaped again as
// a path and as a query, and every spelling with percent-escapes in upper-
// and in lower-case hex digits.
func spellings(written string) []string {
	out := []string{written}
	for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
		if decoded, err := unescape(written); err == nil {
			out = append(out, decoded, url.PathEscape(decoded), url.QueryEscape(decoded))
		}
	}
	for _, sp := range out {
		if strings.Contains(sp, "%") {
			out = append(out, hexCase(sp, unicode.ToUpper), hexCase(sp, unicode.ToLower))
		}
	}
	return out
}

// hexCase is text with the hex digits of each percent-escape in the case
// that to gives.
func hexCase(text string, to func(rune) rune) string {
	b := []byte(text)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1], b[i+2] = byte(to(rune(b[i+1]))), byte(to(rune(b[i+2])))
			i += 2
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
