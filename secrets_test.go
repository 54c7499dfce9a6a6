package blocklag

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// The tests of the promise that no text or value blocklag hands out shows
// a secret of any endpoint, whatever route outside text takes into it. Which
// parts of a URL are secrets and how they are found are the redact
// package's, and tested there.

// infuraKey is a made-up key of Infura's shape.
const infuraKey = "9aa3d95b3bc440fa88ea12eaa4456161"

// The oracle of this file says which texts show a secret without the code
// under test: the secrets of each URL are written out by hand (shapes), or
// known from how the fuzz target built its URL (fuzzedURL), and a shown
// text is read both ways that ProbeError's documentation names, as written
// and percent-decoded, by code of its own.

// shape is a provider's URL format with a made-up key in it, and the parts
// of it that are secrets, as they are written in the URL.
type shape struct {
	name, url string
	secrets   []string
}

var shapes = []shape{
	{"Infura", "https://mainnet.infura.io/v3/4f0c2d9e8b7a61503e2d1c0b9a887766",
		[]string{"4f0c2d9e8b7a61503e2d1c0b9a887766"}},
	{"Alchemy", "https://eth-mainnet.g.alchemy.com/v2/Qm7TvX2pLs9aKd4WnR8yZc1Bf6Hj3Ue5",
		[]string{"Qm7TvX2pLs9aKd4WnR8yZc1Bf6Hj3Ue5"}},
	{"Ankr", "https://rpc.ankr.com/eth/9c1f7e3a5b2d8046e1c3a5f7092b4d6e8a0c2e4f6a8b0d2f4e6c8a0b2d4f6e8a",
		[]string{"9c1f7e3a5b2d8046e1c3a5f7092b4d6e8a0c2e4f6a8b0d2f4e6c8a0b2d4f6e8a"}},
	{"QuickNode", "https://silent-frosty-pond.quiknode.pro/0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/",
		[]string{"0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e"}},
	{"dRPC", "https://lb.drpc.org/ogrpc?network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7",
		[]string{"AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7"}},
	{"Grove", "https://eth.rpc.grove.city/v1/7e2b9c04", []string{"7e2b9c04"}},
	// A password that holds every character the alphabet leaves out,
	// percent-escaped as a URL must write it.
	{"userinfo", "https://rpcuser:p%26ss%3Cw%3Erd%22%5C1@node.example:8545/",
		[]string{"rpcuser", "p%26ss%3Cw%3Erd%22%5C1"}},
	// Parts that url.URL writes otherwise than they were configured.
	{"escaped userinfo", "http://u%3Av%3Bw:a%3Ab%3Bc@node.example:8545/", []string{"u%3Av%3Bw", "a%3Ab%3Bc"}},
	{"escaped password", "http://rpcuser:p%40ss%26word@node.example:8545/",
		[]string{"rpcuser", "p%40ss%26word"}},
	{"raw non-ASCII path", "http://node.example/v1/\u00e90123456789",
		[]string{"/v1/\u00e90123456789", "\u00e90123456789"}},
	{"hex of either case", "http://node.example/v3/k%2fk%2Fk0123456789",
		[]string{"/v3/k%2fk%2Fk0123456789", "k%2fk%2Fk0123456789"}},
	{"plus and %20", "http://node.example/?key=a+b%20c0123456789",
		[]string{"key=a+b%20c0123456789", "a+b%20c0123456789"}},
	// Secrets that hold the marker, or part of it.
	{"marker in a password", "http://u:%5Bredacted%5Dhunter2hunter2@m.example/",
		[]string{"%5Bredacted%5Dhunter2hunter2"}},
	{"marker's start in a path", "http://m.example/ab12345678[red",
		[]string{"/ab12345678[red", "ab12345678[red"}},
}

