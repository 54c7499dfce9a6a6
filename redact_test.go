package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// An error that shows any part of the endpoint's URL that may hold an API
// key, whether a transport error or a provider's own answer, is shown with
// every such part masked, whichever form the text uses and whichever secret
// contains another, and unwraps to nothing that shows one; a transport
// error that shows none keeps its chain. Each URL is tried with each kind of
// error; every secret holds the word SECRET.
func TestTransportErrorsHideSecrets(t *testing.T) {
	urls := []struct{ name, url string }{
		{"secrets in every part", "http://apiSECRET:passSECRET@rpc.example/api/pathSECRET?apikey=querySECRET"},
		{"a user name that starts the password", "http://keySECRET:keySECRETmore@rpc.example/v3/pathSECRET?apikey=keySECRETmore&x=querySECRET"},
		{"a password that is part of the path", "http://userSECRET:pathSECRET@rpc.example/v3/pathSECRET/more?apikey=querySECRET"},
		{"a percent-escaped path", "http://rpc.example/v3/path%20SECRET%2Fkey?apikey=query%20SECRET"},
		{"a query with a quote, a backslash and a no-break space", "http://rpc.example/v3/pathSECRET?apikey=q\"u\\e\u00a0rySECRET"},
	}
	errDown := errors.New("base is down")
	bases := []struct {
		name      string
		base      roundTripFunc
		shown     bool // the error quotes the URL, so the message must mask it
		keepChain bool // errors.Is(err, errDown) must hold
		netError  bool // errors.As must find a net.Error
		timeout   bool // errors.Is(err, context.DeadlineExceeded) must hold, and the net.Error must be a timeout
	}{
		{name: "an error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("cannot reach %s", r.URL)
		}, shown: true},
		{name: "an error quoting the URL with %q", base: func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("cannot reach %q", r.URL.String())
		}, shown: true},
		{name: "a Base that sends through its own http.Client", base: func(r *http.Request) (*http.Response, error) {
			inner := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errDown })}
			return inner.Do(r.Clone(r.Context()))
		}, shown: true, netError: true}, // a *url.Error is a net.Error
		{name: "a read error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			body := io.NopCloser(iotest.ErrReader(fmt.Errorf("stream from %s broke", r.URL)))
			return &http.Response{StatusCode: http.StatusOK, Body: body, Header: http.Header{}, Request: r}, nil
		}, shown: true},
		{name: "a timeout quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("dial %s: %w", r.URL, context.DeadlineExceeded)
		}, shown: true, netError: true, timeout: true},
		{name: "a network error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("refused by %s", r.URL)}
		}, shown: true, netError: true},
		{name: "a provider's RPC error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			message, _ := json.Marshal("invalid key in " + r.URL.String())
			return answerBody(r, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":`+string(message)+`}}`), nil
		}, shown: true},
		{name: "a provider's malformed RPC error escaping the URL's slashes", base: func(r *http.Request) (*http.Response, error) {
			message, _ := json.Marshal("invalid key for " + r.URL.String())
			return answerBody(r, `{"jsonrpc":"2.0","id":1,"error":`+strings.ReplaceAll(string(message), "/", `\/`)+`}`), nil
		}}, // shown as [redacted] whole
		{name: "a clean message over a chain that quotes the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, &wrapped{msg: "connection failed", err: fmt.Errorf("dial %s", r.URL)}
		}},
		{name: "an error quoting nothing secret", base: func(*http.Request) (*http.Response, error) {
			return nil, errDown
		}, keepChain: true},
	}
	for _, u := range urls {
		for _, b := range bases {
			t.Run(b.name+" with "+u.name, func(t *testing.T) {
				m := mustNew(t, Config{Endpoints: named("a", u.url), Base: b.base})
				pe := probeErrors(t, check(m))["a"]
				if pe == nil {
					t.Fatal("the probe did not fail")
				}
				assertNoSecret(t, pe)
				msg := pe.Error()
				if b.shown && (!strings.Contains(msg, "[redacted]") || !strings.Contains(msg, "rpc.example")) {
					t.Errorf("message %q; want the secrets masked and the host shown", msg)
				}
				if errors.Is(pe, errDown) != b.keepChain {
					t.Errorf("errors.Is(err, the Base's error) = %v, want %v", !b.keepChain, b.keepChain)
				}
				var ne net.Error
				isNet, deadline := errors.As(pe, &ne), errors.Is(pe, context.DeadlineExceeded)
				if isNet != b.netError || deadline != b.timeout || (isNet && ne.Timeout() != b.timeout) {
					t.Errorf("error %q: a net.Error found %v, context.DeadlineExceeded %v; want %v, %v, and Timeout %[4]v", pe, isNet, deadline, b.netError, b.timeout)
				}
			})
		}
	}
}

