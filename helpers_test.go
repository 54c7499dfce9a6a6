package blocklag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yermakovsa/failnext"
)

// This file holds what the tests share: fake providers and Bases, the
// answers they send, and the assertions that several tests make.

// update makes the tests that compare with golden files under testdata
// rewrite those files from what the code gives, instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files under testdata from what the code gives")

// TestMain runs the tests, or serves the remote providers in the child
// process of the benchmarks that use them.
func TestMain(m *testing.M) {
	if os.Getenv(remoteProvidersEnv) != "" {
		serveRemoteProviders() // which exits
	}
	os.Exit(m.Run())
}

// The two requests a probe sends, written out apart from the code.
const (
	heightRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	chainRequest  = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
)

// valid is the answer of a provider at height 100.
const valid = `{"jsonrpc":"2.0","id":1,"result":"0x64"}`

// isUserAgent matches blocklag's User-Agent, whichever version of the
// module the build records (none when these tests run in this repository,
// a release when they run as a dependency).
var isUserAgent = regexp.MustCompile(`^failnext-blocklag(/v[0-9][0-9A-Za-z.+-]*)?$`).MatchString

// readRequest reads a request that a provider or a Base was handed and
// returns its JSON-RPC method. Each must be a POST with JSON headers, no
// compression, blocklag's User-Agent and one of the two bodies above;
// any other fails t and gives "".
func readRequest(t testing.TB, r *http.Request) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	h := r.Header
	switch {
	case err != nil:
		t.Errorf("reading a request: %v", err)
	case r.Method != http.MethodPost:
		t.Errorf("method %s, want POST", r.Method)
	case h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json":
		t.Errorf("headers %v lack the JSON content type or accept", h)
	case !isUserAgent(h.Get("User-Agent")):
		t.Errorf("User-Agent %q, want failnext-blocklag, with the module's version "+
			"if the build records one", h.Get("User-Agent"))
	case h.Get("Accept-Encoding") != "identity":
		t.Errorf("Accept-Encoding %q, want identity, so that the size limit counts the bytes sent",
			h.Get("Accept-Encoding"))
	case string(b) == heightRequest:
		return "eth_blockNumber"
	case string(b) == chainRequest:
		return "eth_chainId"
	default:
		t.Errorf("unexpected request body %q", b)
	}
	return ""
}

// provider is the fake JSON-RPC node on loopback that the tests share. It
// answers eth_blockNumber with its height and eth_chainId with its chain
// result, unless a test set a handler for the method, and counts the
// requests of each method and the request URIs.
type provider struct {
	*httptest.Server
	t      testing.TB
	height atomic.Uint64

	mu       sync.Mutex
	chainRes string // eth_chainId's result as JSON text
	handlers map[string]http.HandlerFunc
	calls    map[string]int
	uris     map[string]int
}

// newProvider starts a provider at height that serves chain 1 and is closed
// when the test ends.
func newProvider(t testing.TB, height uint64) *provider {
	t.Helper()
	p := &provider{
		t:        t,
		chainRes: `"0x1"`,
		handlers: map[string]http.HandlerFunc{},
		calls:    map[string]int{},
		uris:     map[string]int{},
	}
	p.height.Store(height)
	p.Server = newServer(t, p.serve)
	return p
}

// serve reads, checks and counts a request, and answers it.
func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	method := readRequest(p.t, r)
	p.mu.Lock()
	p.calls[method]++
	p.uris[r.URL.RequestURI()]++
	h := p.handlers[method]
	chainRes := p.chainRes
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case h != nil:
		h(w, r)
	case method == "eth_blockNumber":
		io.WriteString(w, answer(p.height.Load()))
	case method == "eth_chainId":
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":`+chainRes+`}`)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// serveChain sets the result, as JSON text, of every eth_chainId answer
// from now on.
func (p *provider) serveChain(result string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chainRes = result
}

// on makes h answer every request for method from now on, once read and
// counted; a nil h restores the provider's own answer.
func (p *provider) on(method string, h http.HandlerFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h == nil {
		delete(p.handlers, method)
		return
	}
	p.handlers[method] = h
}

// count returns how many requests for method the provider has received.
func (p *provider) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

// total returns how many requests the provider has received.
func (p *provider) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		n += c
	}
	return n
}

// requestURIs returns how many requests went to each request URI.
func (p *provider) requestURIs() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.uris)
}

// reply is a handler that answers with status (0 means 200) and body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			w.WriteHeader(status)
		}
		io.WriteString(w, body)
	}
}

// newServer starts an httptest server that is closed when the test ends.
func newServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// answer is a valid answer reporting height, to eth_blockNumber (or, as a
// chain ID, to eth_chainId).
func answer(height uint64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":"0x%x"}`, height)
}

