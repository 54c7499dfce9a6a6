package blocklag

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// transportError turns an error from sending a probe or reading its answer
// into one that is safe to show and that stays as it is. net/http's
// *url.Error, which quotes the whole URL, is dropped in favour of what it
// wraps. The text of what remains is read once, here, and only as far as
// the message shows it: quoted, masked and clipped by quote. The result
// never unwraps to err or to anything in err's chain, only to stand-ins for
// the standard errors that chain matched (see standIns): a Base's error may
// have an As or Format method, or a text that changes later, and any of
// those could show what the message hides.
func transportError(err error, s *secrets) error {
	if ue, ok := err.(*url.Error); ok && ue.Err != nil {
		err = ue.Err
	}
	return &redactedError{msg: s.shown(s.quote(err.Error(), maxTransportText)), inner: standIns(err)}
}

// redactedError is a transport error reduced to its masked, escaped text
// and the stand-ins that errors.Is and errors.As still need to tell a
// timeout, a cancellation, a cut-off answer or a refused connection.
type redactedError struct {
	msg   string
	inner []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.inner }

// standIns returns what a caller may ask of a transport error with
// errors.Is and errors.As, in values whose text is fixed and that keep no
// reference to err: each standard sentinel that err's chain matches, the
// first syscall.Errno it holds (a number, whose text the system defines),
// and a netError that keeps only whether the chain's first net.Error is a
// timeout. It looks at the first maxChain errors of the chain, in the order
// errors.Is and errors.As visit them, and no further: a Base's error that
// unwraps to itself, or to an endless chain, would keep them looking for
// ever.
func standIns(err error) []error {
	sentinels := []error{context.Canceled, context.DeadlineExceeded, os.ErrDeadlineExceeded, io.ErrUnexpectedEOF, io.EOF}
	matched := make([]bool, len(sentinels))
	var errno error
	var ne net.Error
	pending := []error{err} // a stack: the next error to look at is last
	for seen := 0; len(pending) > 0 && seen < maxChain; seen++ {
		e := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if e == nil {
			continue
		}
		for i, std := range sentinels {
			matched[i] = matched[i] || matches(e, std)
		}
		if errno == nil {
			errno = errnoOf(e)
		}
		if ne == nil {
			ne, _ = asItself[net.Error](e)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			pending = append(pending, u.Unwrap())
		case interface{ Unwrap() []error }:
			inner := u.Unwrap()
			for i := len(inner) - 1; i >= 0; i-- {
				pending = append(pending, inner[i])
			}
		}
	}
	var found []error
	for i, std := range sentinels {
		if matched[i] {
			found = append(found, std)
		}
	}
	if errno != nil {
		found = append(found, errno)
	}
	if ne != nil {
		found = append(found, netError{timeout: ne.Timeout()})
	}
	return found
}

// maxChain is how many errors of a transport error's chain standIns looks
// at. Real chains are a handful deep.
const maxChain = 64

// matches reports whether e itself, not its chain, is target as errors.Is
// sees it: equal, or saying so through an Is method. Every target is a
// comparable sentinel, so the comparison cannot panic.
func matches(e, target error) bool {
	if e == target {
		return true
	}
	is, ok := e.(interface{ Is(error) bool })
	return ok && is.Is(target)
}

// asItself returns e as a T, as errors.As would find it in e itself, not
// in its chain: e is a T, or says so through an As method.
func asItself[T any](e error) (T, bool) {
	if t, ok := e.(T); ok {
		return t, true
	}
	var t T
	if as, ok := e.(interface{ As(any) bool }); ok && as.As(&t) {
		return t, true
	}
	var zero T
	return zero, false
}

// netError stands in for a net.Error from a transport error's chain,
// keeping only whether it was a timeout.
type netError struct{ timeout bool }

func (e netError) Error() string {
	if e.timeout {
		return "network timeout"
	}
	return "network error"
}

func (e netError) Timeout() bool { return e.timeout }

// Temporary is part of net.Error; like net/http's own errors, a netError
// says false.
func (e netError) Temporary() bool { return false }

