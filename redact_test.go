package blocklag

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yermakovsa/failnext"
)

// An error that shows any part of the endpoint's URL that may hold an API
// key, whether a transport error or a provider's own answer, is shown with
// every such part masked, whichever form the text uses and whichever secret
// contains another, and unwraps to nothing that shows one, nor ever to the
// Base's own error. Each URL is tried with each kind of error; every secret
// holds the word SECRET.
func TestTransportErrorsHideSecrets(t *testing.T) {
	urls := []struct{ name, url string }{
		{"secrets in every part", "http://apiSECRET:passSECRET@rpc.example/api/pathSECRET?apikey=querySECRET"},
		{"a user name that starts the password", "http://keySECRET:keySECRETmore@rpc.example/v3/pathSECRET?apikey=keySECRETmore&x=querySECRET"},
		{"a password that is part of the path", "http://userSECRET:pathSECRET@rpc.example/v3/pathSECRET/more?apikey=querySECRET"},
		{"a percent-escaped path", "http://rpc.example/v3/path%20SECRET%2Fkey?apikey=query%20SECRET"},
		{"a query with a quote, a backslash and a no-break space", "http://rpc.example/v3/pathSECRET?apikey=q\"u\\e\u00a0rySECRET"},
		{"a query split by a semicolon", "http://rpc.example/v3/pathSECRET?chain=main;apikey=querySECRET"},
		{"a query value holding a slash", "http://rpc.example/v3/pathSECRET?apikey=key/querySECRET"},
		{"characters that a JSON encoder escapes", "http://userSECRET:p&ssSECRET@rpc.example/v3/a&b>SECRET?apikey=q<uerySECRET"},
	}
	errDown := errors.New("base is down")
	bases := []struct {
		name     string
		base     roundTripFunc
		shown    bool // the error quotes the URL, so the message must mask it
		netError bool // errors.As must find a net.Error
		timeout  bool // errors.Is(err, context.DeadlineExceeded) must hold, and the net.Error must be a timeout
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
			resp := response(r, http.StatusOK, "", -1)
			resp.Body = io.NopCloser(iotest.ErrReader(fmt.Errorf("stream from %s broke", r.URL)))
			return resp, nil
		}, shown: true},
		{name: "a timeout quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("dial %s: %w", r.URL, context.DeadlineExceeded)
		}, shown: true, netError: true, timeout: true},
		{name: "a network error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("refused by %s", r.URL)}
		}, shown: true, netError: true},
		{name: "a provider's RPC error quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return response(r, http.StatusOK, rpcErrorAnswer(-32001, "invalid key in "+r.URL.String()), -1), nil
		}, shown: true},
		{name: "a provider's RPC error in a 403 quoting the URL", base: func(r *http.Request) (*http.Response, error) {
			return response(r, http.StatusForbidden, rpcErrorAnswer(-32001, "invalid key in "+r.URL.String()), -1), nil
		}, shown: true},
		{name: "a provider's malformed RPC error escaping the URL's slashes", base: func(r *http.Request) (*http.Response, error) {
			message, _ := json.Marshal("invalid key for " + r.URL.String())
			return response(r, http.StatusOK, `{"jsonrpc":"2.0","id":1,"error":`+strings.ReplaceAll(string(message), "/", `\/`)+`}`, -1), nil
		}}, // shown as [redacted] whole
		{name: "an error holding the URL as a JSON string", base: func(r *http.Request) (*http.Response, error) {
			asJSON, _ := json.Marshal(map[string]string{"url": r.URL.String()})
			return nil, fmt.Errorf("proxy said %s", asJSON)
		}, shown: true},
		{name: "an error holding the URL as JSON with escaped slashes", base: func(r *http.Request) (*http.Response, error) {
			asJSON, _ := json.Marshal(map[string]string{"url": r.URL.String()})
			return nil, fmt.Errorf("proxy said %s", strings.ReplaceAll(string(asJSON), "/", `\/`))
		}, shown: true},
		{name: "an error echoing the Basic credentials without padding", base: func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("rpc.example refused %s", strings.TrimRight(r.Header.Get("Authorization"), "="))
		}},
		{name: "a clean message over a chain that quotes the URL", base: func(r *http.Request) (*http.Response, error) {
			return nil, &wrapped{msg: "connection failed", err: fmt.Errorf("dial %s", r.URL)}
		}},
		{name: "an error quoting nothing secret", base: func(*http.Request) (*http.Response, error) {
			return nil, errDown
		}},
	}
	for _, u := range urls {
		for _, b := range bases {
			t.Run(b.name+" with "+u.name, func(t *testing.T) {
				m := mustNew(t, Config{Endpoints: named("a", u.url), Base: b.base})
				pe := probeErrors(t, check(m))["a"]
				if pe == nil {
					t.Fatal("the probe did not fail")
				}
				assertShowsNone(t, pe, basicCredentials(t, u.url))
				msg := pe.Error()
				if b.shown && (!strings.Contains(msg, "[redacted]") || !strings.Contains(msg, "rpc.example")) {
					t.Errorf("message %q; want the secrets masked and the host shown", msg)
				}
				if errors.Is(pe, errDown) {
					t.Errorf("error %q unwraps to the Base's own error", pe)
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
// that overlap, touch or contain one another are masked whole. The forms
// come from a list, to try the search itself, or from endpoint URLs, to
// try which parts of a URL count as secret: the path's segments on their
// own, each query value whether '&' or ';' sets it apart, the Basic
// credentials, and each of them raw, decoded, escaped and Go-quoted. The
// expected texts are written out by hand.
func TestMaskHidesEveryFormOfEverySecretWhole(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		forms []string // used when urls is empty
		urls  []string
		want  string
	}{
		{name: "nothing to mask", text: "dial tcp 127.0.0.1:1", forms: []string{"key"}, want: "dial tcp 127.0.0.1:1"},
		{name: "every occurrence", text: "a key and a key", forms: []string{"key"}, want: "a [redacted] and a [redacted]"},
		{name: "a form inside a longer one", text: "u=passkey", forms: []string{"pass", "passkey"}, want: "u=[redacted]"},
		{name: "a longer form listed after a shorter one", text: "u=passkey", forms: []string{"passkey", "pass"}, want: "u=[redacted]"},
		{name: "overlapping forms", text: "abcd", forms: []string{"abc", "bcd"}, want: "[redacted]"},
		{name: "overlapping occurrences of one form", text: "aaaa!", forms: []string{"aaa"}, want: "[redacted]!"},
		{name: "touching forms", text: "x=ab;", forms: []string{"a", "b"}, want: "x=[redacted];"},
		{name: "an empty form is ignored", text: "text", forms: []string{""}, want: "text"},
		{name: "a form that starts inside a near miss", text: "aaab", forms: []string{"aab"}, want: "a[redacted]"},
		{name: "a short form inside a near miss of a long one", text: "abce", forms: []string{"abcd", "c"}, want: "ab[redacted]e"},
		{name: "forms sharing a long prefix", text: "x/v3/abd/v3/ab", forms: []string{"/v3/abc", "/v3/abd"}, want: "x[redacted]/v3/ab"},
		{name: "a form that reaches back over two masked ones", text: "-abcdef-", forms: []string{"b", "d", "abcdef"}, want: "-[redacted]-"},
		{name: "a form listed twice", text: "key", forms: []string{"key", "key"}, want: "[redacted]"},

		{name: "a path segment echoed alone", text: "invalid project id 9f8e7d6c5b4a",
			urls: []string{"https://mainnet.infura.io/v3/9f8e7d6c5b4a"}, want: "invalid project id [redacted]"},
		{name: "a path segment of 8 bytes counts alone", text: "key k3y-k3y! refused",
			urls: []string{"https://rpc.example/v3/k3y-k3y!"}, want: "key [redacted] refused"},
		{name: "a path segment of 7 bytes is a word", text: "lookup mainnet-rpc.example: api v3",
			urls: []string{"https://rpc.example/v3/mainnet"}, want: "lookup mainnet-rpc.example: api v3"},
		{name: "a short path segment is hidden with the whole path", text: "POST /v3/mainnet refused",
			urls: []string{"https://rpc.example/v3/mainnet"}, want: "POST [redacted] refused"},
		{name: "a path segment counts by its length as written", text: "id ABC or %41%42%43",
			urls: []string{"https://rpc.example/v3/%41%42%43"}, want: "id [redacted] or [redacted]"},
		{name: "a path segment raw and percent-decoded", text: "a%20key%20one or a key one",
			urls: []string{"https://rpc.example/eth/a%20key%20one"}, want: "[redacted] or [redacted]"},
		{name: "a path segment with lower-case hex", text: "key a%2fkey%2bone",
			urls: []string{"https://rpc.example/eth/a%2Fkey%2Bone"}, want: "key [redacted]"},
		{name: "a path segment Go-quoted", text: `id "a\"bcdefgh"`,
			urls: []string{"https://rpc.example/eth/a%22bcdefgh"}, want: `id "[redacted]"`},
		{name: "a path segment in ASCII-only JSON", text: `{"id":"caf\u00e9-0123456789"}`,
			urls: []string{"https://rpc.example/eth/caf%C3%A9-0123456789"}, want: `{"id":"[redacted]"}`},
		{name: "a path segment in ASCII-only JSON beyond the BMP", text: `{"id":"k\ud83d\ude00-0123456789"}`,
			urls: []string{"https://rpc.example/eth/k%F0%9F%98%80-0123456789"}, want: `{"id":"[redacted]"}`},
		{name: "the root path is not a secret", text: "POST / HTTP/1.1",
			urls: []string{"https://rpc.example/"}, want: "POST / HTTP/1.1"},
		{name: "a query value after a semicolon", text: "key k3yk3yk3y refused",
			urls: []string{"https://rpc.example/?net=main;apikey=k3yk3yk3y"}, want: "key [redacted] refused"},
		{name: "a short query value is a word", text: "dial tcp 127.0.0.1:8545: refused",
			urls: []string{"http://127.0.0.1:8545/?chain=1"}, want: "dial tcp 127.0.0.1:8545: refused"},
		{name: "a short query value is hidden with the whole query", text: "GET /?chain=1",
			urls: []string{"http://127.0.0.1:8545/?chain=1"}, want: "GET /?[redacted]"},
		{name: "a query value decoded and escaped", text: "key a b!cdef or a+b%21cdef",
			urls: []string{"https://rpc.example/?apikey=a+b%21cdef"}, want: "key [redacted] or [redacted]"},
		{name: "a query value escaped as url.Values would", text: "key a+bcdefgh",
			urls: []string{"https://rpc.example/?apikey=a%20bcdefgh"}, want: "key [redacted]"},
		{name: "a bare query key", text: "unknown k3yonly1",
			urls: []string{"https://rpc.example/?net=main&k3yonly1"}, want: "unknown [redacted]"},
		{name: "the Basic credentials of a user and password", text: "Authorization: Basic dXNlcjpwYXNz",
			urls: []string{"https://user:pass@rpc.example/"}, want: "Authorization: Basic [redacted]"},
		{name: "the Basic credentials of a user alone", text: "Authorization: Basic dXNlcjo=",
			urls: []string{"https://user@rpc.example/"}, want: "Authorization: Basic [redacted]"},
		{name: "a user name and password raw and escaped", text: "us@er p:ss us%40er p%3Ass",
			urls: []string{"https://us%40er:p%3Ass@rpc.example/"}, want: "[redacted] [redacted] [redacted] [redacted]"},
		{name: "a short user name and password", text: "user ab, password cd",
			urls: []string{"https://ab:cd@rpc.example/"}, want: "user [redacted], password [redacted]"},
		{name: "the userinfo as written, with its escapes", text: "auth admin:p%26ssKilo42%3Dw0rd failed",
			urls: []string{"https://admin:p%26ssKilo42%3Dw0rd@rpc.example/"}, want: "auth [redacted] failed"},
		{name: "an empty user name gives no form", text: "Og== a:b",
			urls: []string{"http://@rpc.example/"}, want: "Og== a:b"},
		{name: "an empty user name and password give no form", text: "Og== a:b",
			urls: []string{"http://:@rpc.example/"}, want: "Og== a:b"},
		{name: "a stretch that ends inside an escape takes all of it", text: `id "k3yk3y\"" said`,
			urls: []string{"https://rpc.example/v3/k3yk3y%5C"}, want: `id "[redacted]" said`},
		{name: "a stretch that starts inside an escape takes all of it", text: `id "a\"k3yk3y" said`,
			urls: []string{"https://rpc.example/v3/%22k3yk3y"}, want: `id "a[redacted]" said`},
		{name: "a stretch that starts after the backslash of an escape takes all of it", text: `id "a\nk3yk3yk"`,
			urls: []string{"https://rpc.example/v3/nk3yk3yk"}, want: `id "a[redacted]"`},
		{name: "an escaped backslash is no escape of what follows", text: `id "a\\k3yk3yk3y"`,
			urls: []string{"https://rpc.example/v3/k3yk3yk3y"}, want: `id "a\\[redacted]"`},
		{name: "a stretch that ends inside a character takes all of it", text: "id k3yk3yé said",
			urls: []string{"https://rpc.example/v3/k3yk3y%C3"}, want: "id [redacted] said"},
		{name: "a marker already in the text is left as it is", text: "[redacted] and red",
			urls: []string{"https://red@rpc.example/"}, want: "[redacted] and [redacted]"},
		{name: "every endpoint's forms", text: "keys aaaa1111 and bbbb2222",
			urls: []string{"https://rpc.example/v3/aaaa1111", "https://rpc.example/v3/bbbb2222"}, want: "keys [redacted] and [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := secretsOf(tt.forms...)
			if tt.urls != nil {
				s = newSecrets(tt.urls...)
			}
			if got := s.mask(tt.text); got != tt.want {
				t.Errorf("mask(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if got, want := s.holds(tt.text), tt.want != tt.text; got != want {
				t.Errorf("holds(%q) = %v, want %v", tt.text, got, want)
			}
		})
	}
}

// A nil *secrets, what a Monitor not made by New has, holds nothing and
// masks nothing.
func TestNilSecretsHoldNothing(t *testing.T) {
	var s *secrets
	if got := s.mask("key"); got != "key" || s.holds("key") {
		t.Errorf("a nil *secrets masks %q as %q, or holds it", "key", got)
	}
}

// FuzzMask compares mask and holds with a search written the plain way:
// every form at every offset, each byte found marked, each run of marked
// bytes replaced. The forms are the fuzzed list split at '|'.
func FuzzMask(f *testing.F) {
	f.Add("abce aaab x/v3/abd/v3/ab", "abcd|c|aab|/v3/abc|/v3/abd")
	f.Add("-abcdef- aaaa!", "b|d|abcdef|aaa")
	f.Add(`x\nab \\ab "\u00e9k" é [redacted]`, "na|ab|9k|\xc3|red")
	f.Add("", "a")
	f.Add("text", "")
	f.Fuzz(func(t *testing.T, text, list string) {
		if len(text) > 1000 || len(list) > 200 {
			t.Skip()
		}
		forms := strings.Split(list, "|")
		s := secretsOf(forms...)
		want := plainMask(text, forms)
		if got := s.mask(text); got != want {
			t.Errorf("mask(%q) with forms %q = %q, want %q", text, forms, got, want)
		}
		if got := s.holds(text); got != (want != text) {
			t.Errorf("holds(%q) with forms %q = %v, want %v", text, forms, got, want != text)
		}
	})
}

// plainMask is mask done the slow and obvious way, for FuzzMask to compare
// against: every byte of every occurrence is marked, then every piece that
// holds a marked byte is marked whole (an escape read from the start of
// the text, a "[redacted]" already there, or a character).
func plainMask(text string, forms []string) string {
	hidden := make([]bool, len(text))
	for _, f := range forms {
		for i := 0; f != "" && i+len(f) <= len(text); i++ {
			if text[i:i+len(f)] == f {
				for j := i; j < i+len(f); j++ {
					hidden[j] = true
				}
			}
		}
	}
	escapeLen := map[byte]int{'x': 4, 'u': 6, 'U': 10}
	for i := 0; i < len(text); {
		n := 1
		switch {
		case strings.HasPrefix(text[i:], "[redacted]"):
			n = len("[redacted]")
		case text[i] == '\\' && i+1 < len(text):
			n = 2
			if l, ok := escapeLen[text[i+1]]; ok {
				n = l
			}
		case text[i] >= utf8.RuneSelf:
			_, n = utf8.DecodeRuneInString(text[i:])
		}
		n = min(n, len(text)-i)
		if slices.Contains(hidden[i:i+n], true) {
			for j := i; j < i+n; j++ {
				hidden[j] = true
			}
		}
		i += n
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

// FuzzRedaction builds an endpoint URL from fuzzed secrets, each holding
// the word SECRET, and a transport error from a fuzzed template in which
// each verb below stands for the URL, or one of its secret parts, in a form
// that errors print: the whole URL raw and quoted, the user name, the
// password, the escaped path, the last path segment decoded and escaped, a
// query value after '&' and one after ';', each decoded and escaped, and
// the Basic credentials. The path and query secrets are at least 8 bytes
// long, so that each counts on its own. Whatever the mix, the message must
// show no secret and nothing that could forge a log line.
func FuzzRedaction(f *testing.F) {
	f.Add("api", "pass", "v3/path", "q", `Post %q: dial %s: user %u pass %p path %e query %v %E`)
	f.Add("pass", "pass", "pass", "pass", "%u%p%e%v")
	f.Add("a\"b", "c\\d", "e f", "g\u00a0h", "%q\u2028%s")
	f.Add("u", "p", "v3/", "k", "invalid project id %g (%G); key %w %W; auth %b")
	f.Fuzz(func(t *testing.T, user, password, path, query, template string) {
		u := &url.URL{Scheme: "http", Host: "rpc.example",
			User: url.UserPassword(user+"SECRET", password+"SECRET"),
			Path: "/" + path + "_SECRET_",
			RawQuery: "key=" + url.QueryEscape(query+"_SECRET_") +
				";other=" + url.QueryEscape("o"+query+"_SECRET_")}
		target, err := url.Parse(u.String())
		if err != nil {
			t.Skip()
		}
		for strings.Contains(template, "SECRET") {
			template = strings.ReplaceAll(template, "SECRET", "")
		}
		segments := strings.Split(u.EscapedPath(), "/")
		last := segments[len(segments)-1]
		lastDecoded, err := url.PathUnescape(last)
		if err != nil {
			t.Skip()
		}
		basic := base64.StdEncoding.EncodeToString([]byte(user + "SECRET:" + password + "SECRET"))
		text := strings.NewReplacer(
			"%q", strconv.Quote(u.String()), "%s", u.String(),
			"%u", user+"SECRET", "%p", password+"SECRET",
			"%e", u.EscapedPath(), "%g", lastDecoded, "%G", last,
			"%v", query+"_SECRET_", "%E", url.QueryEscape(query+"_SECRET_"),
			"%w", "o"+query+"_SECRET_", "%W", url.QueryEscape("o"+query+"_SECRET_"),
			"%b", basic,
		).Replace(template)
		err = transportError(errors.New(text), newSecrets(target.String()))
		if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, basic) || hasControl(msg) {
			t.Errorf("text %q gave the message %q", text, msg)
		}
		assertShowsNone(t, err, basic)
	})
}

// A provider may echo the endpoint's URL in a value it sends. The value is
// masked before it is clipped, so a secret that the clip would cut short is
// not left half shown; and a JSON value shown undecoded is hidden whole
// when a secret stands behind its escapes.
func TestRefusalMasksSecrets(t *testing.T) {
	const secret = "/v3/keySECRETtail"
	tests := []struct {
		name    string
		refusal *refusal
	}{
		{"a value the clip cuts short", refuse("RPC error %s", strings.Repeat("x", maxQuoted-len(secret)+1)+secret)}, // the clip cuts off "l"
		{"JSON with escaped slashes", refuseMember("RPC error %s", []byte(`"bad key \/v3\/keySECRETtail"`))},
		{"JSON with an escaped letter", refuseMember("answer id is %s", []byte(`["\/v3\/key\u0053ECRETtail"]`))},
		{"JSON with the secret as a member name", refuseMember("RPC error %s", []byte(`{"/v3/keySECRETtail":1}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.refusal.resolve(secretsOf(secret)).Error()
			if strings.Contains(got, "ECRET") || !strings.Contains(got, "[reda") {
				t.Errorf("render = %q, want the secret masked", got)
			}
		})
	}
}

// A provider that rejects a key echoes it alone, not the URL around it: a
// path segment ("invalid project id KEY"), one query value, or the Basic
// credentials that net/http built from the user info. Each is masked, when
// the echo comes from a Base's error and when it comes from a real
// provider's RPC error. The forbidden texts are the word SECRET, which each
// secret holds, and the Basic credentials written out by hand; that the
// message shows the echo masked proves that the provider got what it
// echoes.
func TestSecretEchoedAloneIsMasked(t *testing.T) {
	const basicByHand = "dXNlclNFQ1JFVDpwYXNzU0VDUkVU" // base64 of userSECRET:passSECRET
	secrets := []struct {
		name string
		user string // user info before the host, with its '@'
		path string // after the host
		echo func(r *http.Request) string
	}{
		{name: "a key after /v3/", path: "/v3/keySECRET", echo: fixed("keySECRET")},
		{name: "a key after /eth/", path: "/eth/keySECRET", echo: fixed("keySECRET")},
		{name: "a percent-escaped key, decoded", path: "/v3/key%2BSECRET", echo: fixed("key+SECRET")},
		{name: "a query value after a semicolon", path: "/?chain=main;apikey=keySECRET", echo: fixed("keySECRET")},
		{name: "a query value after an ampersand", path: "/?chain=main&apikey=keySECRET", echo: fixed("keySECRET")},
		{name: "the Basic credentials", user: "userSECRET:passSECRET@", path: "/", echo: func(r *http.Request) string {
			return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		}},
	}
	routes := []struct {
		name string
		// start returns the host to probe and the Base to probe it with,
		// which answer with echo's text.
		start func(t *testing.T, echo func(*http.Request) string) (string, http.RoundTripper)
	}{
		{"a Base's error", func(t *testing.T, echo func(*http.Request) string) (string, http.RoundTripper) {
			return "rpc.example", roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, errors.New("invalid project id " + echo(r))
			})
		}},
		{"a provider's RPC error", func(t *testing.T, echo func(*http.Request) string) (string, http.RoundTripper) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, rpcErrorAnswer(-32000, "invalid project id "+echo(r)))
			})
			return p.Listener.Addr().String(), nil
		}},
		{"a provider's RPC error in a 401", func(t *testing.T, echo func(*http.Request) string) (string, http.RoundTripper) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, rpcErrorAnswer(-32000, "invalid project id "+echo(r)))
			})
			return p.Listener.Addr().String(), nil
		}},
	}
	for _, s := range secrets {
		for _, route := range routes {
			t.Run(s.name+" echoed alone in "+route.name+" is masked", func(t *testing.T) {
				host, base := route.start(t, s.echo)
				m := mustNew(t, Config{Endpoints: named("a", "http://"+s.user+host+s.path), Base: base})
				pe := probeErrors(t, check(m))["a"]
				if pe == nil {
					t.Fatal("the probe did not fail")
				}
				if msg := pe.Error(); !strings.Contains(msg, "invalid project id [redacted]") {
					t.Errorf("message %q; want the echoed secret masked", msg)
				}
				assertShowsNone(t, pe, basicByHand)
			})
		}
	}
}

// fixed is an echo that is always text.
func fixed(text string) func(*http.Request) string {
	return func(*http.Request) string { return text }
}

// Two endpoints of one provider share a Base and connections, so one's
// error can quote the other's request: every endpoint's secrets are masked
// in every endpoint's messages.
func TestSiblingSecretsAreMasked(t *testing.T) {
	const (
		pathA = "/v3/a1SECRET?apikey=aq1SECRET"
		pathB = "/eth/bSECRET?chain=main;token=bqSECRET"
	)
	tests := []struct {
		name  string
		hosts func(t *testing.T) (hostA, hostB string, base http.RoundTripper)
	}{
		{"a shared Base quoting the other endpoint's URL", func(t *testing.T) (string, string, http.RoundTripper) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if strings.Contains(r.URL.Path, "a1SECRET") {
					return nil, errors.New("pool busy with http://b.example" + pathB)
				}
				return nil, errors.New("pool busy with http://a.example" + pathA)
			})
			return "a.example", "b.example", base
		}},
		{"a shared provider echoing the other endpoint's key", func(t *testing.T) (string, string, http.RoundTripper) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
				theirs := "a1SECRET" // a's path segment, for b
				if strings.Contains(r.URL.Path, "a1SECRET") {
					theirs = "bqSECRET" // b's query value after ';', for a
				}
				io.WriteString(w, rpcErrorAnswer(-32000, "key "+theirs+" is not yours"))
			})
			host := p.Listener.Addr().String()
			return host, host, nil
		}},
	}
	for _, tt := range tests {
		t.Run("through "+tt.name, func(t *testing.T) {
			hostA, hostB, base := tt.hosts(t)
			m := mustNew(t, Config{Endpoints: named("a", "http://"+hostA+pathA, "b", "http://"+hostB+pathB), Base: base})
			errs := probeErrors(t, check(m))
			for _, id := range []failnext.EndpointID{"a", "b"} {
				pe := errs[id]
				if pe == nil {
					t.Fatalf("the probe of %s did not fail", id)
				}
				if !strings.Contains(pe.Error(), "[redacted]") {
					t.Errorf("message %q; want the other endpoint's secret masked", pe)
				}
				assertShowsNone(t, pe)
			}
		})
	}
}

// A Base's error is never reachable from a ProbeError, so nothing it does
// after the probe failed, and nothing its methods show, can leak what the
// message masks: not an As method that hands out a *url.Error quoting the
// URL, not a Format method that prints the URL under %+v, not a text that
// changes once Check has returned.
func TestBaseErrorChainIsNotKept(t *testing.T) {
	const secretURL = "http://userSECRET:passSECRET@rpc.example/v3/keySECRET?apikey=querySECRET"
	changing := &changingError{text: "connection failed"}
	tests := []struct {
		name  string
		err   error
		after func() // run once Check has returned
	}{
		{name: "an error whose As method yields a *url.Error quoting the URL", err: &asURLError{}},
		{name: "an error whose Format method prints the URL under %+v", err: &formatsURL{}},
		{name: "an error whose text changes after Check returns", err: changing,
			after: func() { changing.text = "now at " + secretURL }},
		{name: "a plain error", err: errors.New("connection failed")},
	}
	for _, tt := range tests {
		t.Run(tt.name+" cannot be reached", func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, tt.err })
			m := mustNew(t, Config{Endpoints: named("a", secretURL), Base: base})
			pe := probeErrors(t, check(m))["a"]
			if pe == nil {
				t.Fatal("the probe did not fail")
			}
			before := pe.Error()
			if tt.after != nil {
				tt.after()
			}
			if pe.Error() != before {
				t.Errorf("message changed from %q to %q after Check returned", before, pe)
			}
			if errors.Is(pe, tt.err) {
				t.Errorf("error %q unwraps to the Base's own error", pe)
			}
			var ue *url.Error
			var ae *asURLError
			var fe *formatsURL
			var ce *changingError
			if errors.As(pe, &ue) || errors.As(pe, &ae) || errors.As(pe, &fe) || errors.As(pe, &ce) {
				t.Errorf("errors.As finds the Base's error, or what its As method offers, in %q", pe)
			}
			assertShowsNone(t, pe)
		})
	}
}

// asURLError offers a *url.Error quoting the URL to anyone who asks for a
// *url.Error or a net.Error.
type asURLError struct{}

func (*asURLError) Error() string { return "connection failed" }

func (*asURLError) As(target any) bool {
	ue := &url.Error{Op: "Post", URL: "http://rpc.example/v3/keySECRET", Err: errors.New("refused")}
	switch t := target.(type) {
	case **url.Error:
		*t = ue
	case *net.Error:
		*t = ue
	default:
		return false
	}
	return true
}

// formatsURL prints the URL it failed on when formatted with %+v.
type formatsURL struct{}

func (*formatsURL) Error() string { return "connection failed" }

func (e *formatsURL) Format(f fmt.State, verb rune) {
	if f.Flag('+') {
		io.WriteString(f, "connection to http://rpc.example/v3/keySECRET failed")
		return
	}
	io.WriteString(f, e.Error())
}

// changingError's text is whatever its field holds when asked.
type changingError struct{ text string }

func (e *changingError) Error() string { return e.text }

// A transport error keeps, through stand-ins, what callers ask of it with
// errors.Is and errors.As: the context errors, the deadline and
// end-of-file errors, the system's error number, and whether a net.Error
// was a timeout. The Base's errors quote the URL, which the stand-ins must
// not show, and none of the Base's own error types is reachable.
func TestStandInsKeepStandardErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error // wrapped by the Base in text that quotes the URL
		is       error // errors.Is must find it; nil for none
		netError bool  // errors.As must find a net.Error
		timeout  bool  // and its Timeout must be this
		reason   Reason
	}{
		{name: "context.Canceled", err: context.Canceled, is: context.Canceled, reason: ReasonTransport},
		{name: "context.DeadlineExceeded", err: context.DeadlineExceeded, is: context.DeadlineExceeded, netError: true, timeout: true, reason: ReasonTimeout},
		{name: "os.ErrDeadlineExceeded", err: os.ErrDeadlineExceeded, is: os.ErrDeadlineExceeded, netError: true, timeout: true, reason: ReasonTimeout},
		{name: "io.ErrUnexpectedEOF", err: io.ErrUnexpectedEOF, is: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "io.EOF", err: io.EOF, is: io.EOF, reason: ReasonTransport},
		{name: "a syscall.Errno", err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
			is: syscall.ECONNRESET, netError: true, reason: ReasonTransport},
		{name: "a net.Error that timed out", err: fakeNetError{timeout: true}, netError: true, timeout: true, reason: ReasonTimeout},
		{name: "a net.Error that did not time out", err: fakeNetError{}, netError: true, reason: ReasonTransport},
		{name: "a net.Error that an As method gives", err: asOnly{fakeNetError{timeout: true}}, netError: true, timeout: true, reason: ReasonTimeout},
		{name: "a syscall.Errno that an As method gives", err: asOnly{syscall.ECONNRESET}, is: syscall.ECONNRESET, netError: true, reason: ReasonTransport},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is kept by a stand-in", func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("%s failed: %w", r.URL, tt.err)
			})
			m := mustNew(t, Config{Endpoints: named("a", withSecrets("http://rpc.example")), Base: base})
			pe := probeErrors(t, check(m))["a"]
			if pe == nil {
				t.Fatal("the probe did not fail")
			}
			assertShowsNone(t, pe)
			if tt.is != nil && !errors.Is(pe, tt.is) {
				t.Errorf("errors.Is(%q, %v) = false, want true", pe, tt.is)
			}
			var ne net.Error
			if got := errors.As(pe, &ne); got != tt.netError || (got && ne.Timeout() != tt.timeout) {
				t.Errorf("error %q: a net.Error found %v, want %v with Timeout %v", pe, got, tt.netError, tt.timeout)
			}
			var op *net.OpError
			var sys *os.SyscallError
			var fake fakeNetError
			if errors.As(pe, &op) || errors.As(pe, &sys) || errors.As(pe, &fake) {
				t.Errorf("errors.As finds one of the Base's own errors in %q", pe)
			}
			if got := pe.Reason(); got != tt.reason {
				t.Errorf("Reason() = %q, want %q", got, tt.reason)
			}
		})
	}
}

// fakeNetError is a net.Error from a Base, whose text quotes the URL.
type fakeNetError struct{ timeout bool }

func (e fakeNetError) Error() string   { return "i/o on http://rpc.example/v3/pathSECRET" }
func (e fakeNetError) Timeout() bool   { return e.timeout }
func (e fakeNetError) Temporary() bool { return false }

// asOnly is a Base's error that is neither a net.Error nor an Errno itself
// but says, through its As method, that it is its inner one.
type asOnly struct{ inner error }

func (e asOnly) Error() string { return "wrapped on http://rpc.example/v3/pathSECRET" }

func (e asOnly) As(target any) bool {
	switch t := target.(type) {
	case *net.Error:
		ne, ok := e.inner.(net.Error)
		*t = ne
		return ok
	case *syscall.Errno:
		errno, ok := e.inner.(syscall.Errno)
		*t = errno
		return ok
	}
	return false
}

// A real dial to a loopback port where nothing listens is refused: the
// ProbeError names the endpoint and says so, in its message and to
// errors.Is, through the system's error number, and shows none of the URL's
// secrets.
func TestRefusedDialKeepsTheErrorNumber(t *testing.T) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = nil
	t.Cleanup(base.CloseIdleConnections)
	m := mustNew(t, Config{Endpoints: named("a", withSecrets("http://127.0.0.1:1")), Base: base})
	pe := probeErrors(t, check(m))["a"]
	if pe == nil {
		t.Fatal("the probe did not fail")
	}
	if msg := pe.Error(); !strings.Contains(msg, `endpoint "a"`) || !strings.Contains(msg, "connection refused") {
		t.Errorf("message %q does not name the endpoint and say the connection was refused", msg)
	}
	if !errors.Is(pe, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(%q, syscall.ECONNREFUSED) = false, want true", pe)
	}
	var ne net.Error
	if !errors.As(pe, &ne) || ne.Timeout() {
		t.Errorf("error %q: want a net.Error that is not a timeout", pe)
	}
	if got := pe.Reason(); got != ReasonTransport {
		t.Errorf("Reason() = %q, want %q", got, ReasonTransport)
	}
	assertShowsNone(t, pe)
}

// basicCredentials is the base64 of the user name and password in rawURL,
// without its padding, as a Basic Authorization header carries them; ""
// when rawURL has no user.
func basicCredentials(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	password, _ := u.User.Password()
	return strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+password)), "=")
}

// The escape that a message writes for a rune it cannot show may begin a
// key: BEL is shown as \a, so a provider that sends BEL and then the rest
// of a key starting with "a" would show the whole key. Masking runs on the
// text as shown, so no escape completes a key, neither in a message nor in
// the JSON of Status, which writes '&' as \u0026. Each key is 32 bytes,
// as Infura's are, and starts with what the escape writes.
func TestEscapeCannotCompleteASecret(t *testing.T) {
	const rest = "bcdef0123456789abcdef0123456789"
	tests := []struct {
		name string
		key  string // in the URL's path
		sent string // the text ahead of rest that reaches the message
	}{
		{"a BEL shown as \\a", "a" + rest, "\a"},
		{"a newline shown as \\n", "n" + rest, "\n"},
		{"a backspace shown as \\b", "b" + rest, "\b"},
		{"a form feed shown as \\f", "f" + rest, "\f"},
		{"a tab shown as \\t", "t" + rest, "\t"},
		{"an ESC shown as \\x1b", "x1b" + rest, "\x1b"},
		{"a line separator shown as \\u2028", "u2028" + rest, "\u2028"},
		{"an invalid byte shown as \\xab", "xab" + rest, "\xab"},
		{"an ampersand that JSON shows as \\u0026", "u0026" + rest, "&"},
	}
	routes := []struct {
		name string
		cfg  func(t *testing.T, key, text string) Config
	}{
		{"a provider's RPC error", func(t *testing.T, key, text string) Config {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", reply(0, rpcErrorAnswer(-32000, text)))
			return Config{Endpoints: named("a", p.URL+"/v3/"+key)}
		}},
		{"a Base's error", func(t *testing.T, key, text string) Config {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New(text) })
			return Config{Endpoints: named("a", "http://rpc.example/v3/"+key), Base: base}
		}},
	}
	for _, tt := range tests {
		for _, route := range routes {
			t.Run(tt.name+" in "+route.name, func(t *testing.T) {
				good := newProvider(t, 100)
				cfg := route.cfg(t, tt.key, "project "+tt.sent+rest+" unknown")
				cfg.Endpoints = append(cfg.Endpoints, named("good", good.URL)...)
				m := mustNew(t, cfg)
				err := check(m)
				if probeErrors(t, err)["a"] == nil {
					t.Fatal("the probe did not fail")
				}
				assertNoneShows(t, err, m.Status(), tt.key)
			})
		}
	}
}

// The "..." that ends a clipped text may complete a key that ends in a
// dot: a provider's message that breaks off after "abcdef0123456." would
// show the key once the clip is marked. The RPCError's Message, a field
// that code may log on its own, is masked after the clip as the messages
// are.
func TestClipCannotCompleteASecret(t *testing.T) {
	const key = "abcdef0123456."
	sent := strings.Repeat("x", maxQuoted-len(key)+1) + strings.TrimSuffix(key, ".") + " and more"
	for _, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
		t.Run(fmt.Sprintf("in the RPC error of a %d", status), func(t *testing.T) {
			p, good := newProvider(t, 100), newProvider(t, 100)
			p.on("eth_blockNumber", reply(status, rpcErrorAnswer(-32000, sent)))
			m := mustNew(t, Config{Endpoints: named("a", p.URL+"/v3/"+key, "good", good.URL)})
			err := check(m)
			var re *RPCError
			if !errors.As(err, &re) {
				t.Fatalf("Check = %v; want an RPCError", err)
			}
			if strings.Contains(re.Message, "and more") {
				t.Fatalf("Message %q; want it clipped", re.Message)
			}
			if strings.Contains(re.Message, key) {
				t.Errorf("Message %q shows the key", re.Message)
			}
			assertNoneShows(t, err, m.Status(), key)
		})
	}
}

// The RPCError's Message, logged on its own, is quoted by the log's
// handler: JSON writes '&' as \u0026, which may complete a key that begins
// "u0026". So Message is masked as a log would quote it, as messages are,
// clipped or not.
func TestMessageFieldCannotBeCompletedByALogsQuoting(t *testing.T) {
	const key = "u0026bcdef0123456789"
	p, good := newProvider(t, 100), newProvider(t, 100)
	p.on("eth_blockNumber", reply(0, rpcErrorAnswer(-32000, "no project &bcdef0123456789")))
	m := mustNew(t, Config{Endpoints: named("a", p.URL+"/v3/"+key, "good", good.URL)})
	var re *RPCError
	if err := check(m); !errors.As(err, &re) {
		t.Fatalf("Check = %v; want an RPCError", err)
	}
	inJSON, _ := json.Marshal(re.Message)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("rpc", "message", re.Message)
	for _, text := range []string{re.Message, string(inJSON), logged.String()} {
		if strings.Contains(text, key) {
			t.Errorf("%s shows the key", text)
		}
	}
}

// A number that a message writes may spell a numeric key: an RPC error's
// code, or the chain ID that a provider reported. The message masks it
// like any other text, while the typed field keeps the number.
func TestNumberCannotCompleteASecret(t *testing.T) {
	const key = "98765432"
	t.Run("an RPC error code equal to a query value", func(t *testing.T) {
		p, good := newProvider(t, 100), newProvider(t, 100)
		p.on("eth_blockNumber", reply(0, rpcErrorAnswer(98765432, "no such account")))
		m := mustNew(t, Config{Endpoints: named("a", p.URL+"/?account="+key, "good", good.URL)})
		err := check(m)
		var re *RPCError
		if !errors.As(err, &re) || re.Code != 98765432 {
			t.Fatalf("Check = %v; want an RPCError with Code 98765432", err)
		}
		assertNoneShows(t, err, m.Status(), key)
	})
	t.Run("a chain ID equal to a query value", func(t *testing.T) {
		p, good := newProvider(t, 100), newProvider(t, 100)
		p.serveChain(`"0x5e30a78"`) // 98765432
		m := mustNew(t, Config{Endpoints: named("a", p.URL+"/?account="+key, "good", good.URL), ChainID: 1})
		err := check(m)
		var ce *ChainIDError
		if !errors.As(err, &ce) || ce.Got != 98765432 || ce.Want != 1 {
			t.Fatalf("Check = %v; want a ChainIDError with Got 98765432", err)
		}
		assertNoneShows(t, err, m.Status(), key)
	})
	t.Run("an HTTP status equal to a password", func(t *testing.T) {
		p, good := newProvider(t, 100), newProvider(t, 100)
		p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "429")
			reply(http.StatusTooManyRequests, rpcErrorAnswer(-32005, "slow down"))(w, r)
		})
		m := mustNew(t, Config{Endpoints: named("a", strings.Replace(p.URL, "://", "://user:429@", 1), "good", good.URL)})
		err := check(m)
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 429 || se.RetryAfter != 429*time.Second || se.RPC == nil {
			t.Fatalf("Check = %v; want a StatusError 429 with its RPC error and Retry-After", err)
		}
		assertNoneShows(t, err, m.Status(), "429")
	})
}

// A transport error's text is read only as far as its message can show
// it, plus the longest secret form, so that no form is cut at the edge: a
// text of 38 MB, as net/http writes for a header line of 9 MiB of control
// bytes, gives the message that its first 64 KiB give, and reading it
// allocates no more than that prefix would. The key lies across where the
// message is clipped, or is repeated, so that masking shortens the text
// and the clip is decided only far into it.
func TestHugeTransportTextIsReadOnlyAsFarAsShown(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	s := newSecrets("https://rpc.example/v3/" + key)
	for _, tt := range []struct{ name, head string }{
		{"a key across the clip", `net/http: malformed MIME header line: "` + strings.Repeat("x", maxTransportText-60) + key},
		{"keys that masking shortens", strings.Repeat(key+" ", 200)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			huge := errors.New(tt.head + strings.Repeat(`\x01`, 38<<20/4))
			short := errors.New(huge.Error()[:64<<10])
			want := transportError(short, s).Error()

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got := transportError(huge, s).Error()
			runtime.ReadMemStats(&after)
			if got != want {
				t.Errorf("the huge text shows\n%q\nwhere its first 64 KiB show\n%q", got, want)
			}
			if strings.Contains(got, key[:8]) || strings.Contains(got, key[len(key)-8:]) || !strings.Contains(got, "[redacted]") {
				t.Errorf("message %q; want the key masked whole", got)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("reading a 38 MB text allocated %d bytes, want at most 1 MiB", n)
			}
		})
	}
}

// The words that a message writes around a text are masked with it, in
// every error reachable from the ProbeError: a user name and a password
// count at any length, so even words of blocklag's own, here "request" of
// "chain ID request" and "timed" of "timed out", are hidden when a URL
// holds them.
func TestWordsAroundATextAreMaskedToo(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done() // hangs until the probe times out
		return nil, r.Context().Err()
	})
	m := mustNew(t, Config{Endpoints: named("a", "http://request:timed@rpc.example/"), Base: base,
		ChainID: 1, ProbeTimeout: 50 * time.Millisecond})
	pe := probeErrors(t, check(m))["a"]
	if pe == nil || !errors.Is(pe, context.DeadlineExceeded) || !strings.Contains(pe.Error(), "chain ID [redacted]: [redacted] out after") {
		t.Fatalf("ProbeError %v; want the chain ID request timed out, its words masked", pe)
	}
	assertShowsNone(t, pe, "request", "timed")
}

// A Base's error whose Unwrap returns itself, or an endless chain of new
// errors, cannot stall a Check: walking a chain for the standard errors
// stops after 64 of them.
func TestEndlessErrorChainCannotStallACheck(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"an error that unwraps to itself", &selfWrapping{}},
		{"an endless chain of new errors", endless(0)},
		{"an endless tree of joined errors", endlessJoin{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, tt.err })
			m := mustNew(t, Config{Endpoints: named("a", "http://rpc.example/"), Base: base})
			done := make(chan error, 1)
			go func() { done <- check(m) }()
			select {
			case err := <-done:
				if pe := probeErrors(t, err)["a"]; pe == nil || !strings.Contains(pe.Error(), "loops") {
					t.Errorf("Check = %v; want a ProbeError showing the Base's text", err)
				}
			case <-time.After(10 * time.Second): // a watchdog: the Check should take microseconds
				t.Fatal("Check did not return")
			}
		})
	}
}

// A Base's error chain is looked at for stand-ins as far as its 64th
// error and no further, however long it is.
func TestErrorChainIsLookedAtToItsSixtyFourthError(t *testing.T) {
	for _, tt := range []struct {
		name  string
		depth int // errors ahead of io.ErrUnexpectedEOF in the chain
		found bool
	}{
		{"io.ErrUnexpectedEOF as the 64th error is kept", 63, true},
		{"io.ErrUnexpectedEOF as the 65th error is not looked for", 64, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, chainOf(tt.depth) })
			pe, _ := probeOne(t, Config{Endpoints: named("a", "http://rpc.example/"), Base: base})
			if got := errors.Is(pe, io.ErrUnexpectedEOF); got != tt.found {
				t.Errorf("errors.Is(%v, io.ErrUnexpectedEOF) = %v, want %v", pe, got, tt.found)
			}
		})
	}
}

