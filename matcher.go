package blocklag

import (
	"slices"
	"strings"
)

// matcher finds secrets in a text and masks them. It is an Aho-Corasick
// automaton: a trie of the secrets' canonical forms in which every state also
// knows where to fall back when the text stops matching, so that one pass over
// a text finds every form in it. Its cost is linear in the text and in the
// forms' bytes however many endpoints there are: a Check whose every error
// quotes its URL costs per endpoint about three quarters as much at 1,000
// endpoints as at 10 (BENCHMARKS.md), where searching for each form in turn
// would cost a hundred times more at 1,000.
//
// A text is read twice: as written and percent-decoded (readingAt says how).
// A stretch of it is masked when either reading holds a form.
//
// New builds the matcher and nothing writes it afterwards. A nil *matcher
// holds no secret.
//
// State 0 is the empty string. States are numbered by the length of the
// prefix they stand for, then in the order of the sorted forms, so that the
// children of a state are consecutive and sorted by their edge's byte.
type matcher struct {
	edge       []byte  // edge[s]: the last byte of state s's prefix
	firstChild []int32 // the children of state s are firstChild[s] to firstChild[s+1]-1
	fallback   []int32 // fallback[s]: the state of the longest proper suffix of s's prefix that is a state
	longest    []int32 // longest[s]: the length of the longest form that s's prefix ends with; 0 for none
	// lookahead is how far past a clip a text must be read to find a form
	// that begins before the clip: the longest form with each byte escaped.
	lookahead int
}

// marker is what a masked stretch of text shows instead.
const marker = "[redacted]"

// newMatcher builds the matcher of forms, in time and memory linear in their
// bytes.
func newMatcher(forms []string) *matcher {
	forms = slices.Clone(forms)
	slices.Sort(forms) // so that the children of a state are made in order
	forms = slices.Compact(forms)
	forms = slices.DeleteFunc(forms, func(f string) bool { return f == "" })
	states := 1
	lookahead := 0
	for _, f := range forms {
		states += len(f)
		lookahead = max(lookahead, 3*len(f))
	}
	m := &matcher{
		edge:       make([]byte, 1, states),
		firstChild: append(make([]int32, 0, states+1), -1),
		fallback:   make([]int32, 1, states),
		longest:    make([]int32, 1, states),
		lookahead:  lookahead,
	}
	parent := make([]int32, 1, states)
	// Every form grows by one byte per round, all of them in step, so that
	// states come out numbered by length and fallback needs no queue below.
	growing := forms
	reached := make([]int32, len(forms)) // reached[j]: the state growing[j]'s bytes have reached
	for depth := 0; len(growing) > 0; depth++ {
		still := 0
		made := int32(0) // the state made last in this round; 0 before any
		for j, f := range growing {
			c := f[depth]
			if made == 0 || parent[made] != reached[j] || m.edge[made] != c {
				made = int32(len(m.edge))
				if m.firstChild[reached[j]] < 0 {
					m.firstChild[reached[j]] = made
				}
				m.edge = append(m.edge, c)
				parent = append(parent, reached[j])
				m.firstChild = append(m.firstChild, -1)
				m.fallback = append(m.fallback, 0)
				m.longest = append(m.longest, 0)
			}
			if depth+1 == len(f) {
				m.longest[made] = int32(len(f))
				continue
			}
			growing[still] = f
			reached[still] = made
			still++
		}
		growing = growing[:still]
		reached = reached[:still]
	}
	// A state without children has an empty range, at the next state's.
	m.firstChild = append(m.firstChild, int32(len(m.edge)))
	for s := len(m.edge) - 1; s >= 0; s-- {
		if m.firstChild[s] < 0 {
			m.firstChild[s] = m.firstChild[s+1]
		}
	}
	// A state's fallback and longest depend only on shorter states, which
	// come first. The states of one byte fall back to the empty string.
	for s := int32(1); s < int32(len(m.edge)); s++ {
		if p := parent[s]; p != 0 {
			m.fallback[s] = m.step(m.fallback[p], m.edge[s])
		}
		m.longest[s] = max(m.longest[s], m.longest[m.fallback[s]])
	}
	return m
}

// child returns the child of state s along byte c, or 0 when it has none.
func (m *matcher) child(s int32, c byte) int32 {
	i, found := slices.BinarySearch(m.edge[m.firstChild[s]:m.firstChild[s+1]], c)
	if !found {
		return 0
	}
	return m.firstChild[s] + int32(i)
}

// step returns the state that follows state on byte c: its child along c,
// else that of the longest suffix that has one, else the empty string.
func (m *matcher) step(state int32, c byte) int32 {
	for state != 0 {
		if next := m.child(state, c); next != 0 {
			return next
		}
		state = m.fallback[state]
	}
	return m.child(0, c)
}

