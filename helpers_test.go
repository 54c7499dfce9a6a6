package blocklag

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yermakovsa/failnext"
)

// rpcRequest is the part of a probe's JSON-RPC request that providers use.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readRequest decodes a probe's body. It reports to t, not the handler's
// caller, so a malformed probe fails the test.
func readRequest(t testing.TB, r *http.Request) rpcRequest {
	t.Helper()
	var req rpcRequest
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil {
		t.Errorf("provider got an unreadable request %q: %v", b, err)
	}
	return req
}

// provider is a loopback JSON-RPC node that answers eth_blockNumber with its
// current height, echoing the request's id.
type provider struct {
	*httptest.Server
	height atomic.Uint64
	hits   atomic.Int32
}

func newProvider(t testing.TB, height uint64) *provider {
	t.Helper()
	p := &provider{}
	p.height.Store(height)
	p.Server = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		respond(t, w, r, p.height.Load())
	})
	return p
}

// newServer starts an httptest server that is closed when the test ends.
func newServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// answer is a valid eth_blockNumber answer to the request with this id.
func answer(id json.RawMessage, height uint64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"0x%x"}`, id, height)
}

// respond reads a probe and writes a valid answer reporting height.
func respond(t testing.TB, w http.ResponseWriter, r *http.Request, height uint64) {
	t.Helper()
	io.WriteString(w, answer(readRequest(t, r).ID, height))
}

// answerResponse is a valid answer reporting height, as a Base that stands
// in for the network returns it.
func answerResponse(r *http.Request, height uint64) *http.Response {
	return answerBody(r, answer(json.RawMessage("1"), height))
}

// answerBody is a 200 answer to r with the given body, as a Base that stands
// in for the network returns it.
func answerBody(r *http.Request, body string) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}, Request: r}
}

// huge streams 64 MiB, plainly or as gzip that inflates to 64 MiB, from
// buffers made once so that the server allocates little itself.
func huge(compressed bool) http.HandlerFunc {
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	if compressed {
		// A gzip stream may hold many members, each inflating on its own;
		// one member of 1 MiB sent 64 times is a 64 MiB bomb that is quick
		// to build.
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(chunk)
		zw.Close()
		chunk = buf.Bytes()
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if compressed {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Set("Content-Length", strconv.Itoa(64*len(chunk)))
		for range 64 {
			if _, err := w.Write(chunk); err != nil {
				return // the probe hung up, as it should
			}
		}
	}
}

func idOf(i int) failnext.EndpointID { return failnext.EndpointID(fmt.Sprint("p", i)) }

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

// probeErrors collects the *ProbeError values joined in err, by endpoint.
func probeErrors(t *testing.T, err error) map[failnext.EndpointID]*ProbeError {
	t.Helper()
	out := map[failnext.EndpointID]*ProbeError{}
	joined, ok := err.(interface{ Unwrap() []error })
	if err == nil || !ok {
		return out
	}
	for _, e := range joined.Unwrap() {
		var pe *ProbeError
		if !errors.As(e, &pe) {
			t.Errorf("Check returned a non-ProbeError %T: %v", e, e)
			continue
		}
		if out[pe.Endpoint] != nil {
			t.Errorf("two errors for endpoint %q", pe.Endpoint)
		}
		out[pe.Endpoint] = pe
	}
	return out
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

// roundTripFunc lets a test stand in for Config.Base.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// check runs m.Check with a background context.
func check(m *Monitor) error { return m.Check(context.Background()) }

// hasControl reports whether s could forge or reorder a line of a log or a
// terminal: whether it holds a byte that is not valid UTF-8 or a rune that
// package unicode does not count as printable (which takes in every control
// and formatting character, and every space but U+0020).
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

// withSecrets adds a secret to each part of rawURL that providers use for
// API keys: its userinfo, path and query.
func withSecrets(rawURL string) string {
	return strings.Replace(rawURL, "://", "://userSECRET:passSECRET@", 1) + "/v3/pathSECRET?apikey=querySECRET"
}

// assertNoSecret fails t when err, or any error it wraps, shows a secret:
// whoever unwraps an error may print it too. Every secret in these tests
// holds the word SECRET, which survives percent-escaping and Go quoting, so
// finding the word in any form is enough.
func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	eachError(err, func(e error) {
		if strings.Contains(e.Error(), "SECRET") {
			t.Errorf("error %q (%T) leaks a secret", e, e)
		}
	})
}

// eachError calls f with err and with every error it wraps, through both
// kinds of Unwrap, all the way down.
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

// TestMain runs the tests, unless this binary was started as the child
// process of BenchmarkClientSide: then it serves that benchmark's providers.
func TestMain(m *testing.M) {
	if os.Getenv(remoteProvidersEnv) != "" {
		serveRemoteProviders()
		return
	}
	os.Exit(m.Run())
}

// clockAt is a time of day on one fixed date, in UTC: clockAt("10:00:05").
// Tests give it to a Monitor's clock so that their Checks happen at the
// times they say.
func clockAt(hms string) time.Time {
	tod, err := time.Parse(time.TimeOnly, hms)
	if err != nil {
		panic(err)
	}
	return time.Date(2026, 1, 2, tod.Hour(), tod.Minute(), tod.Second(), 0, time.UTC)
}

// assertShowsNone fails t when err, or any error it wraps, shows the word
// SECRET or any of forbidden, in its text or as fmt prints it with %v, %+v
// or %#v: a Format method or a struct's fields could show what Error does
// not. Empty forbidden texts are ignored.
func assertShowsNone(t *testing.T, err error, forbidden ...string) {
	t.Helper()
	forbidden = append(forbidden, "SECRET")
	eachError(err, func(e error) {
		for _, shown := range []string{e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
			for _, f := range forbidden {
				if f != "" && strings.Contains(shown, f) {
					t.Errorf("error %q (%T) shows %q", shown, e, f)
				}
			}
		}
	})
}

// judged is judge with its refusal resolved as a probe reports it, with
// no secrets to mask.
func judged(body []byte) (uint64, error) {
	height, refused := judge(body)
	if refused != nil {
		return 0, refused.resolve(nil)
	}
	return height, nil
}