// chainOf(n) is a chain of n errors that ends in io.ErrUnexpectedEOF.
type chainOf int

func (e chainOf) Error() string { return "link" }
func (e chainOf) Unwrap() error {
	if e <= 1 {
		return io.ErrUnexpectedEOF
	}
	return e - 1
}

type selfWrapping struct{}

func (e *selfWrapping) Error() string { return "loops" }
func (e *selfWrapping) Unwrap() error { return e }

type endless int

func (e endless) Error() string { return "loops" }
func (e endless) Unwrap() error { return e + 1 }

type endlessJoin struct{}

func (endlessJoin) Error() string   { return "loops" }
func (endlessJoin) Unwrap() []error { return []error{endlessJoin{}, endlessJoin{}} }

// Outside text cannot read as a failure of another endpoint: a TLS
// certificate's name, quoted by net/http's error, reaches the message
// inside Go double quotes, so the line still says one failure, of the
// endpoint that failed.
func TestOutsideTextCannotForgeAFailure(t *testing.T) {
	const name = `evil.example; blocklag: endpoint "primary": RPC error -32005: "limit exceeded"`
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "rpc.example" {
			return nil, errors.New("tls: failed to verify certificate: x509: certificate is valid for " + name + ", not rpc.example")
		}
		return response(r, http.StatusOK, answer(100), -1), nil
	})
	m := mustNew(t, Config{Endpoints: named("primary", "http://good.example/", "hostile", "https://rpc.example/"), Base: base})
	err := check(m)
	if err == nil {
		t.Fatal("Check = nil, want the hostile endpoint's failure")
	}
	msg := err.Error()
	if got := strings.Count(msg, `endpoint "`); got != 1 || !strings.Contains(msg, `endpoint "hostile": `) {
		t.Errorf("message %q reads as %d failures, want one, of hostile", msg, got)
	}
	if !strings.HasPrefix(msg, "blocklag: ") || strings.Contains(msg, `; blocklag: endpoint "`) {
		t.Errorf("message %q does not start with blocklag:, or lists a failure after another", msg)
	}
	_, quoted, _ := strings.Cut(msg, `endpoint "hostile": `)
	if text, err := strconv.Unquote(quoted); err != nil || !strings.HasSuffix(text, name+", not rpc.example") {
		t.Errorf("message %q does not end in the Base's text as Go quotes it", msg)
	}
}

