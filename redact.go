package blocklag

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// transportError turns an error from sending a probe or reading its answer
// into one that is safe to show. net/http's *url.Error, which quotes the
// whole URL, is dropped in favour of what it wraps; every secret form of
// target that the text still holds is masked; the text is then rendered
// with printable. The result unwraps to the original chain only when no
// error in that chain shows a secret or a rune that printable would escape,
// since whoever unwraps an error may print it.
func transportError(err error, s *secrets) error {
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err
	}
	e := &redactedError{msg: printable(s.mask(err.Error()))}
	if chainIsShowable(err, s.forms) {
		e.inner = []error{err}
	} else {
		e.inner = kinds(err)
	}
	return e
}

// redactedError is a transport error with the endpoint's secrets masked and
// unsafe runes escaped. inner is the original error when its whole chain is
// safe to show, and otherwise only the fixed errors from kinds, so that
// errors.Is and errors.As still tell a timeout or a cut-off answer.
type redactedError struct {
	msg   string
	inner []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.inner }

// secrets holds every form of every configured endpoint's secrets: each
// endpoint's messages mask all of them, since endpoints of one provider
// share hosts, connections and Bases, so that one's error may quote
// another's request. New builds it; it is read-only afterwards. A nil
// *secrets holds none.
type secrets struct {
	forms []string
}

// newSecrets gathers the secret forms of every target.
func newSecrets(targets ...*url.URL) *secrets {
	s := &secrets{}
	for _, u := range targets {
		s.forms = append(s.forms, secretForms(u)...)
	}
	return s
}

// mask replaces every occurrence of a secret in text with "[redacted]".
func (s *secrets) mask(text string) string {
	if s == nil {
		return text
	}
	return mask(text, s.forms)
}

// holds reports whether text shows any secret.
func (s *secrets) holds(text string) bool {
	return s != nil && holdsAny(text, s.forms)
}

// secretForms lists every form in which an error's text may show a secret
// part of u: its user name, password and whole userinfo, its path (unless it
// is "/") and its query, and each query value, all raw and escaped as a URL
// escapes them, and each of those as Go's %q quotes it, which is how
// *url.Error prints a URL.
func secretForms(u *url.URL) []string {
	var forms []string
	if u.User != nil {
		name := u.User.Username()
		password, _ := u.User.Password()
		forms = append(forms, u.User.String(), name, url.User(name).String(),
			password, strings.TrimPrefix(url.UserPassword("", password).String(), ":"))
	}
	if u.Path != "/" {
		forms = append(forms, u.Path, u.EscapedPath())
	}
	forms = append(forms, u.RawQuery, u.Query().Encode())
	for _, values := range u.Query() {
		for _, v := range values {
			forms = append(forms, v, url.QueryEscape(v))
		}
	}
	unquoted := len(forms)
	for _, f := range forms[:unquoted] {
		quoted := strconv.Quote(f)
		forms = append(forms, quoted[1:len(quoted)-1])
	}
	return forms
}

// mask replaces each stretch of text covered by an occurrence of any of
// forms with "[redacted]". It finds every occurrence in the original text
// before it replaces any, so a form that overlaps or contains another is
// masked whole.
func mask(text string, forms []string) string {
	if len(forms) == 0 {
		return text
	}
	hidden := make([]bool, len(text))
	found := false
	for _, f := range forms {
		if f == "" {
			continue
		}
		marked := 0 // hidden[:marked] already covers this form's earlier occurrences
		for start := 0; ; start++ {
			i := strings.Index(text[start:], f)
			if i < 0 {
				break
			}
			start += i
			for j := max(start, marked); j < start+len(f); j++ {
				hidden[j] = true
			}
			marked, found = start+len(f), true
		}
	}
	if !found {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if !hidden[i] {
			b.WriteByte(text[i])
			continue
		}
		b.WriteString("[redacted]")
		for i+1 < len(text) && hidden[i+1] {
			i++
		}
	}
	return b.String()
}

// holdsAny reports whether text holds any of forms.
func holdsAny(text string, forms []string) bool {
	for _, f := range forms {
		if f != "" && strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// chainIsShowable reports whether every error in err's chain, followed
// through both kinds of Unwrap, has a text that holds none of forms and
// only runes that are safe to show as they are.
func chainIsShowable(err error, forms []string) bool {
	if err == nil {
		return true
	}
	text := err.Error()
	if !showable(text) {
		return false
	}
	if holdsAny(text, forms) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return chainIsShowable(u.Unwrap(), forms)
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if !chainIsShowable(inner, forms) {
				return false
			}
		}
	}
	return true
}

// kinds returns the standard errors, whose texts are fixed, that err's
// chain matches, and a netError when the chain holds a net.Error: what a
// caller may ask of a transport error with errors.Is and errors.As, without
// the text that had to be hidden.
func kinds(err error) []error {
	var found []error
	for _, k := range []error{context.DeadlineExceeded, context.Canceled, os.ErrDeadlineExceeded, io.ErrUnexpectedEOF} {
		if errors.Is(err, k) {
			found = append(found, k)
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		found = append(found, netError{timeout: ne.Timeout()})
	}
	return found
}

// netError stands in for a hidden net.Error, keeping only whether it was a
// timeout.
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