// secrets finds every form of every configured endpoint's secrets in a
// text, the forms that ProbeError's documentation lists. Each endpoint's
// messages mask all endpoints' secrets, since endpoints of one provider
// share hosts, connections and Bases, so that one's error may quote
// another's request. New builds it once; it is read-only afterwards, and
// safe for concurrent use. A nil *secrets holds none.
//
// The forms make up an Aho-Corasick automaton: a trie of the forms in
// which each state also knows where to fall back when the text stops
// matching. Finding every form then takes one pass over the text, at most
// two steps per byte, however many forms there are; searching for each form
// in turn would make every message cost more with every endpoint added, and
// all endpoints share prefixes such as "/v3/" and "apikey=". State 0 is the
// empty string; every other state is a non-empty prefix of some form, and
// states are numbered in order of length.
type secrets struct {
	// next holds the trie's edges: next[edge(s, c)] is the state for s's
	// prefix followed by the byte c. One map for all states, rather than
	// one per state, since most states have a single edge. States are
	// int32 to keep the tables small: there is one per byte of the forms,
	// a few hundred per endpoint.
	next map[uint64]int32

	// root[c] is next's edge from the empty string by c, or 0: a text
	// mostly steps from there, so those steps skip the map.
	root [256]int32

	// fail[s] is the state for the longest proper suffix of s's prefix
	// that is a state too: where a match continues when s has no edge for
	// the next byte.
	fail []int32

	// longest[s] is the length of the longest form that ends s's prefix,
	// or 0 when none does. Every other form that ends there is a suffix of
	// that one, so masking the longest masks them all.
	longest []int32

	// reach is how far past a byte of a text the masking of that byte can
	// depend on: the longest form, and the longest unit (an escape) that a
	// masked stretch is widened to. quote reads that far past what it shows.
	reach int
}

// edge is the key in secrets.next of the edge from state s by byte c.
func edge(s int32, c byte) uint64 { return uint64(s)<<8 | uint64(c) }

// newSecrets gathers the secret forms of every URL, each as configured;
// one that does not parse has none.
func newSecrets(rawURLs ...string) *secrets {
	var forms []string
	for _, raw := range rawURLs {
		if u, err := url.Parse(raw); err == nil {
			forms = append(forms, secretForms(raw, u)...)
		}
	}
	return secretsOf(forms...)
}

// secretsOf builds the automaton that finds forms; empty forms are ignored,
// and a form listed twice counts once.
func secretsOf(forms ...string) *secrets {
	s := &secrets{next: map[uint64]int32{}, fail: []int32{0}, longest: []int32{0}}
	parent, via := []int32{0}, []byte{0} // parent[s] and via[s]: the edge that made state s

	// Build the trie one byte of every form at a time, so that states come
	// out numbered by length: computing fail below then needs no queue.
	type growing struct {
		form  string
		state int32 // the state for the form's first depth bytes
	}
	var live []growing
	for _, f := range forms {
		if f != "" {
			live = append(live, growing{form: f})
			s.reach = max(s.reach, len(f)+maxUnit)
		}
	}
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

	// A state's fail and longest depend only on shorter states, which come
	// first. The states one byte long fail to the empty string, as fail[1:]
	// starts out.
	for state := int32(1); state < int32(len(parent)); state++ {
		if p := parent[state]; p != 0 {
			s.fail[state] = s.step(s.fail[p], via[state])
		}
		if s.longest[state] == 0 {
			s.longest[state] = s.longest[s.fail[state]]
		}
	}
	return s
}

// step returns the state that state moves to on byte c: its edge for c,
// or else the edge for c of the longest suffix that has one, or else the
// empty string. Each fall back along fail shortens the match, so a whole
// text takes at most two steps per byte in all.
func (s *secrets) step(state int32, c byte) int32 {
	for {
		if state == 0 {
			return s.root[c]
		}
		if child, ok := s.next[edge(state, c)]; ok {
			return child
		}
		state = s.fail[state]
	}
}

// empty reports whether s holds no form, so that masking changes nothing.
func (s *secrets) empty() bool { return s == nil || len(s.fail) == 1 }

// marker is what a masked stretch shows instead.
const marker = "[redacted]"

// spans returns the stretches of text to mask, as [start, end) pairs, in
// order and apart from one another. Every occurrence of every form is found
// in text as given before any is masked, so forms that overlap, touch or
// contain one another make one stretch. Each stretch is then widened to
// whole units (see unit), so that masking never leaves half of a character
// or of an escape: a masked '\' that began `\"` would leave the quote
// unescaped, free to end the quoted text early. A marker that text
// already holds is a unit too, so that masking again what was masked
// leaves it as it was.
func (s *secrets) spans(text string) [][2]int {
	if s.empty() {
		return nil
	}
	hasMarker := strings.Contains(text, marker)
	var spans [][2]int
	state := int32(0)
	for i := 0; i < len(text); i++ {
		state = s.step(state, text[i])
		n := int(s.longest[state])
		if n == 0 {
			continue
		}
		spans = addSpan(spans, i+1-n, i+1)
	}
	if spans == nil {
		return nil
	}
	// Widen each stretch to whole units, in one pass over text: units
	// begin only where the previous one ends, so an escape is told from a
	// backslash that an escape holds by reading from the start.
	widened := spans[:0:0]
	next := 0 // the next stretch to widen
	for i := 0; i < len(text) && (next < len(spans) || widened[len(widened)-1][1] > i); {
		n := unit(text, i, hasMarker)
		for next < len(spans) && spans[next][0] < i+n {
			span := spans[next]
			span[0] = min(span[0], i)
			widened = addSpan(widened, span[0], span[1])
			next++
		}
		if last := len(widened) - 1; last >= 0 && widened[last][1] > i && widened[last][1] < i+n {
			widened[last][1] = i + n
		}
		i += n
	}
	return widened
}