// Short parts of a provider's URL format are words, not keys, and masking
// them garbled real messages: with Ankr's /eth/KEY beside Alchemy's
// /v2/KEY, a lookup of Alchemy's host and a method name read whole, while
// both keys stay hidden; with ?chain=1, a loopback address reads whole.
func TestShortURLPartsLeaveMessagesReadable(t *testing.T) {
	const (
		ankrKey    = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
		alchemyKey = "Zx8wVu7TsRq6PoNm5LkJi4HgFe3DcBa2"
	)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "rpc.ankr.com" {
			return response(r, http.StatusOK, rpcErrorAnswer(-32601, "the method eth_blockNumber does not exist/is not available, key "+ankrKey), -1), nil
		}
		return nil, errors.New("dial tcp: lookup eth-mainnet.g.alchemy.com on 127.0.0.53:53: no such host, for /v2/" + alchemyKey)
	})
	m := mustNew(t, Config{Endpoints: named(
		"ankr", "https://rpc.ankr.com/eth/"+ankrKey,
		"alchemy", "https://eth-mainnet.g.alchemy.com/v2/"+alchemyKey), Base: base})
	err := check(m)
	msg := err.Error()
	for _, whole := range []string{"the method eth_blockNumber does not exist", "lookup eth-mainnet.g.alchemy.com on"} {
		if !strings.Contains(msg, whole) {
			t.Errorf("message %q does not read %q whole", msg, whole)
		}
	}
	assertNoneShows(t, err, m.Status(), ankrKey, alchemyKey)

	t.Run("a query of ?chain=1 leaves a loopback address whole", func(t *testing.T) {
		l, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			t.Fatal(lerr)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now, so the dial is refused
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		t.Cleanup(tr.CloseIdleConnections)
		pe := probeErrors(t, check(mustNew(t, Config{Endpoints: named("a", "http://"+addr+"/?chain=1"), Base: tr})))["a"]
		if pe == nil || !strings.Contains(pe.Error(), "dial tcp "+addr) {
			t.Errorf("ProbeError %v; want it to read the address %s whole", pe, addr)
		}
	})
}