// wrapped is an error whose own message is clean but whose chain is not.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Every occurrence of every form is found before any is masked, so forms
// that overlap, touch or contain one another are masked whole.
func TestMask(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		forms []string
		want  string
	}{
		{"nothing to mask", "dial tcp 127.0.0.1:1", []string{"key"}, "dial tcp 127.0.0.1:1"},
		{"every occurrence", "a key and a key", []string{"key"}, "a [redacted] and a [redacted]"},
		{"a form inside a longer one", "u=passkey", []string{"pass", "passkey"}, "u=[redacted]"},
		{"a longer form listed after a shorter one", "u=passkey", []string{"passkey", "pass"}, "u=[redacted]"},
		{"overlapping forms", "abcd", []string{"abc", "bcd"}, "[redacted]"},
		{"overlapping occurrences of one form", "aaaa!", []string{"aaa"}, "[redacted]!"},
		{"touching forms", "x=ab;", []string{"a", "b"}, "x=[redacted];"},
		{"an empty form is ignored", "text", []string{""}, "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mask(tt.text, tt.forms); got != tt.want {
				t.Errorf("mask(%q, %q) = %q, want %q", tt.text, tt.forms, got, tt.want)
			}
		})
	}
}

// FuzzRedaction builds an endpoint URL from fuzzed secrets, each holding
// the word SECRET, and a transport error from a fuzzed template in which
// each verb below stands for the URL, or one of its secret parts, in a form
// that errors print. Whatever the mix, the message must show no secret and
// nothing that could forge a log line.
func FuzzRedaction(f *testing.F) {
	f.Add("api", "pass", "v3/path", "q", `Post %q: dial %s: user %u pass %p path %e query %v %E`)
	f.Add("pass", "pass", "pass", "pass", "%u%p%e%v")
	f.Add("a\"b", "c\\d", "e f", "g\u00a0h", "%q\u2028%s")
	f.Fuzz(func(t *testing.T, user, password, path, query, template string) {
		u := &url.URL{Scheme: "http", Host: "rpc.example",
			User:     url.UserPassword(user+"SECRET", password+"SECRET"),
			Path:     "/" + path + "SECRET",
			RawQuery: url.Values{"key": {query + "SECRET"}}.Encode()}
		target, err := url.Parse(u.String())
		if err != nil {
			t.Skip()
		}
		for strings.Contains(template, "SECRET") {
			template = strings.ReplaceAll(template, "SECRET", "")
		}
		text := strings.NewReplacer(
			"%q", strconv.Quote(u.String()), "%s", u.String(),
			"%u", user+"SECRET", "%p", password+"SECRET",
			"%e", u.EscapedPath(), "%v", query+"SECRET", "%E", url.QueryEscape(query+"SECRET"),
		).Replace(template)
		err = transportError(errors.New(text), newSecrets(target))
		if strings.Contains(err.Error(), "SECRET") || hasControl(err.Error()) {
			t.Errorf("text %q gave the message %q", text, err)
		}
		assertNoSecret(t, err)
	})
}