// addSpan adds the stretch [start, end) to spans, which are in order and
// apart, merging it with the ones it overlaps or touches; it starts no
// earlier than the last one does, or reaches back over those it merges.
func addSpan(spans [][2]int, start, end int) [][2]int {
	for n := len(spans); n > 0 && start <= spans[n-1][1]; n-- {
		start, end = min(start, spans[n-1][0]), max(end, spans[n-1][1])
		spans = spans[:n-1]
	}
	return append(spans, [2]int{start, end})
}

// maxUnit is the length of the longest unit: an escape \UXXXXXXXX, and a
// marker.
const maxUnit = len(marker)

// unit returns the length of the piece of text that starts at i and that
// masking keeps whole: an escape as Go and JSON write them (a backslash
// and one character, or \xXX, \uXXXX, \UXXXXXXXX), a marker when text holds
// one, or else one character (one byte when it is not valid UTF-8).
func unit(text string, i int, hasMarker bool) int {
	n := 1
	switch {
	case hasMarker && strings.HasPrefix(text[i:], marker):
		n = len(marker)
	case text[i] == '\\' && i+1 < len(text):
		switch text[i+1] {
		case 'x':
			n = 4
		case 'u':
			n = 6
		case 'U':
			n = 10
		default:
			n = 2
		}
	default:
		_, n = utf8.DecodeRuneInString(text[i:])
	}
	return min(n, len(text)-i)
}

// mask replaces each stretch that spans finds with the marker.
func (s *secrets) mask(text string) string {
	spans := s.spans(text)
	if spans == nil {
		return text
	}
	var b strings.Builder
	shown := 0
	for _, span := range spans {
		b.WriteString(text[shown:span[0]])
		b.WriteString(marker)
		shown = span[1]
	}
	b.WriteString(text[shown:])
	return b.String()
}

// holds reports whether text shows any secret form.
func (s *secrets) holds(text string) bool { return s.spans(text) != nil }

// shown masks text, a message or field in its final form, so that it shows
// no secret form, neither as it stands nor once a log handler quotes it:
// slog's TextHandler quotes as Go does, its JSONHandler and encoding/json
// as JSON does (the latter also escaping '&', '<' and '>'), and such an
// escape may complete a form, as `\u0026` before "bcdef..." completes the
// key "u0026bcdef...". So text is masked as it is, then in each quoted
// form, each time unquoted again: masking takes whole escapes, so the
// quoted form stays one that unquotes, and quoting the result gives back
// the masked form. A later round only replaces stretches with markers,
// which no quoting changes, so it keeps what an earlier one made sure of.
// text must be valid UTF-8, as every message is.
func (s *secrets) shown(text string) string {
	if s.empty() {
		return text
	}
	text = s.mask(text)
	if quotingKeeps(text) {
		return text // every quoted form is text itself, masked already
	}
	previous := text // what the last round masked: a quoted form that is
	// the same (Go's and JSON's without HTML escapes agree on every
	// printable text) has nothing more to show
	for _, q := range []struct {
		quote   func(string) string
		unquote func(string) (string, error)
	}{
		{goQuoted, strconv.Unquote},
		{func(t string) string { return jsonQuoted(t, true) }, jsonUnquote},
		{func(t string) string { return jsonQuoted(t, false) }, jsonUnquote},
	} {
		quoted := q.quote(text)
		if quoted == previous {
			continue
		}
		previous = quoted
		masked := s.mask(quoted)
		if masked == quoted {
			continue
		}
		unquoted, err := q.unquote(`"` + masked + `"`)
		if err != nil {
			return marker // cannot happen, as said above; hide it all
		}
		text = unquoted
	}
	return text
}

// quotingKeeps reports whether each quoting that shown considers writes
// text as it stands: Go's escapes only what strconv.IsPrint rejects, an
// invalid byte, the quote and the backslash, and JSON's (with or without
// HTML escapes) only the controls, U+2028 and U+2029, an invalid byte, the
// quote, the backslash and '&', '<' and '>'. Most texts from providers
// pass, so that showing them costs one pass of mask.
func quotingKeeps(text string) bool {
	return !strings.ContainsAny(text, `"\<>&`) && showable(text)
}