// oracleForms lists the canonical forms of the secrets of sh, which no shown
// text may hold in either reading: each secret percent-decoded and in the alphabet,
// and for the userinfo "user:password" and its base64, standard and
// URL-safe, with and without padding, as a Basic Authorization header
// carries it.
func oracleForms(sh shape) []string {
	var forms []string
	for _, s := range sh.secrets {
		forms = append(forms, oracleReading(s))
	}
	if u, _ := url.Parse(sh.url); u.User != nil {
		password, _ := u.User.Password()
		forms = append(forms, basicForms(u.User.Username(), password)...)
	}
	return forms
}

// basicForms are the canonical forms of a user name and password together,
// as a URL's userinfo and as Basic auth carry them: "user:password" and its
// base64, standard and URL-safe, with and without padding.
func basicForms(user, password string) []string {
	pair := user + ":" + password
	forms := []string{oracleAlphabet(pair)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		basic := enc.EncodeToString([]byte(pair))
		forms = append(forms, oracleAlphabet(basic), oracleAlphabet(strings.TrimRight(basic, "=")))
	}
	return forms
}

// oracleReading is a text as the redact package's documentation says a text is read
// it decoded, written without the code under test: every %XX decoded, then
// each byte put in the alphabet, '+' read as a space.
func oracleReading(s string) string {
	decoded := hexEscape.ReplaceAllStringFunc(s, func(e string) string {
		b, _ := strconv.ParseUint(e[1:], 16, 8)
		return string([]byte{byte(b)})
	})
	return oracleAlphabet(decoded)
}

var hexEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// oracleAlphabet is a text as the redact package's documentation says a text is read
// it as written: each byte put in the alphabet, '+' read as a space.
func oracleAlphabet(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c == '"':
			b[i] = '\''
		case c == '+':
			b[i] = ' '
		case c < 0x20 || c > 0x7e || strings.IndexByte(`\<>&`, c) >= 0:
			b[i] = '?'
		}
	}
	return string(b)
}

// quoting is a way a log or a status page may write a text.
type quoting struct {
	name  string
	quote func(string) string
}

// quotings are those ways: the first five quote a text alone, the rest log it.
var quotings = []quoting{
	{"%q", func(s string) string { return fmt.Sprintf("%q", s) }},
	{"JSON", func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}},
	{"JSON without HTML escapes", func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}},
	{"ASCII-only JSON", func(s string) string {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteString(`\` + string(r))
			case r < 0x20 || r > 0x7e:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		return `"` + b.String() + `"`
	}},
	{"JSON with escaped slashes", func(s string) string {
		b, _ := json.Marshal(s)
		return strings.ReplaceAll(string(b), "/", `\/`)
	}},
	{"slog text", func(s string) string { return logLine(slog.NewTextHandler, s) }},
	{"slog JSON", func(s string) string { return logLine(slog.NewJSONHandler, s) }},
}

// logLine is the line that a handler made by newHandler logs for s.
func logLine[H slog.Handler](newHandler func(io.Writer, *slog.HandlerOptions) H, s string) string {
	var b bytes.Buffer
	slog.New(newHandler(&b, nil)).Info("check", "err", s)
	return b.String()
}

// failFunc is what a Base does in place of sending a request.
type failFunc = func(*http.Request) (*http.Response, error)

// routes are the ways outside text reaches a probe's error. Each fails every
// probe, showing echo, a text that holds the request's whole URL, its
// Authorization header, and its path and query decoded.
var routes = []struct {
	name string
	fail func(r *http.Request, echo string) (*http.Response, error)
}{
	{"a provider's value", func(r *http.Request, echo string) (*http.Response, error) {
		id, _ := json.Marshal(echo)
		return response(r, http.StatusOK, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":"0x1"}`, -1), nil
	}},
	{"a provider's result", func(r *http.Request, echo string) (*http.Response, error) {
		result, _ := json.Marshal(echo)
		return response(r, http.StatusOK, `{"jsonrpc":"2.0","id":1,"result":`+string(result)+`}`, -1), nil
	}},
	{"an RPC message", func(r *http.Request, echo string) (*http.Response, error) {
		return response(r, http.StatusOK, rpcErrorAnswer(-32000, echo), -1), nil
	}},
	{"a provider's value in JSON escapes", func(r *http.Request, echo string) (*http.Response, error) {
		body := `{"jsonrpc":"2.0","id":` + jsonEscaped(echo) + `,"result":"0x1"}`
		return response(r, http.StatusOK, body, -1), nil
	}},
	{"an RPC message in JSON escapes", func(r *http.Request, echo string) (*http.Response, error) {
		body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":` + jsonEscaped(echo) + `}}`
		return response(r, http.StatusOK, body, -1), nil
	}},
	{"an RPC message in a 429", func(r *http.Request, echo string) (*http.Response, error) {
		return response(r, http.StatusTooManyRequests, rpcErrorAnswer(-32005, echo), -1), nil
	}},
	{"a transport error's text", func(r *http.Request, echo string) (*http.Response, error) {
		const broken = "net/http: HTTP/1.x transport connection broken: malformed MIME header line: "
		return nil, errors.New(broken + echo)
	}},
	{"a Base's *url.Error", func(r *http.Request, echo string) (*http.Response, error) {
		return nil, &url.Error{Op: "Post", URL: r.URL.String(), Err: errors.New(echo)}
	}},
	{"a certificate's name", func(r *http.Request, echo string) (*http.Response, error) {
		cert := &x509.Certificate{DNSNames: []string{echo + ".example"}}
		hostname := x509.HostnameError{Certificate: cert, Host: r.URL.Hostname()}
		return nil, &tls.CertificateVerificationError{Err: hostname}
	}},
}

