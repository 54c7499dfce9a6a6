package blocklag

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/iotest"
)

// forged is what a hostile provider would like to see as a line of its own
// in the operator's log.
const forged = "2026/01/01 00:00:00 check: bad=eligible"

// Every part of an answer that an error message can show is tried with a
// newline, a carriage return and an ESC, both raw between JSON tokens and
// escaped inside a JSON string. The ProbeError must still name the endpoint
// and the fault, and hold no control character.
func TestProviderTextCannotForgeLogLines(t *testing.T) {
	// In each body, X is where the provider puts its control character
	// followed by the forged line. In a raw place X goes between JSON
	// tokens; in an escaped place it goes inside a string, JSON-escaped.
	places := []struct {
		name string
		raw  bool
		body string
		want string
	}{
		{"the jsonrpc member, between tokens", true, `{"jsonrpc":["2.0",X"x"],"id":1,"result":"0x1"}`, "jsonrpc member is"},
		{"the jsonrpc member, inside a string", false, `{"jsonrpc":"2.0X","id":1,"result":"0x1"}`, "jsonrpc member is"},
		{"the id, between tokens", true, `{"jsonrpc":"2.0","id":[1,X"x"],"result":"0x1"}`, "answer id is"},
		{"the id, inside a string", false, `{"jsonrpc":"2.0","id":"1X","result":"0x1"}`, "answer id is"},
		{"a non-string result, between tokens", true, `{"jsonrpc":"2.0","id":1,"result":["0x1",X"x"]}`, "is not a string"},
		{"a string result", false, `{"jsonrpc":"2.0","id":1,"result":"0x1X"}`, "not a canonical hex quantity"},
		{"an error without code or message, between tokens", true, `{"jsonrpc":"2.0","id":1,"error":{"data":[X"x"]}}`, "RPC error"},
		{"an error without code, inside a string", false, `{"jsonrpc":"2.0","id":1,"error":{"message":"X"}}`, "RPC error"},
		{"an error message", false, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busyX"}}`, "RPC error -32000"},
		{"a member named twice", false, `{"jsonrpc":"2.0","id":1,"result":"0x1","aX":1,"aX":2}`, "twice"},
	}
	controls := []struct {
		name     string
		raw      string // as sent between tokens
		escaped  string // as written inside a JSON string
		validRaw bool   // JSON allows it raw between tokens
	}{
		{"a newline", "\n", `\n`, true},
		{"a carriage return", "\r", `\r`, true},
		{"an ESC", "\x1b", `\u001b`, false},
	}
	for _, p := range places {
		for _, c := range controls {
			t.Run(p.name+" with "+c.name, func(t *testing.T) {
				inject, want := c.escaped+forged, p.want
				if p.raw {
					inject = c.raw + `"` + forged + `",`
					if !c.validRaw {
						want = "not valid JSON"
					}
				}
				body := strings.Replace(p.body, "X", inject, -1)
				_, err := judged([]byte(body))
				if err == nil {
					t.Fatalf("the answer %q was accepted", body)
				}
				// The message as Check reports it.
				msg := (&ProbeError{Endpoint: "hostile", Err: err}).Error()
				if hasControl(msg) {
					t.Errorf("message %q holds a control character", msg)
				}
				if !strings.Contains(msg, `endpoint "hostile"`) || !strings.Contains(msg, want) {
					t.Errorf("message %q does not name the endpoint and say %q", msg, want)
				}
			})
		}
	}
}

// A value from a provider is shown quoted and clipped, so that one answer
// cannot flood a log, and a character cut in two is not left half shown.
func TestQuoteClipsAndEscapesAProvidersValue(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"short text is quoted whole", "abc", `"abc"`},
		{"hostile runes are escaped", "a\nb\x1bc\u0085d\u202ee\xff", `"a\nb\x1bc\u0085d\u202ee\xff"`},
		{"long text is clipped", strings.Repeat("a", maxQuoted+50), `"` + strings.Repeat("a", maxQuoted) + `..."`},
		{"a multi-byte character is not cut", strings.Repeat("a", maxQuoted-1) + "é" + "tail", `"` + strings.Repeat("a", maxQuoted-1) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (*secrets)(nil).quote(tt.text, maxQuoted); got != tt.want {
				t.Errorf("quote(%q) = %s, want %s", tt.text, got, tt.want)
			}
		})
	}
}

// hostileRunes are what a provider, a proxy or a Base would put into text
// that reaches a message to forge or reorder log lines, each with the escape
// that a message shows instead.
var hostileRunes = []struct{ name, text, escaped string }{
	{"a newline", "\n", `\n`},
	{"an ESC", "\x1b", `\x1b`},
	{"a NUL", "\x00", `\x00`},
	{"a DEL", "\x7f", `\x7f`},
	{"a NEL", "\u0085", `\u0085`},
	{"an 8-bit CSI", "\u009b", `\u009b`},
	{"a no-break space", "\u00a0", `\u00a0`},
	{"a line separator", "\u2028", `\u2028`},
	{"a paragraph separator", "\u2029", `\u2029`},
	{"a right-to-left override", "\u202e", `\u202e`},
	{"a left-to-right isolate", "\u2066", `\u2066`},
	{"a right-to-left mark", "\u200f", `\u200f`},
	{"a byte order mark", "\ufeff", `\ufeff`},
	{"an invalid UTF-8 byte", "\xff", `\xff`},
}