// FuzzFinalMessageShowsNoSecret configures an endpoint whose user name,
// password, path segment and query value are fuzzed, beside a sibling
// with a key of its own, and fails both probes with a fuzzed text: a Base's
// error for the one and a provider's RPC error, whose code is the query
// value when that is a number, for the other; a third answers, so that
// the Check publishes. No form of either endpoint's
// secrets may show in any text that reaches an operator: each error's
// message all the way down, and that message as a log handler or the JSON
// of Status quotes it. The forms are worked out here, apart from the code
// under test, from the list in ProbeError's documentation; an occurrence
// that overlaps a "[redacted]" is not a secret shown. Run longer with:
// go test -run '^$' -fuzz FuzzFinalMessageShowsNoSecret -fuzztime 5m -parallel 1
func FuzzFinalMessageShowsNoSecret(f *testing.F) {
	const rest = "bcdef0123456789abcdef0123456789"
	f.Add("admin", "p&ssKilo42=w0rd", "a"+rest, "98765432", "project \a"+rest+" unknown")
	f.Add("", "", "u0026"+rest, "1", "key &"+rest)
	f.Add("us er", "pa\"ss", "caf\u00e9-0123456789", "k%2Fk%2Fk%2Fk", `{"id":"caf\u00e9-0123456789","k":"k/k/k/k"}`)
	f.Add("a", "b", "x1b"+rest, "v", "\x1b"+rest+" \xab"+rest)
	f.Add("0", `"`, "0", "0", "0") // a password that is a quote, which every quoted text holds
	f.Fuzz(func(t *testing.T, user, password, segment, value, text string) {
		if len(text) > 2000 || len(user)+len(password)+len(segment)+len(value) > 300 {
			t.Skip()
		}
		u := &url.URL{Scheme: "http", Host: "rpc.example", Path: "/v3/" + segment, RawQuery: "chain=1&key=" + url.QueryEscape(value)}
		if user != "" || password != "" {
			u.User = url.UserPassword(user, password)
		}
		const siblingKey = "0123456789abcdef0123456789abcdef"
		sibling := "http://rpc.example/eth/" + siblingKey
		code, err := strconv.Atoi(value)
		if err != nil {
			code = -32000
		}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch {
			case r.URL.Host == "good.example":
				return response(r, http.StatusOK, answer(100), -1), nil
			case strings.Contains(r.URL.Path, siblingKey):
				return response(r, http.StatusOK, rpcErrorAnswer(code, text), -1), nil
			}
			return nil, errors.New(text)
		})
		m, err := New(Config{Endpoints: named("a", u.String(), "b", sibling, "good", "http://good.example/"), Base: base})
		if err != nil {
			t.Skip() // New rejects the URL
		}
		err = check(m)
		if len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want both probes failed", err)
		}
		var texts []string
		eachError(err, func(e error) {
			// Each message, and its inside as Go and both JSON
			// encoders quote it: the quotes around it are the log's.
			msg := e.Error()
			goQ, js, noHTML := quotedInsides(msg)
			texts = append(texts, msg, goQ, js, noHTML)
		})
		// The error members of Status's JSON, as encoded; the rest of it
		// holds words of its own.
		js, _ := json.Marshal(m.Status())
		var st struct {
			Endpoints []struct{ Error json.RawMessage }
		}
		if err := json.Unmarshal(js, &st); err != nil {
			t.Fatal(err)
		}
		for _, e := range st.Endpoints {
			if len(e.Error) > 2 {
				texts = append(texts, string(e.Error[1:len(e.Error)-1]))
			}
		}
		forms := oracleForms(t, u.String())
		forms = append(forms, oracleForms(t, sibling)...)
		for _, text := range texts {
			for _, form := range forms {
				if at := visibleAt(text, form); at >= 0 {
					t.Fatalf("%q shows the form %q at %d", text, form, at)
				}
			}
		}
	})
}

