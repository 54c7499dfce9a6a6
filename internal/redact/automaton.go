package redact

import (
	"slices"
	"strings"
)

// automaton finds the forms of secrets in a text. It is an Aho-Corasick
// automaton: a trie of the forms in which every state also knows where to
// fall back when the text stops matching, so that one pass over a text
// finds every form in it, at a cost linear in the text and in the forms'
// bytes however many there are.
//
// State 0 is the empty string. States are numbered by the length of the
// prefix they stand for, then in the order of the sorted forms, so that the
// children of a state are consecutive and sorted by their edge's byte.
type automaton struct {
	edge       []byte  // edge[s]: the last byte of state s's prefix
	firstChild []int32 // the children of state s are firstChild[s] to firstChild[s+1]-1
	fallback   []int32 // fallback[s]: the state of the longest proper suffix of s's prefix that is a state
	longest    []int32 // longest[s]: the length of the longest form that s's prefix ends with; 0 for none
	// lookahead is how far past a limit a text must be read to find a
	// form that begins before the limit: the longest form with each of its
	// bytes escaped.
	lookahead int
}

// newAutomaton builds the automaton of forms, in time and memory linear in
// their bytes.
func newAutomaton(forms []string) *automaton {
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
	a := &automaton{
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
			if made == 0 || parent[made] != reached[j] || a.edge[made] != c {
				made = int32(len(a.edge))
				if a.firstChild[reached[j]] < 0 {
					a.firstChild[reached[j]] = made
				}
				a.edge = append(a.edge, c)
				parent = append(parent, reached[j])
				a.firstChild = append(a.firstChild, -1)
				a.fallback = append(a.fallback, 0)
				a.longest = append(a.longest, 0)
			}
			if depth+1 == len(f) {
				a.longest[made] = int32(len(f))
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
	a.firstChild = append(a.firstChild, int32(len(a.edge)))
	for s := len(a.edge) - 1; s >= 0; s-- {
		if a.firstChild[s] < 0 {
			a.firstChild[s] = a.firstChild[s+1]
		}
	}
	// A state's fallback and longest depend only on shorter states, which
	// come first. The states of one byte fall back to the empty string.
	for s := int32(1); s < int32(len(a.edge)); s++ {
		if p := parent[s]; p != 0 {
			a.fallback[s] = a.step(a.fallback[p], a.edge[s])
		}
		a.longest[s] = max(a.longest[s], a.longest[a.fallback[s]])
	}
	return a
}

// child returns the child of state s along byte c, or 0 when it has none.
func (a *automaton) child(s int32, c byte) int32 {
	i, found := slices.BinarySearch(a.edge[a.firstChild[s]:a.firstChild[s+1]], c)
	if !found {
		return 0
	}
	return a.firstChild[s] + int32(i)
}

// step returns the state that follows state on byte c: its child along c,
// else that of the longest suffix that has one, else the empty string.
func (a *automaton) step(state int32, c byte) int32 {
	for state != 0 {
		if next := a.child(state, c); next != 0 {
			return next
		}
		state = a.fallback[state]
	}
	return a.child(0, c)
}

// stretch is a part of a text, from byte start up to byte end.
type stretch struct{ start, end int }

// stretches returns the stretches of text that either reading finds a form
// in, in order, with those that overlap or touch merged into one. A stretch
// that reaches into a marker already in the text takes in the whole marker,
// so that redacting twice changes nothing, while a secret that runs across
// a marker is found all the same.
func (a *automaton) stretches(text string) []stretch {
	if a == nil || len(a.edge) == 1 {
		return nil
	}
	found := a.find(text, false)
	// Without a '%' the decoded reading is the written one.
	if strings.IndexByte(text, '%') >= 0 {
		found = append(found, a.find(text, true)...)
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
func (a *automaton) find(text string, decoded bool) []stretch {
	// A match is first kept in the reading's bytes, from and to, with end,
	// the byte of text where it ends; then it is walked back once, after
	// merging, so that the walk costs at most the text's length.
	type match struct{ from, to, end int }
	var matches []match
	state := int32(0)
	i := 0    // the byte of text where the next byte of the reading begins
	read := 0 // how many bytes of the reading have been read
	for i < len(text) {
		c, n := readingAt(text, i, decoded)
		i += n
		read++
		state = a.step(state, c)
		length := int(a.longest[state])
		if length == 0 {
			continue
		}
		from := read - length
		for len(matches) > 0 && from <= matches[len(matches)-1].to {
			from = min(from, matches[len(matches)-1].from)
			matches = matches[:len(matches)-1]
		}
		matches = append(matches, match{from: from, to: read, end: i})
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