// goQuoted is text as strconv.Quote writes it, without the quotes.
func goQuoted(text string) string {
	q := strconv.Quote(text)
	return q[1 : len(q)-1]
}

// jsonQuoted is text as encoding/json writes a string, without the quotes,
// escaping '&', '<' and '>' or not.
func jsonQuoted(text string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	enc.Encode(text) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

func jsonUnquote(quoted string) (string, error) {
	var text string
	err := json.Unmarshal([]byte(quoted), &text)
	return text, err
}

// asciiJSON is text as a JSON encoder that writes only ASCII does, as
// Python's json module does by default, without the quotes: every rune
// outside ASCII as \uXXXX, in lower-case hex, beyond U+FFFF as a UTF-16
// pair; the quote, the backslash and the control characters escaped as
// JSON requires; an invalid byte as the replacement character.
func asciiJSON(text string) string {
	var b strings.Builder
	for _, r := range text { // an invalid byte comes as utf8.RuneError
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= utf8.RuneSelf:
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// minAlone is how long, in bytes as written in the URL, a path segment or
// a query value must be to count as a secret on its own; ProbeError's
// documentation says why.
const minAlone = 8

// secretForms lists every form in which a text may show a secret part of
// the URL raw, which parses as u: the parts and forms that ProbeError's
// documentation lists. Forms may repeat one another.
func secretForms(raw string, u *url.URL) []string {
	var spellings []string // each part as a text may spell it, before quoting
	_, rest, _ := strings.Cut(raw, "://")
	authority := rest[:strings.IndexAny(rest+"/", "/?")] // as url.Parse finds it
	afterAuthority := rest[len(authority):]
	if u.User != nil {
		name := u.User.Username()
		password, hasPassword := u.User.Password()
		if name != "" || password != "" {
			written := authority[:max(0, strings.LastIndex(authority, "@"))]
			writtenName, writtenPassword, _ := strings.Cut(written, ":")
			userinfo := name
			if hasPassword {
				userinfo += ":" + password
			}
			basic := base64.StdEncoding.EncodeToString([]byte(name + ":" + password))
			spellings = append(spellings,
				written, userinfo, u.User.String(),
				// http.Client sends this in Authorization whether or
				// not the URL has a password; an echo may drop its
				// padding.
				basic, strings.TrimRight(basic, "="))
			for _, part := range [][2]string{{writtenName, name}, {writtenPassword, password}} {
				if part[1] != "" {
					spellings = append(spellings, part[0], part[1],
						strings.TrimPrefix(url.UserPassword("", part[1]).String(), ":"),
						url.PathEscape(part[1]), url.QueryEscape(part[1]))
				}
			}
		}
	}
	writtenPath, _, _ := strings.Cut(afterAuthority, "?")
	if u.Path != "/" {
		spellings = append(spellings, writtenPath, u.Path, u.EscapedPath())
		for _, segment := range strings.Split(writtenPath, "/") {
			if len(segment) >= minAlone {
				spellings = append(spellings, decodings(segment)...)
			}
		}
	}
	spellings = append(spellings, u.RawQuery, u.Query().Encode())
	// url.Values splits at '&' only and drops pairs holding ';', which
	// servers may still read as separators, so the pairs are split here.
	pairs := strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' })
	for _, pair := range pairs {
		// A pair without '=' is a bare key, which some providers take
		// as the API key itself.
		value := pair
		if _, v, ok := strings.Cut(pair, "="); ok {
			value = v
		}
		if len(value) >= minAlone {
			spellings = append(spellings, decodings(value)...)
		}
	}

	// Each spelling with its percent-escapes in either case, then each of
	// those as Go and the JSON encoders write it; and each of the results
	// once more as Go quotes it, since outside text reaches a message
	// inside Go's quotes, text that *url.Error quoted included.
	var cased []string
	for _, sp := range spellings {
		cased = append(cased, sp)
		if strings.Contains(sp, "%") {
			cased = append(cased, hexCase(sp, unicode.ToUpper), hexCase(sp, unicode.ToLower))
		}
	}
	seen := map[string]bool{}
	var forms []string
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	for _, sp := range cased {
		inJSON := jsonQuoted(sp, true)
		for _, f := range []string{sp, goQuoted(sp), inJSON, strings.ReplaceAll(inJSON, "/", `\/`),
			jsonQuoted(sp, false), asciiJSON(sp)} {
			add(f)
			add(goQuoted(f))
		}
	}
	return forms
}

// decodings are the spellings of one path segment or query value: as
// written, decoded as a path and as a query, and each decoding escaped
// again as a path and as a query.
func decodings(written string) []string {
	out := []string{written}
	for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
		if decoded, err := unescape(written); err == nil {
			out = append(out, decoded, url.PathEscape(decoded), url.QueryEscape(decoded))
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