// rpcErrorAnswer is a JSON-RPC error answer with this code and message,
// which encoding/json escapes as JSON requires.
func rpcErrorAnswer(code int, message string) string {
	quoted, _ := json.Marshal(message) // a string always marshals
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":%s}}`, code, quoted)
}

// response is an answer to r, as a Base returns it, with this status and
// body and ContentLength length (-1 for unknown), and no header.
func response(r *http.Request, status int, body string, length int64) *http.Response {
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{},
		ContentLength: length,
		Body:          io.NopCloser(strings.NewReader(body)),
		Request:       r,
	}
}

// roundTripFunc lets a test stand in for Config.Base.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recorder is a Base over http.DefaultTransport that counts the requests
// it is handed, the bodies it handed out and has not seen closed, and the
// calls to its CloseIdleConnections. With height set, it answers every
// eth_blockNumber request itself, at that height.
type recorder struct {
	height   uint64
	requests atomic.Int32
	open     atomic.Int32
	closings atomic.Int32
}

// RoundTrip counts r and answers it, itself or through
// http.DefaultTransport.
func (b *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	b.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	var resp *http.Response
	if b.height != 0 && string(body) == heightRequest {
		resp = response(r, http.StatusOK, answer(b.height), -1)
	} else {
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		if resp, err = http.DefaultTransport.RoundTrip(r); err != nil {
			return nil, err
		}
	}
	b.open.Add(1)
	onceClosed(resp, func() { b.open.Add(-1) })
	return resp, nil
}

// CloseIdleConnections counts the call; blocklag must never make it.
func (b *recorder) CloseIdleConnections() { b.closings.Add(1) }

// onClose is a body that calls f when it is first closed.
type onClose struct {
	io.ReadCloser
	once sync.Once
	f    func()
}

// Close calls f the first time, then closes the body.
func (c *onClose) Close() error {
	c.once.Do(c.f)
	return c.ReadCloser.Close()
}

// onceClosed gives resp a body that calls f when it is first closed, and
// returns resp.
func onceClosed(resp *http.Response, f func()) *http.Response {
	resp.Body = &onClose{ReadCloser: resp.Body, f: f}
	return resp
}

// fakeNetError is a net.Error from a Base, whose text quotes the URL.
type fakeNetError struct{ timeout bool }

func (e fakeNetError) Error() string   { return "i/o on http://rpc.example/v3/path1SECRET" }
func (e fakeNetError) Timeout() bool   { return e.timeout }
func (e fakeNetError) Temporary() bool { return false }

// idOf is the ID "p" followed by i.
func idOf(i int) failnext.EndpointID { return failnext.EndpointID(fmt.Sprint("p", i)) }

// mustNew returns New(cfg), and ends the test when New refuses cfg.
func mustNew(t testing.TB, cfg Config) *Monitor {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// named pairs IDs with URLs: named("a", urlA, "b", urlB).
func named(pairs ...string) []failnext.Endpoint {
	var eps []failnext.Endpoint
	for i := 0; i+1 < len(pairs); i += 2 {
		eps = append(eps, failnext.Endpoint{ID: failnext.EndpointID(pairs[i]), URL: pairs[i+1]})
	}
	return eps
}

// check runs m.Check with a background context.
func check(m *Monitor) error { return m.Check(context.Background()) }

// probeErrors collects the ProbeErrors of err, Check's error, by endpoint:
// none when err is nil. Any other error than a *CheckError fails t.
func probeErrors(t *testing.T, err error) map[failnext.EndpointID]*ProbeError {
	t.Helper()
	out := map[failnext.EndpointID]*ProbeError{}
	if err == nil {
		return out
	}
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Errorf("Check = %v (%T), want a *CheckError", err, err)
		return out
	}
	for _, pe := range ce.Errors {
		switch {
		case pe == nil:
			t.Errorf("a nil ProbeError in %v", err)
		case out[pe.Endpoint] != nil:
			t.Errorf("two errors for endpoint %q", pe.Endpoint)
		default:
			out[pe.Endpoint] = pe
		}
	}
	return out
}

// probeOne checks the one endpoint cfg has, "a", which must fail, and
// returns its ProbeError and Check's error.
func probeOne(t *testing.T, cfg Config) (*ProbeError, error) {
	t.Helper()
	err := check(mustNew(t, cfg))
	pe := probeErrors(t, err)["a"]
	if pe == nil {
		t.Fatalf("Check = %v, want a ProbeError for a", err)
	}
	return pe, err
}

