package blocklag

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// matcher finds every endpoint's secrets in a text, both read as canonicalAt
// reads them, so that one rule covers every spelling. Every endpoint's messages
// mask all endpoints' secrets: endpoints of one provider share hosts,
// connections and Bases. New builds it, read-only afterwards; a nil *matcher
// holds none. It is an Aho-Corasick automaton: a trie of the forms whose states
// also know where to fall back when a text stops matching, so one pass finds
// every form. State 0 is the empty string; states are numbered by length, then
// prefix, so that the children of a state are consecutive and sorted by byte.
type matcher struct {
	via     []byte  // via[s]: the last byte of state s's prefix
	lo      []int32 // the children of s are the states lo[s] to lo[s+1]-1
	fail    []int32 // fail[s]: the state of the longest proper suffix of s's prefix that is one
	longest []int32 // longest[s]: the longest form ending s's prefix, which holds any other one ending there; or 0
	reach   int     // how far past a clip a text is read: the longest spelling of a form, each byte escaped
}

const marker = "[redacted]" // what a masked stretch shows instead

// newMatcher gathers the secret forms of every endpoint's URL, in time and
// memory linear in their bytes.
func newMatcher(eps []endpoint) *matcher {
	var forms []string
	for _, ep := range eps {
		forms = append(forms, secretForms(ep.url)...)
	}
	slices.Sort(forms) // so that the children of a state are made one after another
	forms = slices.Compact(forms)
	total, reach := 1, 0      // how many states there can be, and how far past a clip a text is read
	for _, f := range forms { // none empty
		total, reach = total+len(f), max(reach, 3*len(f))
	}
	m := &matcher{via: make([]byte, 1, total), lo: append(make([]int32, 0, total+1), -1), fail: make([]int32, 1, total), longest: make([]int32, 1, total), reach: reach}
	parent := make([]int32, 1, total)
	live, at := forms, make([]int32, len(forms)) // the forms still growing, and the state each one's bytes reached
	// Add every form one byte at a time, all forms in step, so that states come
	// out numbered by length and fail needs no queue below.
	for depth := 0; len(live) > 0; depth++ {
		kept, last := 0, int32(0) // last: the state made last at this depth; 0 before any
		for j, f := range live {
			if c := f[depth]; last == 0 || parent[last] != at[j] || m.via[last] != c {
				last = int32(len(m.via))
				if m.lo[at[j]] < 0 {
					m.lo[at[j]] = last
				}
				m.via, parent = append(m.via, c), append(parent, at[j])
				m.lo, m.fail, m.longest = append(m.lo, -1), append(m.fail, 0), append(m.longest, 0)
			}
			if depth+1 == len(f) {
				m.longest[last] = int32(len(f))
			} else {
				live[kept], at[kept] = f, last
				kept++
			}
		}
		live, at = live[:kept], at[:kept]
	}
	// A state without children has an empty range at the next one's.
	m.lo = append(m.lo, int32(len(m.via)))
	for s := len(m.via) - 1; s >= 0; s-- {
		if m.lo[s] < 0 {
			m.lo[s] = m.lo[s+1]
		}
	}
	// A state's fail and longest depend only on shorter states, which come
	// first; states of one byte fail to the empty string.
	for s := int32(1); s < int32(len(m.via)); s++ {
		if p := parent[s]; p != 0 {
			m.fail[s] = m.step(m.fail[p], m.via[s])
		}
		m.longest[s] = max(m.longest[s], m.longest[m.fail[s]])
	}
	return m
}

// child returns the child of state s by byte c, or 0 when it has none.
func (m *matcher) child(s int32, c byte) int32 {
	i, found := slices.BinarySearch(m.via[m.lo[s]:m.lo[s+1]], c)
	if !found {
		return 0
	}
	return m.lo[s] + int32(i)
}

// step returns the state that state moves to on byte c: its child by c, else
// that of its longest suffix that has one, else the empty string's, or 0.
func (m *matcher) step(state int32, c byte) int32 {
	for state != 0 {
		if next := m.child(state, c); next != 0 {
			return next
		}
		state = m.fail[state]
	}
	return m.child(0, c)
}

// canonicalAt returns the byte that text reads as at i, and how many of text's
// bytes that takes: an escape %XX, hex of either case, is the byte it encodes;
// '+' reads as a space, as a query writes one; the rest as sanitize shows it.
func canonicalAt(text string, i int) (byte, int) {
	c, n := text[i], 1
	if isEscape(text, i) {
		c, n = byte(hexValue(text[i+1])<<4|hexValue(text[i+2])), 3
	}
	if c == '+' {
		return ' ', n
	}
	return shownAs(c), n
}

// isEscape reports whether text holds an escape %XX at i.
func isEscape(text string, i int) bool {
	return i+2 < len(text) && text[i] == '%' && hexValue(text[i+1])|hexValue(text[i+2]) >= 0
}