// oracleForms lists the forms of rawURL's secrets as ProbeError's
// documentation lists them, built without the code under test: the user
// name, password and user information, the Basic credentials, the path
// and the query, and each path segment and query value of at least 8
// bytes as written; each raw as written, decoded, and escaped with either
// case of hex, and each of those as Go quotes it, and as the JSON encoders
// write it (Go's, Go's without HTML escapes, with '/' escaped, and ASCII
// only).
func oracleForms(t *testing.T, rawURL string) []string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	if u.User != nil {
		name := u.User.Username()
		password, _ := u.User.Password()
		if name != "" || password != "" {
			basic := base64.StdEncoding.EncodeToString([]byte(name + ":" + password))
			parts = append(parts, name, password, u.User.String(), basic, strings.TrimRight(basic, "="))
		}
	}
	if u.Path != "/" {
		parts = append(parts, u.Path, u.EscapedPath())
	}
	parts = append(parts, u.RawQuery)
	alone := strings.Split(u.EscapedPath(), "/")
	for _, pair := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		_, v, ok := strings.Cut(pair, "=")
		if !ok {
			v = pair
		}
		alone = append(alone, v)
	}
	for _, a := range alone {
		if len(a) < 8 {
			continue
		}
		parts = append(parts, a)
		if d, err := url.PathUnescape(a); err == nil {
			parts = append(parts, d, url.PathEscape(d))
		}
		if d, err := url.QueryUnescape(a); err == nil {
			parts = append(parts, d, url.QueryEscape(d))
		}
	}
	lowerHex := regexp.MustCompile(`%[0-9A-F]{2}`)
	var forms []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		for _, spelled := range []string{p, lowerHex.ReplaceAllStringFunc(p, strings.ToLower)} {
			goQ, inJSON, noHTML := quotedInsides(spelled)
			var ascii strings.Builder
			for _, r := range noHTML {
				if r < 0x80 {
					ascii.WriteRune(r)
					continue
				}
				for _, unit := range utf16.Encode([]rune{r}) {
					fmt.Fprintf(&ascii, `\u%04x`, unit)
				}
			}
			forms = append(forms, spelled, goQ, inJSON, noHTML,
				strings.ReplaceAll(inJSON, "/", `\/`), ascii.String())
		}
	}
	return forms
}