// statusIs returns a function that reports whether errors.As finds a
// *StatusError with code in an error.
func statusIs(code int) func(error) bool {
	return func(err error) bool {
		var se *StatusError
		return errors.As(err, &se) && se.StatusCode == code
	}
}

// timedOut reports whether err is a failure of a probe that ran out of
// time, as code tells one.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded)
}

// noTypedFailure reports whether errors.As and errors.Is find none of the
// failures that blocklag types in err, as in a transport failure.
func noTypedFailure(err error) bool {
	return !errors.As(err, new(*StatusError)) &&
		!errors.As(err, new(*RPCError)) &&
		!errors.As(err, new(*ChainIDError)) &&
		!errors.Is(err, ErrBadAnswer) &&
		!timedOut(err)
}

// verdicts are what Eligible should answer, by ID.
type verdicts map[failnext.EndpointID]bool

// wantEligible fails t for each ID for which m.Eligible does not answer as
// want says.
func wantEligible(t testing.TB, m *Monitor, want verdicts) {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if got := m.Eligible(id); got != want[id] {
			t.Errorf("Eligible(%q) = %v, want %v", id, got, want[id])
		}
	}
}

// everyReason is each Reason a probe can fail with, written out here
// rather than taken from the code under test.
var everyReason = []Reason{
	ReasonRateLimited,
	ReasonUnauthorized,
	ReasonHTTPStatus,
	ReasonRPCError,
	ReasonWrongChain,
	ReasonBadAnswer,
	ReasonTimeout,
	ReasonTransport,
}

// counted is a Failures map as Stats gives it: every Reason, 0 unless n
// says otherwise.
func counted(n map[Reason]uint64) map[Reason]uint64 {
	all := map[Reason]uint64{}
	for _, r := range everyReason {
		all[r] = n[r]
	}
	return all
}

// clockAt is a time of day on one fixed date, in UTC: clockAt("10:00:05").
func clockAt(hms string) time.Time {
	tod, err := time.Parse(time.TimeOnly, hms)
	if err != nil {
		panic(err)
	}
	return time.Date(2026, 1, 2, tod.Hour(), tod.Minute(), tod.Second(), 0, time.UTC)
}

// hms shows a time as clockAt takes it: "" for zero.
func hms(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.TimeOnly)
}

// hasControl reports whether s could forge or reorder a line of a log or a
// terminal: whether it holds a byte that is not valid UTF-8 or a rune that
// package unicode does not count as printable (which takes in every control
// and formatting character, and every space but U+0020).
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

// withSecrets adds a secret holding the word SECRET to each part of rawURL
// that providers use for API keys: its userinfo, path and query.
func withSecrets(rawURL string) string {
	withUser := strings.Replace(rawURL, "://", "://userSECRET:passSECRET@", 1)
	return withUser + "/v3/path1SECRET?apikey=query1SECRET"
}

// eachError calls f with err and every error it wraps, all the way down.
func eachError(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			eachError(inner, f)
		}
	case interface{ Unwrap() error }:
		eachError(u.Unwrap(), f)
	}
}

// assertShowsNone fails t when err, or any error it wraps, shows SECRET or
// one of the non-empty forbidden texts, as Error or fmt's %v, %+v or %#v
// gives it, or as slog's text and JSON handlers log it.
func assertShowsNone(t *testing.T, err error, forbidden ...string) {
	t.Helper()
	forbidden = append(forbidden, "SECRET")
	eachError(err, func(e error) {
		shown := []string{
			e.Error(),
			fmt.Sprintf("%v", e),
			fmt.Sprintf("%+v", e),
			fmt.Sprintf("%#v", e),
			logged(e, textHandler),
			logged(e, jsonHandler),
		}
		for _, text := range shown {
			for _, f := range forbidden {
				if f != "" && strings.Contains(text, f) {
					t.Errorf("error %q (%T) shows %q", text, e, f)
				}
			}
		}
	})
}

// logged is what handler writes for slog.Info("check", "status", v),
// without the time.
func logged(v any, handler func(io.Writer, *slog.HandlerOptions) slog.Handler) string {
	var buf strings.Builder
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(handler(&buf, opts)).Info("check", "status", v)
	return buf.String()
}

// textHandler and jsonHandler are slog's two handlers, as logged takes them.
func textHandler(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewTextHandler(w, o) }
func jsonHandler(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewJSONHandler(w, o) }

// allocatedBy returns how many bytes the program allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// golden compares got with the golden file at path, under testdata, or
// writes got there when the tests run with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	path = filepath.Join("testdata", path)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("the code gives\n%s\nwhere %s holds\n%s\n(go test -run %s -update rewrites it)",
			got, path, want, t.Name())
	}
}