// jsonEscaped writes s as a JSON string in escapes that JSON allows and no
// encoder needs: the first letter or digit of every word as \u00XX, as a
// provider could spell a key's first letter, and every '/' as \/.
func jsonEscaped(s string) string {
	var b strings.Builder
	isWord := func(c byte) bool {
		return c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
	}
	for i, c := range []byte(s) {
		switch {
		case c == '/':
			b.WriteString(`\/`)
		case isWord(c) && (i == 0 || !isWord(s[i-1])):
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	q, _ := json.Marshal(b.String()) // for the quotes, controls and non-ASCII
	return strings.ReplaceAll(string(q), `\\`, `\`)
}

// spellings are the ways a Base or a provider writes the URL it was asked
// for, beside the request's Authorization header: as serializers write it.
var spellings = []struct {
	name string
	of   func(u *url.URL) string
}{
	{"String", (*url.URL).String},
	{"Redacted", (*url.URL).Redacted},
	{"EscapedPath and User.String", func(u *url.URL) string {
		return u.EscapedPath() + " " + u.User.String() + " " + u.RawQuery
	}},
	{"decoded", func(u *url.URL) string {
		password, _ := u.User.Password()
		query, _ := url.QueryUnescape(u.RawQuery)
		return u.User.Username() + " " + password + " " + u.Path + " " + query
	}},
	{"lower and mixed hex", func(u *url.URL) string {
		n := 0
		return hexEscape.ReplaceAllStringFunc(u.String(), func(e string) string {
			if n++; n%2 == 0 {
				return e
			}
			return strings.ToLower(e)
		})
	}},
	{"'+' and %20 swapped", func(u *url.URL) string {
		return strings.NewReplacer("+", "%20", "%20", "+").Replace(u.String())
	}},
	{"every byte of the decoded parts escaped", func(u *url.URL) string {
		password, _ := u.User.Password()
		query, _ := url.QueryUnescape(u.RawQuery)
		var b strings.Builder
		for _, c := range []byte(u.User.Username() + ":" + password + "@" + u.Host + u.Path + "?" + query) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		return b.String()
	}},
}

// No route shows a form of any endpoint's secrets in any spelling, in any
// text that reaches an operator, under any quoting, and every such text is
// in the alphabet: each quoting writes it as it is, but for the '"'
// that blocklag writes around outside text and a '/' that may gain a
// backslash. Every shape is configured at once, so each endpoint's messages
// also meet its siblings' secrets.
func TestNoRouteShowsASecretUnderAnyQuoting(t *testing.T) {
	var eps []failnext.Endpoint
	var forms []string
	for _, sh := range shapes {
		eps = append(eps, named(sh.name, sh.url)...)
		forms = append(forms, oracleForms(sh)...)
	}
	// An ID made of a key fails like the others: only the typed fields, and
	// Status as JSON and through slog, which name each endpoint, may show it.
	keyID := "id-" + shapes[0].secrets[0]
	eps = append(eps, named(keyID, "http://id.example/")...)
	good := "http://good.example/"
	eps = append(eps, named("good", good)...)
	for _, route := range routes {
		for _, sp := range spellings {
			t.Run(route.name+" spelt by "+sp.name+" shows no secret", func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.String() == good {
						return response(r, http.StatusOK, answer(100), -1), nil
					}
					return route.fail(r, sp.of(r.URL)+" "+r.Header.Get("Authorization"))
				})
				m := mustNew(t, Config{Endpoints: eps, Base: base})
				err := check(m)
				if n := len(probeErrors(t, err)); n != len(eps)-1 {
					t.Fatalf("Check = %v, want every probe but one failed", err)
				}
				eachError(err, func(e error) {
					assertQuotedSafely(t, e.Error(), quotings, forms, true)
					if rpc := (*RPCError)(nil); errors.As(e, &rpc) {
						assertQuotedSafely(t, rpc.Message, quotings, forms, true)
					}
				})
				st := m.Status()
				js, _ := json.Marshal(st)
				for _, text := range []string{string(js), logged(st, textHandler), logged(st, jsonHandler)} {
					if f := visibleIn(strings.ReplaceAll(text, keyID, "ID"), forms, true); f != "" {
						t.Errorf("Status %s shows %q", text, f)
					}
				}
			})
		}
	}
}

// assertQuotedSafely fails t when text shows one of forms as visibleIn
// reads it, or when one of qs, a prefix of quotings, writes it on more than
// one line. One that quotes text alone must write it as itself between
// quotes, '"' and '/' escaped aside, so that it shows what text shows; a log
// line, which holds more, must show none of forms itself.
func assertQuotedSafely(t *testing.T, text string, qs []quoting, forms []string, byPiece bool) {
	t.Helper()
	if f := visibleIn(text, forms, byPiece); f != "" {
		t.Errorf("%q shows %q", text, f)
	}
	for i, q := range qs {
		quoted := q.quote(text)
		if strings.Count(strings.TrimSuffix(quoted, "\n"), "\n") > 0 {
			t.Errorf("%s is more than one line", quoted)
		}
		if i >= 5 {
			if f := visibleIn(quoted, forms, byPiece); f != "" {
				t.Errorf("%s shows %q", quoted, f)
			}
			continue
		}
		inside := strings.NewReplacer(`\"`, `"`, `\/`, `/`).Replace(quoted[1 : len(quoted)-1])
		if inside != text {
			t.Errorf("%s writes %q otherwise", q.name, text)
		}
	}
}

// visibleIn returns the first of forms that text shows in either of its
// readings, as written (oracleAlphabet) and decoded (oracleReading), with no
// "[redacted]" over it, or "". With byPiece set, a 12-byte piece of a form
// of 16 bytes or more counts too, as a text that shows most of a key shows
// it.
func visibleIn(text string, forms []string, byPiece bool) string {
	readings := []string{oracleAlphabet(text), oracleReading(text)}
	for _, f := range forms {
		pieces := []string{f}
		for i := 0; byPiece && len(f) >= 16 && i+12 <= len(f); i++ {
			pieces = append(pieces, f[i:i+12])
		}
		for _, p := range pieces {
			for _, read := range readings {
				if visibleAt(read, p) >= 0 {
					return p
				}
			}
		}
	}
	return ""
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

// An endpoint ID is outside text in messages, and exact in typed fields.
func TestIDBeyondASCIIIsInTheAlphabetInMessagesOnly(t *testing.T) {
	p := newProvider(t, 100)
	p.on("eth_blockNumber", reply(http.StatusBadGateway, ""))
	const id = `nœud "1"`
	pe := probeErrors(t, check(mustNew(t, Config{Endpoints: named(id, p.URL)})))[id]
	want := `blocklag: endpoint "n??ud '1'": HTTP status 502`
	if pe.Error() != want || pe.Endpoint != id {
		t.Errorf("message %q for %q, want %q", pe, pe.Endpoint, want)
	}
}

// shownCase is an endpoint "a" at url whose every probe fails as fail, and
// how its ProbeError's message must end.
type shownCase struct {
	name string
	url  string
	fail failFunc
	want string // the end of the ProbeError's message
}

// checkShown checks the endpoint of c and returns its ProbeError and Check's
// error, and fails t unless the message ends as c says.
func checkShown(t *testing.T, c shownCase) (*ProbeError, error) {
	t.Helper()
	pe, err := probeOne(t, Config{Endpoints: named("a", c.url), Base: roundTripFunc(c.fail)})
	if !strings.HasSuffix(pe.Error(), c.want) {
		t.Errorf("probe error %q, want one ending in %q", pe, c.want)
	}
	return pe, err
}

// rpcFailure is a Base that answers with status and this JSON-RPC error.
func rpcFailure(status, code int, message string) failFunc {
	return func(r *http.Request) (*http.Response, error) {
		return response(r, status, rpcErrorAnswer(code, message), -1), nil
	}
}

// baseFailure is a Base that fails with an error of this text.
func baseFailure(text string) failFunc {
	return baseError(errors.New(text))
}

// baseError is a Base that fails with err.
func baseError(err error) failFunc {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// Outside text is shown in the alphabet, whatever it holds: a double quote
// as an apostrophe, and a control, DEL, a rune beyond ASCII or an invalid
// byte as one '?', so that no text can end the quotes early and write a
// failure of its own into the line.
func TestOutsideTextIsShownInTheAlphabet(t *testing.T) {
	const plain = "http://a.example/"
	tests := []shownCase{
		{"a quote and a failure of its own", plain,
			rpcFailure(http.StatusOK, -32000, `boom"; endpoint "good": RPC error -32005: "x`),
			`RPC error -32000: "boom'; endpoint 'good': RPC error -32005: 'x"`},
		{"a line break and an escape sequence", plain,
			rpcFailure(http.StatusOK, -32000, "a\nb\r\x1b[31mc\x7f"), `"a?b??[31mc?"`},
		{"runes beyond ASCII", plain,
			rpcFailure(http.StatusOK, -32000, "café \u202etxt.exe 日本"), `"caf?? ???txt.exe ??????"`},
		{"invalid bytes", plain, baseFailure("a\xff\xfeb"), `"a??b"`},
		{"the characters JSON escapes", plain,
			rpcFailure(http.StatusOK, -32000, `<a href="x">&amp;\`), `"?a href='x'??amp;?"`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" are shown in the alphabet", func(t *testing.T) {
			checkShown(t, tt)
		})
	}
}

// A provider's value is clipped to 100 bytes and a transport error's text to
// 300, as received, ending in "...", and the message is redacted whole once
// written, so that a number blocklag writes beside outside text cannot
// complete a secret. An RPCError's Message is what the message shows between
// quotes. A text of megabytes, or an error chain without end, is read only
// as far as it is shown, and costs a Check no more memory than a short one.
func TestEachRouteClipsItsTextAndRedactsTheWholeMessage(t *testing.T) {
	const hexKey = "0123456789abcdef0123456789abcdef"
	const mime = "net/http: malformed MIME header line: "
	const plain = "http://a.example/"
	var wide wideError
	wide.inner = make([]error, 100_000)
	for i := range wide.inner {
		wide.inner[i] = &wide
	}
	x := strings.Repeat
	tests := []struct {
		shownCase
		key string // a secret that nothing shown may hold; "" for none
	}{
		{shownCase: shownCase{"a long RPC message", plain,
			rpcFailure(http.StatusOK, -32000, x("x", 150)),
			`RPC error -32000: "` + x("x", 100) + `..."`}},
		{shownCase: shownCase{"a long transport text", plain,
			baseFailure(x("é", 200)),
			`"` + x("?", 300) + `..."`}},
		// The typed fields of these two hold the number, as they must.
		{shownCase: shownCase{"a status that completes a password", "http://admin1:429@a.example/",
			rpcFailure(http.StatusTooManyRequests, -32005, "limit"),
			`HTTP status [redacted]: RPC error -32005: "limit"`}},
		{shownCase: shownCase{"an RPC code that is a password", "http://admin1:32005@a.example/",
			rpcFailure(http.StatusOK, -32005, "limit"),
			`RPC error -[redacted]: "limit"`}},
		// A transport text of the key repeated to 9 MB is one stretch, a
		// secret all through; errors may join or wrap themselves without end.
		{shownCase: shownCase{"the key repeated to 9 MB", "http://rpc.example/v3/" + hexKey,
			baseFailure(mime + x(hexKey, 9<<20/len(hexKey))),
			`"` + mime + `[redacted]..."`}, key: hexKey},
		{shownCase: shownCase{"9 MB of x", "http://rpc.example/v3/" + hexKey,
			baseFailure(mime + x("x", 9<<20)),
			`"` + mime + x("x", 300-len(mime)) + `..."`}, key: hexKey},
		{shownCase: shownCase{"an error joining itself 100,000 times", "http://rpc.example/v3/" + hexKey,
			baseError(&wide), `"wide"`}, key: hexKey},
		{shownCase: shownCase{"an endless chain", "http://rpc.example/v3/" + hexKey,
			baseError(endless(0)), `"loops"`}, key: hexKey},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is clipped and redacted whole", func(t *testing.T) {
			var pe *ProbeError
			var err error
			allocated := allocatedBy(func() { pe, err = checkShown(t, tt.shownCase) })
			if len(pe.Error()) > 400 {
				t.Errorf("probe error of %d bytes, want at most 400", len(pe.Error()))
			}
			if allocated > 1<<20 {
				t.Errorf("the Check allocated %d bytes, want at most 1 MiB", allocated)
			}
			var re *RPCError
			if errors.As(err, &re) && !strings.Contains(pe.Error(), `: "`+re.Message+`"`) {
				t.Errorf("RPCError.Message %q is not what the message %q shows", re.Message, pe)
			}
			if tt.key != "" {
				assertShowsNone(t, err, tt.key)
			}
		})
	}
}

// wideError is an error that unwraps to many errors, itself among them.
type wideError struct{ inner []error }

func (e *wideError) Error() string   { return "wide" }
func (e *wideError) Unwrap() []error { return e.inner }

// endless is an error whose chain never ends.
type endless int

func (e endless) Error() string { return "loops" }
func (e endless) Unwrap() error { return e + 1 }

// TestNoErrorValueHoldsASecret walks every value reachable from Check's
// error and from Status, following pointers into unexported fields as a
// debugger or an error reporter would, after one Check in which each kind of
// failure echoes keys. No string in them may hold 8 bytes of a key, and none
// may lead to the matcher that knows the keys.
func TestNoErrorValueHoldsASecret(t *testing.T) {
	providers := []struct{ id, key string }{ // each key written out by hand
		{"echo401", "k401aaaa0123456789"},
		{"rpcecho", "krpcbbbb0123456789"},
		{"badanswer", "kbadcccc0123456789"},
		{"transport", "ktrpdddd0123456789"},
		{"chain", "kchneeee0123456789"},
		{"slow", "kslwffff0123456789"},
		{"good", "kgoodggg0123456789"},
	}
	var keys []string
	var pairs []string
	for _, p := range providers {
		keys = append(keys, p.key)
		pairs = append(pairs, p.id, "http://"+p.id+".example/v3/"+p.key)
	}
	everyKey := strings.Join(keys, " ")
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		id := strings.TrimSuffix(r.URL.Host, ".example")
		if readRequest(t, r) == "eth_chainId" && id != "slow" {
			if id == "chain" {
				return response(r, 200, answer(5), -1), nil
			}
			return response(r, 200, answer(1), -1), nil
		}
		switch id {
		case "echo401":
			body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"` + everyKey + `"}}`
			return response(r, 401, body, -1), nil
		case "rpcecho":
			body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"` + everyKey + `"}}`
			return response(r, 200, body, -1), nil
		case "badanswer":
			return response(r, 200, `{"jsonrpc":"2.0","id":1,"result":"`+everyKey+`"}`, -1), nil
		case "transport":
			return nil, fmt.Errorf("Post %q: dial failed for %s", r.URL.String(), everyKey)
		case "slow":
			<-r.Context().Done()
			return nil, fmt.Errorf("Post %q: %w", r.URL.String(), r.Context().Err())
		}
		return response(r, 200, answer(100), -1), nil
	})
	m := mustNew(t, Config{Endpoints: named(pairs...), Base: base, ChainID: 1,
		ProbeTimeout: time.Second})
	err := check(m)
	if n := len(probeErrors(t, err)); n != 6 {
		t.Fatalf("Check = %v; want six failures", err)
	}
	walker := secretWalker{t: t, seen: map[uintptr]bool{}}
	for _, key := range keys {
		for i := 0; i+8 <= len(key); i++ {
			walker.pieces = append(walker.pieces, key[i:i+8])
		}
	}
	walker.walk("Check's error", reflect.ValueOf(&err).Elem())
	st := m.Status()
	walker.walk("Status", reflect.ValueOf(&st).Elem())
	if walker.strings == 0 {
		t.Error("the walk read no string: it looked at nothing")
	}
}

// secretWalker follows every pointer, interface, slice, map and field of a
// value, exported or not, and fails t on any string that holds a piece of a
// key, or any *redact.Redactor, which could find one.
type secretWalker struct {
	t       *testing.T
	pieces  []string
	seen    map[uintptr]bool
	strings int // how many strings it read
}

func (w *secretWalker) walk(path string, v reflect.Value) {
	w.t.Helper()
	if v.Type() == reflect.TypeOf(&redact.Redactor{}) && !v.IsNil() {
		w.t.Errorf("%s leads to the Redactor", path)
	}
	switch v.Kind() {
	case reflect.String:
		w.strings++
		for _, piece := range w.pieces {
			if strings.Contains(v.String(), piece) {
				w.t.Errorf("%s holds %q: %q", path, piece, v.String())
			}
		}
	case reflect.Pointer:
		if v.IsNil() || w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(path, v.Elem())
	case reflect.Interface:
		if !v.IsNil() {
			w.walk(path+"("+v.Elem().Type().String()+")", v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			w.walk(path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			w.walk(path+"[key]", k)
			w.walk(path+"[value]", v.MapIndex(k))
		}
	}
}

// TestQuotesAroundShownTextCannotCompleteASecret pins that the quotes
// blocklag writes around a transport error's text are redacted with it: a
// password that ends or a user name that begins with a quote is not shown
// by the error the ProbeError unwraps to either.
func TestQuotesAroundShownTextCannotCompleteASecret(t *testing.T) {
	for _, tt := range []struct {
		name      string
		url       string
		text      string // the Base's error
		forbidden string // what no error of the chain may show
	}{
		{name: "a password that ends with a quote",
			url: "http://admin:hunter2%22@rpc.example/", text: "login as hunter2", forbidden: `hunter2"`},
		{name: "a user name that begins with a quote",
			url: "http://%22rpcadmin:pw@rpc.example/", text: "rpcadmin refused", forbidden: `"rpcadmin`},
		{name: "a password that ends with an apostrophe",
			url: "http://admin:hunter2%27@rpc.example/", text: "login as hunter2", forbidden: `hunter2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, errors.New(tt.text)
			})
			err := check(mustNew(t, Config{Endpoints: named("a", tt.url), Base: base}))
			if err == nil {
				t.Fatal("Check succeeded; want the Base's error")
			}
			assertShowsNone(t, err, tt.forbidden)
		})
	}
}