// quotedInsides is text as strconv.Quote, json.Marshal and a JSON encoder
// that leaves '&', '<' and '>' alone write it, each without its quotes.
func quotedInsides(text string) (goQuoted, inJSON, noHTML string) {
	q := strconv.Quote(text)
	js, _ := json.Marshal(text) // a string always marshals
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(text)
	nh := strings.TrimSpace(plain.String())
	return q[1 : len(q)-1], string(js[1 : len(js)-1]), nh[1 : len(nh)-1]
}

// visibleAt returns where text shows form with no "[redacted]" overlapping
// it, or -1.
func visibleAt(text, form string) int {
	const marker = "[redacted]"
	for from := 0; ; from++ {
		i := strings.Index(text[from:], form)
		if i < 0 {
			return -1
		}
		i += from
		from = i
		covered := false
		for m := max(0, i-len(marker)+1); m < i+len(form) && !covered; m++ {
			covered = strings.HasPrefix(text[m:], marker)
		}
		if !covered {
			return i
		}
	}
}

// quotingKeeps lets shown skip quoting a text only when every quoting it
// would try leaves the text as it is; checked here against the quoting
// functions themselves.
func TestQuotingKeepsOnlyTextsThatQuotingLeavesAlone(t *testing.T) {
	for _, text := range []string{
		"daily request count exceeded", "café ünïcode 日本", "[redacted] key", "",
		`say "hi"`, `back\slash`, "a & b", "<b>", "tab\there", "line\nfeed", "bell\a",
		"sep\u2028arator", "para\u2029graph", "bidi\u202e", "nul\x00", "del\x7f", "bad\xffbyte", "c1\u0085",
	} {
		same := goQuoted(text) == text && jsonQuoted(text, true) == text && jsonQuoted(text, false) == text
		if quotingKeeps(text) && !same {
			t.Errorf("quotingKeeps(%q) = true, but quoting changes it", text)
		}
		if !quotingKeeps(text) && same {
			t.Errorf("quotingKeeps(%q) = false, though quoting leaves it alone", text)
		}
	}
}