// readingAt returns the byte that a reading of text holds at byte i, and how
// many of text's bytes make it. Read as written, each byte stands for itself;
// percent-decoded, an escape %XX (hex digits of either case) stands for the
// byte it encodes. Either way '+' reads as a space, as a query writes one,
// and the byte is then reduced to the alphabet.
func readingAt(text string, i int, decoded bool) (byte, int) {
	c := text[i]
	n := 1
	if decoded && isEscape(text, i) {
		c = byte(hexValue(text[i+1])<<4 | hexValue(text[i+2]))
		n = 3
	}
	if c == '+' {
		return ' ', n
	}
	return reducedByte(c), n
}

// canonical returns the canonical form of a secret as written in a URL: its
// percent-decoded reading.
func canonical(secret string) string {
	b := make([]byte, 0, len(secret))
	for i := 0; i < len(secret); {
		c, n := readingAt(secret, i, true)
		b = append(b, c)
		i += n
	}
	return string(b)
}

// isEscape reports whether text holds an escape %XX at i.
func isEscape(text string, i int) bool {
	if i+2 >= len(text) || text[i] != '%' {
		return false
	}
	return hexValue(text[i+1]) >= 0 && hexValue(text[i+2]) >= 0
}

// hexValue returns the value of c as a hex digit of either case, or -1.
func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// stretch is a part of a text, from byte start up to byte end.
type stretch struct{ start, end int }

// secretStretches returns the stretches of text that either reading finds a
// form in, in order, with those that overlap or touch merged into one. A
// stretch that reaches into a marker already in the text takes in the whole
// marker, so that masking twice changes nothing, while a secret that runs
// across a marker is found all the same.
func (m *matcher) secretStretches(text string) []stretch {
	if m == nil || len(m.edge) == 1 {
		return nil
	}
	found := m.find(text, false)
	// Without a '%' the decoded reading is the written one.
	if strings.IndexByte(text, '%') >= 0 {
		found = append(found, m.find(text, true)...)
		slices.SortFunc(found, func(a, b stretch) int { return a.start - b.start })
	}
	var merged []stretch
	for _, s := range found {
		s.start, _ = markerAround(text, s.start)
		_, s.end = markerAround(text, s.end-1)
		if n := len(merged); n > 0 && s.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, s.end)
		} else {
			merged = append(merged, s)
		}
	}
	return merged
}

// find returns the stretches of text whose reading, as written or decoded,
// holds a form, in order, merging those that overlap or touch in the reading.
func (m *matcher) find(text string, decoded bool) []stretch {
	// A match is first kept in the reading's bytes, from and to, with end,
	// the byte of text where it ends; then it is walked back once, after
	// merging, so that the walk costs at most the text's length.
	type match struct{ from, to, end int }
	var matches []match
	state := int32(0)
	read := 0 // how many bytes of the reading come before i
	for i := 0; i < len(text); read++ {
		c, n := readingAt(text, i, decoded)
		i += n
		state = m.step(state, c)
		length := int(m.longest[state])
		if length == 0 {
			continue
		}
		from := read + 1 - length
		for len(matches) > 0 && from <= matches[len(matches)-1].to {
			from = min(from, matches[len(matches)-1].from)
			matches = matches[:len(matches)-1]
		}
		matches = append(matches, match{from: from, to: read + 1, end: i})
	}
	stretches := make([]stretch, len(matches))
	for k, mt := range matches {
		start := mt.end
		for left := mt.to - mt.from; left > 0; left-- {
			// No escape holds a '%', so an escape three bytes back is
			// always where the reading's byte began.
			if decoded && start >= 3 && isEscape(text, start-3) {
				start -= 3
			} else {
				start--
			}
		}
		stretches[k] = stretch{start: start, end: mt.end}
	}
	return stretches
}

// markerAround returns the stretch of the marker that holds text's byte i,
// or of byte i alone when no marker does.
func markerAround(text string, i int) (int, int) {
	from := max(0, i-len(marker)+1)
	to := min(len(text), i+len(marker))
	if at := strings.Index(text[from:to], marker); at >= 0 {
		return from + at, from + at + len(marker)
	}
	return i, i + 1
}

// mask returns text with every stretch that holds a secret shown as the
// marker. It is the last step of every message blocklag builds, so that
// nothing written beside outside text can complete a secret.
func (m *matcher) mask(text string) string {
	masked, _ := m.maskUpTo(text, len(text))
	return masked
}

// maskUpTo returns the first n bytes of text, masked as mask does, with a
// masked stretch that begins within them shown whole, and reports whether
// anything of text was left out.
func (m *matcher) maskUpTo(text string, n int) (string, bool) {
	stretches := m.secretStretches(text)
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

// maskAndClip returns outside text as a message shows it: reduced to the
// alphabet, masked, and clipped to what its first limit bytes show, then
// "..." when anything was left out. It reads at most limit bytes and the
// lookahead past them, so a text of megabytes costs what a short one does.
func (m *matcher) maskAndClip(text string, limit int) string {
	lookahead := 0
	if m != nil {
		lookahead = m.lookahead
	}
	window := text[:min(len(text), limit+lookahead)]
	shown, cut := m.maskUpTo(reduce(window), limit)
	if cut || len(window) < len(text) {
		shown += "..."
	}
	// The dots may complete a secret that ends in dots.
	return m.mask(shown)
}
