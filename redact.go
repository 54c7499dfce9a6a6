package blocklag

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
)

// secrets finds, in a text in the shown alphabet, the forms of every
// endpoint's secrets that ProbeError's documentation lists, each reduced
// as text is: every endpoint's messages mask all endpoints' secrets, since
// endpoints of one provider share hosts, connections and Bases. New builds
// it, read-only afterwards; a nil *secrets holds none.
//
// The forms make up an Aho-Corasick automaton: a trie in which each state
// also knows where to fall back when the text stops matching, so that one
// pass over a text, at most two steps per byte, finds every form however
// many endpoints there are. State 0 is the empty string, every other state
// a non-empty prefix of some form, numbered in order of length.
type secrets struct {
	next    map[uint32]int32 // next[edge(s, c)]: the state of s's prefix and then c; one map, as most states have one edge
	root    [256]int32       // the edges from state 0, where a text mostly steps, kept out of the map
	fail    []int32          // fail[s]: the state of the longest proper suffix of s's prefix that is one
	longest []int32          // longest[s]: the longest form ending s's prefix, which holds any other one ending there; or 0
	reach   int              // the longest form as written, before it was reduced: how far past a clip a text is read
}

// edge is the key in secrets.next of the edge from state s by byte c.
func edge(s int32, c byte) uint32 { return uint32(s)<<8 | uint32(c) }

const marker = "[redacted]" // what a masked stretch shows instead

// newSecrets gathers the secret forms of every endpoint's URL.
func newSecrets(eps []endpoint) *secrets {
	s := &secrets{next: map[uint32]int32{}, fail: []int32{0}, longest: []int32{0}}
	parent, via := []int32{0}, []byte{0} // the edge that made each state
	type growing struct {
		form  string
		state int32 // that of the form's bytes added so far
	}
	var live []growing
	for _, ep := range eps {
		for _, f := range secretForms(ep.url) {
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
// else that of its longest suffix that has one, else 0.
func (s *secrets) step(state int32, c byte) int32 {
	for state != 0 {
		if child, ok := s.next[edge(state, c)]; ok {
			return child
		}
		state = s.fail[state]
	}
	return s.root[c]
}

// spans returns the stretches of text that show a form, in order, merging
// those that overlap or touch, and skipping a marker that text holds, so
// that masking again changes nothing.
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

// mask shows every stretch that spans finds as the marker: the last step of
// every message, so that nothing written beside outside text completes a
// secret.
func (s *secrets) mask(text string) string {
	masked, _ := s.masked(text, len(text))
	return masked
}

// masked is mask for the spans that begin within text's first n bytes,
// cut after n bytes or the last of them, and whether it left anything out.
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

// piece shows outside text as a message quotes it: reduced, masked, clipped
// to what its first limit bytes show, and "..." when cut. It reads limit
// bytes and as far again as the longest form, so a text of megabytes costs
// what a short one does, and masks the result again for the dots' sake.
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

// secretForms lists the forms of the secrets of the URL raw, as New
// accepted it, that ProbeError's documentation lists.
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
			if alone(segment) {
				parts = append(parts, segment)
			}
		}
	}
	parts = append(parts, query)
	// Servers may split a query at ';' too; a pair without '=' is a bare key.
	for _, pair := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		if value := pair[strings.Index(pair, "=")+1:]; alone(value) {
			parts = append(parts, value)
		}
	}
	for _, p := range parts {
		if p != "" {
			forms = append(forms, spellings(p)...)
		}
	}
	return forms
}

// alone reports whether a path segment or query value, as written, counts
// as a secret on its own: hosted keys are long and hold digits, while the
// words of URL formats (v3, mainnet, ?network=ethereum) must stay readable.
func alone(part string) bool {
	return len(part) >= 20 || len(part) >= 8 && strings.ContainsAny(part, "0123456789")
}

// spellings are the ways a text may spell one part of a URL: as written,
// decoded as a path and as a query, re-escaped both ways, each with upper-
// and lower-case hex escapes.
func spellings(written string) []string {
	out := []string{written}
	for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
		if decoded, err := unescape(written); err == nil {
			out = append(out, decoded, url.PathEscape(decoded), url.QueryEscape(decoded))
		}
	}
	for _, sp := range out {
		if strings.Contains(sp, "%") { // else both would be sp again
			out = append(out, percentEscape.ReplaceAllStringFunc(sp, strings.ToUpper),
				percentEscape.ReplaceAllStringFunc(sp, strings.ToLower))
		}
	}
	return out
}

var percentEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