// A transport error's text is shown as Go quotes it, so that its quotes
// cannot close the quoted text early, with each hostile rune escaped, and
// clipped without cutting an escape.
func TestQuotedEscapesAndClipsTransportText(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"plain text is kept, its quotes and backslashes escaped", `unexpected EOF "x" \ é`, `unexpected EOF \"x\" \\ é`},
		{"long text is clipped", strings.Repeat("a", maxTransportText+1), strings.Repeat("a", maxTransportText) + "..."},
		{"an escape is not cut in two", strings.Repeat("a", maxTransportText-3) + "\u2028", strings.Repeat("a", maxTransportText-3) + "..."},
		{"escapes count toward the limit", strings.Repeat("\x00", maxTransportText), strings.Repeat(`\x00`, maxTransportText/4) + "..."},
	}
	for _, r := range hostileRunes {
		tests = append(tests, struct{ name, text, want string }{
			r.name + " is escaped", "before" + r.text + "after", "before" + r.escaped + "after",
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (*secrets)(nil).quoted(tt.text, maxTransportText); got != tt.want {
				t.Errorf("quoted(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// Text from outside reaches a message escaped, whichever route it took: a
// proxy's answer to CONNECT, an error from a custom Base, an error reading
// the answer, and a malformed response that net/http cites. Each hostile
// rune is tried on each route; the message must hold nothing that package
// unicode would not print, nor may any error it wraps, and it must still
// show the text around it.
func TestHostileTextIsEscapedOnEveryRoute(t *testing.T) {
	routes := []struct {
		name string
		cfg  func(t *testing.T, text string) Config
	}{
		{"a proxy's CONNECT reason", func(t *testing.T, text string) Config {
			proxy := &url.URL{Scheme: "http", Host: rawServer(t, "HTTP/1.1 403 "+text+"\r\n\r\n")}
			return Config{Endpoints: named("a", "https://rpc.example/"), Base: &http.Transport{Proxy: http.ProxyURL(proxy)}}
		}},
		{"a Base error", func(t *testing.T, text string) Config {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New(text) })
			return Config{Endpoints: named("a", "http://rpc.example/"), Base: base}
		}},
		{"a body read error", func(t *testing.T, text string) Config {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp := response(r, http.StatusOK, "", -1)
				resp.Body = io.NopCloser(iotest.ErrReader(errors.New(text)))
				return resp, nil
			})
			return Config{Endpoints: named("a", "http://rpc.example/"), Base: base}
		}},
		{"a malformed header that net/http cites", func(t *testing.T, text string) Config {
			// A header whose name is not a token: Go 1.24 cites the line as
			// it came, later versions quote it.
			return Config{Endpoints: named("a", "http://"+rawServer(t, "HTTP/1.1 200 OK\r\n"+text+": x\r\n\r\n"))}
		}},
	}
	for _, route := range routes {
		for _, r := range hostileRunes {
			t.Run(r.name+" in "+route.name, func(t *testing.T) {
				m := mustNew(t, route.cfg(t, "before"+r.text+"after"))
				pe := probeErrors(t, check(m))["a"]
				if pe == nil {
					t.Fatal("the probe did not fail")
				}
				eachError(pe, func(e error) {
					if hasControl(e.Error()) {
						t.Errorf("%T %q, the message or an error it wraps, holds a rune that is not printable", e, e)
					}
				})
				msg := pe.Error()
				if !strings.Contains(msg, "before") && !strings.Contains(msg, "after") {
					t.Errorf("message %q does not show the text the route carried", msg)
				}
			})
		}
	}
}

// rawServer accepts connections on a loopback port until the test ends,
// reads one request from each, answers it with the raw bytes given and hangs
// up. It returns the host and port.
func rawServer(t *testing.T, raw string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return // the listener closed
			}
			go func() {
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
					io.WriteString(conn, raw)
				}
			}()
		}
	}()
	return l.Addr().String()
}

// With Base nil, probes go through http.DefaultTransport, which takes its
// proxy from the environment, read once per process. So the Check runs in
// a child process started with HTTPS_PROXY pointing at a proxy that answers
// CONNECT with hostile text, and its message must come out escaped.
func TestProxyFromEnvironmentIsEscaped(t *testing.T) {
	if os.Getenv("BLOCKLAG_PROXY_CHILD") != "" {
		m := mustNew(t, Config{Endpoints: named("a", "https://rpc.example/")})
		pe := probeErrors(t, check(m))["a"]
		if pe == nil || hasControl(pe.Error()) || !strings.Contains(pe.Error(), "before") {
			t.Fatalf("Check through the proxy gave %q, want the proxy's text escaped", pe)
		}
		return
	}
	proxy := "http://" + rawServer(t, "HTTP/1.1 403 before\u0085\u202e\u2028after\r\n\r\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironmentIsEscaped$", "-test.count=1", "-test.timeout=1m")
	cmd.Env = append(os.Environ(), "BLOCKLAG_PROXY_CHILD=1",
		"HTTPS_PROXY="+proxy, "https_proxy="+proxy, "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child process failed: %v\n%s", err, out)
	}
}
