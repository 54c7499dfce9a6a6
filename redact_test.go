package blocklag

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

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
		{name: "a short path segment wherever it appears", text: "api v3 and v30",
			urls: []string{"https://rpc.example/v3/key1"}, want: "api [redacted] and [redacted]0"},
		{name: "a path segment raw and percent-decoded", text: "a%20key or a key",
			urls: []string{"https://rpc.example/eth/a%20key"}, want: "[redacted] or [redacted]"},
		{name: "a path segment Go-quoted", text: `id "a\"b"`,
			urls: []string{"https://rpc.example/eth/a%22b"}, want: `id "[redacted]"`},
		{name: "the root path is not a secret", text: "POST / HTTP/1.1",
			urls: []string{"https://rpc.example/"}, want: "POST / HTTP/1.1"},
		{name: "a query value after a semicolon", text: "key k3y refused",
			urls: []string{"https://rpc.example/?net=main;apikey=k3y"}, want: "key [redacted] refused"},
		{name: "a query value decoded and escaped", text: "key a b! or a+b%21",
			urls: []string{"https://rpc.example/?apikey=a+b%21"}, want: "key [redacted] or [redacted]"},
		{name: "a query value escaped as url.Values would", text: "key a+b",
			urls: []string{"https://rpc.example/?apikey=a%20b"}, want: "key [redacted]"},
		{name: "a bare query key", text: "unknown k3yonly",
			urls: []string{"https://rpc.example/?net=main&k3yonly"}, want: "unknown [redacted]"},
		{name: "the Basic credentials of a user and password", text: "Authorization: Basic dXNlcjpwYXNz",
			urls: []string{"https://user:pass@rpc.example/"}, want: "Authorization: Basic [redacted]"},
		{name: "the Basic credentials of a user alone", text: "Authorization: Basic dXNlcjo=",
			urls: []string{"https://user@rpc.example/"}, want: "Authorization: Basic [redacted]"},
		{name: "a user name and password raw and escaped", text: "us@er p:ss us%40er p%3Ass",
			urls: []string{"https://us%40er:p%3Ass@rpc.example/"}, want: "[redacted] [redacted] [redacted] [redacted]"},
		{name: "every endpoint's forms", text: "keys aaa1 and bbb2",
			urls: []string{"https://rpc.example/v3/aaa1", "https://rpc.example/v3/bbb2"}, want: "keys [redacted] and [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := secretsOf(tt.forms...)
			if tt.urls != nil {
				var targets []*url.URL
				for _, raw := range tt.urls {
					u, err := url.Parse(raw)
					if err != nil {
						t.Fatal(err)
					}
					targets = append(targets, u)
				}
				s = newSecrets(targets...)
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
// against.
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
// the Basic credentials. Whatever the mix, the message must show no secret
// and nothing that could forge a log line.
func FuzzRedaction(f *testing.F) {
	f.Add("api", "pass", "v3/path", "q", `Post %q: dial %s: user %u pass %p path %e query %v %E`)
	f.Add("pass", "pass", "pass", "pass", "%u%p%e%v")
	f.Add("a\"b", "c\\d", "e f", "g\u00a0h", "%q\u2028%s")
	f.Add("u", "p", "v3/", "k", "invalid project id %g (%G); key %w %W; auth %b")
	f.Fuzz(func(t *testing.T, user, password, path, query, template string) {
		u := &url.URL{Scheme: "http", Host: "rpc.example",
			User: url.UserPassword(user+"SECRET", password+"SECRET"),
			Path: "/" + path + "SECRET",
			RawQuery: "key=" + url.QueryEscape(query+"SECRET") +
				";other=" + url.QueryEscape("o"+query+"SECRET")}
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
			"%v", query+"SECRET", "%E", url.QueryEscape(query+"SECRET"),
			"%w", "o"+query+"SECRET", "%W", url.QueryEscape("o"+query+"SECRET"),
			"%b", basic,
		).Replace(template)
		err = transportError(errors.New(text), newSecrets(target))
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
		pathA = "/v3/aSECRET?apikey=aqSECRET"
		pathB = "/eth/bSECRET?chain=main;token=bqSECRET"
	)
	tests := []struct {
		name  string
		hosts func(t *testing.T) (hostA, hostB string, base http.RoundTripper)
	}{
		{"a shared Base quoting the other endpoint's URL", func(t *testing.T) (string, string, http.RoundTripper) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if strings.Contains(r.URL.Path, "aSECRET") {
					return nil, errors.New("pool busy with http://b.example" + pathB)
				}
				return nil, errors.New("pool busy with http://a.example" + pathA)
			})
			return "a.example", "b.example", base
		}},
		{"a shared provider echoing the other endpoint's key", func(t *testing.T) (string, string, http.RoundTripper) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
				theirs := "aSECRET" // a's path segment, for b
				if strings.Contains(r.URL.Path, "aSECRET") {
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
