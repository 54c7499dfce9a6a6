package blocklag

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// transportError turns an error from sending a probe or reading its answer
// into one that is safe to show and that stays as it is. net/http's
// *url.Error, which quotes the whole URL, is dropped in favour of what it
// wraps. The text of what remains is read once, here: every secret of every
// endpoint is masked in it and it is rendered with printable. The result
// never unwraps to err or to anything in err's chain, only to stand-ins for
// the standard errors that chain matched (see standIns): a Base's error may
// have an As or Format method, or a text that changes later, and any of
// those could show what the message hides.
func transportError(err error, s *secrets) error {
	if ue, ok := err.(*url.Error); ok && ue.Err != nil {
		err = ue.Err
	}
	return &redactedError{msg: printable(s.mask(err.Error())), inner: standIns(err)}
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
// syscall.Errno it holds (a number, whose text the system defines), and a
// netError that keeps only whether the chain's net.Error is a timeout.
func standIns(err error) []error {
	var found []error
	for _, std := range []error{context.Canceled, context.DeadlineExceeded, os.ErrDeadlineExceeded, io.ErrUnexpectedEOF, io.EOF} {
		if errors.Is(err, std) {
			found = append(found, std)
		}
	}
	if errno, ok := errnoIn(err); ok {
		found = append(found, errno)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		found = append(found, netError{timeout: ne.Timeout()})
	}
	return found
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
// text. Each endpoint's messages mask all endpoints' secrets, since
// endpoints of one provider share hosts, connections and Bases, so that
// one's error may quote another's request. New builds it once; it is
// read-only afterwards, and safe for concurrent use. A nil *secrets holds
// none.
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

	// fail[s] is the state for the longest proper suffix of s's prefix
	// that is a state too: where a match continues when s has no edge for
	// the next byte.
	fail []int32

	// longest[s] is the length of the longest form that ends s's prefix,
	// or 0 when none does. Every other form that ends there is a suffix of
	// that one, so masking the longest masks them all.
	longest []int32
}

// edge is the key in secrets.next of the edge from state s by byte c.
func edge(s int32, c byte) uint64 { return uint64(s)<<8 | uint64(c) }

// newSecrets gathers the secret forms of every URL, each as configured;
// one that does not parse has none.
func newSecrets(rawURLs ...string) *secrets {
	var forms []string
	for _, raw := range rawURLs {
		if u, err := url.Parse(raw); err == nil {
			forms = append(forms, secretForms(u)...)
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
		if child, ok := s.next[edge(state, c)]; ok {
			return child
		}
		if state == 0 {
			return 0
		}
		state = s.fail[state]
	}
}

// scan calls found, for each byte of text at which some form ends, with
// the start and end of the longest form that ends there, in order of end;
// it stops early when found returns false.
func (s *secrets) scan(text string, found func(start, end int) bool) {
	state := int32(0)
	for i := 0; i < len(text); i++ {
		state = s.step(state, text[i])
		if n := int(s.longest[state]); n > 0 && !found(i+1-n, i+1) {
			return
		}
	}
}

// mask replaces each stretch of text covered by occurrences of secret
// forms with "[redacted]". Every occurrence is found in text as given
// before any is replaced, so forms that overlap, touch or contain one
// another are masked whole, as one stretch.
func (s *secrets) mask(text string) string {
	if s == nil || len(s.fail) == 1 {
		return text
	}
	// spans are the stretches to mask, as [start, end) pairs, in order and
	// apart from one another. An occurrence ends no earlier than those
	// found before it, so it can only reach back over the last spans.
	var spans [][2]int
	s.scan(text, func(start, end int) bool {
		for n := len(spans); n > 0 && start <= spans[n-1][1]; n-- {
			start = min(start, spans[n-1][0])
			spans = spans[:n-1]
		}
		spans = append(spans, [2]int{start, end})
		return true
	})
	if spans == nil {
		return text
	}
	var b strings.Builder
	shown := 0
	for _, span := range spans {
		b.WriteString(text[shown:span[0]])
		b.WriteString("[redacted]")
		shown = span[1]
	}
	b.WriteString(text[shown:])
	return b.String()
}

// holds reports whether text shows any secret form.
func (s *secrets) holds(text string) bool {
	if s == nil {
		return false
	}
	held := false
	s.scan(text, func(int, int) bool {
		held = true
		return false
	})
	return held
}

// secretForms lists every form in which a text may show a secret part of
// u. Providers put API keys in the userinfo, the path and the query, and
// echo them back whole or on their own, so the forms are: the user name,
// the password and the whole userinfo; the base64 of "user:password" that
// a Basic Authorization header carries, with and without its padding; the
// path (unless it is "/") and each of its segments; the query, and each
// value in it, split at both '&' and ';'. Each comes raw, as written in
// the URL, and decoded or escaped as net/http and url.Values show it; and
// each of those also as Go's %q quotes it, which is how *url.Error prints
// a URL, and as a JSON string holds it, from Go's encoder (which escapes
// '&', '<' and '>') or one that also escapes '/'. The whole userinfo and
// path come along with their parts so that an echo of either is masked as
// one stretch. Forms may be empty or repeat one another.
//
// The price of this is that a short secret part is masked wherever it
// appears: with the path /v3/KEY, the text "v3" is hidden in every message
// of every endpoint.
func secretForms(u *url.URL) []string {
	var forms []string
	if u.User != nil {
		name := u.User.Username()
		password, hasPassword := u.User.Password()
		basic := base64.StdEncoding.EncodeToString([]byte(name + ":" + password))
		userinfo := name
		if hasPassword {
			userinfo += ":" + password
		}
		forms = append(forms,
			name, url.User(name).String(),
			password, strings.TrimPrefix(url.UserPassword("", password).String(), ":"),
			userinfo, u.User.String(),
			// http.Client sends this in Authorization whether or not
			// the URL has a password; an echo may drop its padding.
			basic, strings.TrimRight(basic, "="))
	}
	if u.Path != "/" {
		escaped := u.EscapedPath()
		forms = append(forms, u.Path, escaped)
		for _, segment := range strings.Split(escaped, "/") {
			forms = append(forms, segment)
			if decoded, err := url.PathUnescape(segment); err == nil {
				forms = append(forms, decoded)
			}
		}
	}
	forms = append(forms, u.RawQuery, u.Query().Encode())
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
		forms = append(forms, value)
		if decoded, err := url.QueryUnescape(value); err == nil {
			forms = append(forms, decoded, url.QueryEscape(decoded))
		}
	}
	plain := forms // the loop appends to forms, not to this
	for _, f := range plain {
		quoted := strconv.Quote(f)
		js, _ := json.Marshal(f) // a string always marshals
		inJSON := string(js[1 : len(js)-1])
		forms = append(forms, quoted[1:len(quoted)-1], inJSON, strings.ReplaceAll(inJSON, "/", `\/`))
	}
	return forms
}