// hexValue returns c's value as a hex digit of either case, or -1: the
// digits stand twice, lower then upper case, so an index mod 16 is the value,
// and -1 stays -1 (which isEscape relies on: -1 | v is negative).
func hexValue(c byte) int { return strings.IndexByte("0123456789abcdef0123456789ABCDEF", c) % 16 }

// canonical is text as canonicalAt reads it.
func canonical(text string) string {
	b := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		c, n := canonicalAt(text, i)
		b, i = append(b, c), i+n
	}
	return string(b)
}

// spans returns the stretches of text, as written, whose canonical reading
// holds a form, in order, merging those that overlap or touch. A stretch that
// reaches into a marker already in text takes in the whole marker, so that a
// marker is never cut (masking twice changes nothing), while a secret that runs
// across one is found all the same.
func (m *matcher) spans(text string) [][2]int {
	if m == nil || len(m.via) == 1 {
		return nil
	}
	// First in canonical bytes: from and to count them; end is where in
	// text the stretch ends.
	type found struct{ from, to, end int }
	var fs []found
	state := int32(0)
	for i, k := 0, 0; i < len(text); k++ {
		c, n := canonicalAt(text, i)
		i += n
		state = m.step(state, c)
		if l := int(m.longest[state]); l > 0 {
			from := k + 1 - l
			for len(fs) > 0 && from <= fs[len(fs)-1].to {
				from = min(from, fs[len(fs)-1].from)
				fs = fs[:len(fs)-1]
			}
			fs = append(fs, found{from, k + 1, i})
		}
	}
	var spans [][2]int
	for _, f := range fs {
		// Walk back over the stretch's canonical bytes: a '%' three bytes back
		// always starts a token, as no escape holds one.
		start := f.end
		for left := f.to - f.from; left > 0; left-- {
			if start >= 3 && isEscape(text, start-3) {
				start -= 3
			} else {
				start--
			}
		}
		start, _ = markerAround(text, start)
		_, end := markerAround(text, f.end-1)
		if n := len(spans); n > 0 && start <= spans[n-1][1] {
			spans[n-1][1] = max(spans[n-1][1], end)
		} else {
			spans = append(spans, [2]int{start, end})
		}
	}
	return spans
}

// markerAround returns the stretch of the marker that holds text's byte i, or
// of byte i alone when none does.
func markerAround(text string, i int) (int, int) {
	from := max(0, i-len(marker)+1)
	if at := strings.Index(text[from:min(len(text), i+len(marker))], marker); at >= 0 {
		return from + at, from + at + len(marker)
	}
	return i, i + 1
}

// mask shows every stretch that spans finds as the marker: the last step of
// every message, so that nothing beside outside text completes a secret.
func (m *matcher) mask(text string) string {
	masked, _ := m.masked(text, len(text))
	return masked
}

// masked is mask for the spans that begin within text's first n bytes, cut
// after n bytes or the last of them, and whether it left anything out.
func (m *matcher) masked(text string, n int) (string, bool) {
	spans := m.spans(text)
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

// show shows outside text as a message quotes it: sanitized, masked, clipped to
// what its first limit bytes show, "..." when cut, masked again for the dots'
// sake. It reads only limit bytes and the reach past them, so a text of
// megabytes costs what a short one does.
func (m *matcher) show(text string, limit int) string {
	var reach int
	if m != nil {
		reach = m.reach
	}
	window := text[:min(len(text), limit+reach)]
	shown, cut := m.masked(sanitize(window), limit)
	if cut || len(window) < len(text) {
		shown += "..."
	}
	return m.mask(shown)
}

// secretForms lists the canonical forms of the secrets of the URL raw that
// ProbeError's doc lists: each part as written read once, and read again for a
// text that shows it decoded.
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
		pair := []byte(u.User.Username() + ":" + decodedPassword)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			basic := enc.EncodeToString(pair)
			forms = append(forms, canonical(basic), canonical(strings.TrimRight(basic, "=")))
		}
	}
	if written != "/" {
		parts = append(parts, written)
	}
	parts = append(parts, query)
	lone := strings.Split(written, "/")
	// Servers may split a query at ';' too; a pair without '=' is a bare key.
	for _, pair := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		lone = append(lone, pair[strings.Index(pair, "=")+1:])
	}
	for _, part := range lone {
		if looksLikeKey(part) {
			parts = append(parts, part)
		}
	}
	for _, p := range parts {
		if p != "" {
			once := canonical(p)
			forms = append(forms, once, canonical(once))
		}
	}
	return forms
}

// looksLikeKey reports whether a path segment or query value, as written,
// counts as a secret on its own: hosted keys are long and hold digits, while
// the words of URL formats (v3, mainnet, ?network=ethereum) must stay readable.
func looksLikeKey(part string) bool {
	return len(part) >= 20 || len(part) >= 8 && strings.ContainsAny(part, "0123456789")
}
