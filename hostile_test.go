package blocklag

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// hostileCase is one way a provider can answer wrongly. Exactly one of body
// and handler is set.
type hostileCase struct {
	name     string
	status   int
	body     string
	handler  func(t *testing.T, good string) http.HandlerFunc // good is the good provider's URL
	want     string                                           // part of the ProbeError
	stalls   bool                                             // runs out the Check's context
	location bool                                             // redirects to the good provider
}

const valid = `{"jsonrpc":"2.0","id":1,"result":"0x64"}`

// withResult is a valid answer whose result member is raw.
func withResult(raw string) string { return `{"jsonrpc":"2.0","id":1,"result":` + raw + `}` }

var hostileCases = []hostileCase{
	{name: "status 201", status: 201, body: valid, want: "status 201"},
	{name: "status 204", status: 204, want: "status 204"},
	{name: "status 301 to the good provider", status: 301, location: true, want: "status 301"},
	{name: "status 302 to the good provider", status: 302, location: true, want: "status 302"},
	{name: "status 404", status: 404, body: "not found", want: "status 404"},
	{name: "status 429", status: 429, body: valid, want: "status 429"},
	{name: "status 500", status: 500, body: valid, want: "status 500"},
	{name: "status 503", status: 503, want: "status 503"},
	{name: "an empty body", status: 200, body: "", want: "not a JSON object"},
	{name: "null", status: 200, body: "null", want: "not a JSON object"},
	{name: "a string", status: 200, body: `"0x64"`, want: "not a JSON object"},
	{name: "a number", status: 200, body: "100", want: "not a JSON object"},
	{name: "an array", status: 200, body: `["0x64"]`, want: "not a JSON object"},
	{name: "a batch holding a valid response", status: 200, body: "[" + valid + "]", want: "not a JSON object"},
	{name: "invalid JSON", status: 200, body: `{"jsonrpc":2.0"}`, want: "not valid JSON"},
	{name: "truncated JSON", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x6`, want: "not valid JSON"},
	{name: "trailing bytes", status: 200, body: valid + "garbage", want: "after the JSON object"},
	{name: "two objects", status: 200, body: valid + valid, want: "after the JSON object"},
	{name: "jsonrpc missing", status: 200, body: `{"id":1,"result":"0x64"}`, want: "jsonrpc member is missing"},
	{name: "jsonrpc 1.0", status: 200, body: `{"jsonrpc":"1.0","id":1,"result":"0x64"}`, want: `jsonrpc member is "\"1.0\""`},
	{name: "jsonrpc as a number", status: 200, body: `{"jsonrpc":2.0,"id":1,"result":"0x64"}`, want: `jsonrpc member is "2.0"`},
	{name: "id missing", status: 200, body: `{"jsonrpc":"2.0","result":"0x64"}`, want: "answer id is missing"},
	{name: "id null", status: 200, body: `{"jsonrpc":"2.0","id":null,"result":"0x64"}`, want: `answer id is "null"`},
	{name: "id 2", status: 200, body: `{"jsonrpc":"2.0","id":2,"result":"0x64"}`, want: `answer id is "2"`},
	{name: "id as a string", status: 200, body: `{"jsonrpc":"2.0","id":"1","result":"0x64"}`, want: `answer id is "\"1\""`},
	{name: "a member named twice", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","result":"0x1"}`, want: "twice"},
	{name: "an error object", status: 200, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}}`, want: `RPC error -32005: "limit exceeded"`},
	{name: "an error together with a result", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":"0x64","error":{"code":-32000,"message":"header not found"}}`, want: `RPC error -32000: "header not found"`},
	{name: "a malformed error member", status: 200, body: `{"jsonrpc":"2.0","id":1,"error":"nope"}`, want: `RPC error "\"nope\""`},
	{name: "result missing", status: 200, body: `{"jsonrpc":"2.0","id":1}`, want: "no result"},
	{name: "result null", status: 200, body: withResult("null"), want: "not a string"},
	{name: "result a JSON number", status: 200, body: withResult("100"), want: "not a string"},
	{name: "result 0x", status: 200, body: withResult(`"0x"`), want: "canonical"},
	{name: "result 0x00", status: 200, body: withResult(`"0x00"`), want: "canonical"},
	{name: "result 0x01", status: 200, body: withResult(`"0x01"`), want: "canonical"},
	{name: "result 0X64", status: 200, body: withResult(`"0X64"`), want: "canonical"},
	{name: "result 0x6E", status: 200, body: withResult(`"0x6E"`), want: "canonical"},
	{name: "result 100", status: 200, body: withResult(`"100"`), want: "canonical"},
	{name: "result -0x1", status: 200, body: withResult(`"-0x1"`), want: "canonical"},
	{name: "result with a leading space", status: 200, body: withResult(`" 0x64"`), want: "canonical"},
	{name: "result with a trailing space", status: 200, body: withResult(`"0x64 "`), want: "canonical"},
	{name: "result of 17 hex digits", status: 200, body: withResult(`"0x10000000000000000"`), want: "canonical"},
	{name: "a body of exactly 4097 bytes", status: 200, body: valid + strings.Repeat(" ", maxBody+1-len(valid)), want: "larger than 4096"},
	{name: "an HTML page", status: 200, body: "<!DOCTYPE html><html><body>Bad gateway</body></html>", want: "not a JSON object"},
	{name: "a connection closed mid-response", handler: closeMidResponse, want: "unexpected EOF"},
	{name: "a server that never sends headers", handler: func(t *testing.T, _ string) http.HandlerFunc { return hang(t) }, stalls: true},
	{name: "a server that drips one byte at a time", handler: func(t *testing.T, _ string) http.HandlerFunc { return drip(t) }, stalls: true},
}

// closeMidResponse promises a longer body than it sends, then hangs up.
func closeMidResponse(t *testing.T, _ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\"")
		buf.Flush()
	}
}

func (c hostileCase) serve(t *testing.T, good string) http.HandlerFunc {
	if c.handler != nil {
		return c.handler(t, good)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r)
		if c.location {
			w.Header().Set("Location", good)
		}
		w.WriteHeader(c.status)
		w.Write([]byte(c.body))
	}
}

// A hostile provider gets a ProbeError and is ineligible; the good one is
// unaffected; no redirect is followed; Check ends within its context.
func TestHostileProviders(t *testing.T) {
	if n := len(hostileCases); n < 35 {
		t.Fatalf("only %d hostile cases", n)
	}
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			good := newProvider(t, 100)
			hostile := newServer(t, c.serve(t, good.URL))
			m := mustNew(t, Config{Endpoints: named("good", good.URL, "hostile", hostile.URL), MaxLag: 3})

			limit := 5 * time.Second
			if c.stalls {
				limit = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			err := m.Check(ctx)
			if took := time.Since(start); took > limit+time.Second {
				t.Errorf("Check took %v with a %v context", took, limit)
			}
			if good.hits.Load() != 1 {
				t.Errorf("the good provider got %d probes, want 1 (no redirect followed)", good.hits.Load())
			}
			if c.stalls {
				if !errors.Is(err, context.DeadlineExceeded) || !m.Eligible("good") || !m.Eligible("hostile") {
					t.Errorf("Check = %v, want the deadline and the previous snapshot kept", err)
				}
				return
			}
			errs := probeErrors(t, err)
			pe := errs["hostile"]
			if len(errs) != 1 || pe == nil || !strings.Contains(pe.Error(), c.want) {
				t.Fatalf("Check = %v, want one ProbeError for hostile saying %q", err, c.want)
			}
			if !m.Eligible("good") || m.Eligible("hostile") {
				t.Errorf("good eligible %v, hostile eligible %v; want true, false", m.Eligible("good"), m.Eligible("hostile"))
			}
		})
	}
}

// Answers that real nodes give and that must be accepted. The provider
// under test and a plain one report the same height with MaxLag 0, so both
// are eligible only if the height was read exactly.
func TestValidAnswersAreAccepted(t *testing.T) {
	tests := []struct {
		name    string
		height  uint64
		handler func(t *testing.T, height uint64) http.HandlerFunc
	}{
		{"id before jsonrpc", 100, answering(`{"id":1,"jsonrpc":"2.0","result":"{h}"}`, "application/json")},
		{"extra members", 100, answering(`{"jsonrpc":"2.0","id":1,"result":"{h}","extra":{"a":[1,2]},"note":"x"}`, "application/json")},
		{"white space around the object", 100, answering("\r\n\t {\"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"result\" : \"{h}\" } \n", "application/json")},
		{"no Content-Type", 100, answering(`{"jsonrpc":"2.0","id":1,"result":"{h}"}`, "")},
		{"a text/plain Content-Type", 100, answering(`{"jsonrpc":"2.0","id":1,"result":"{h}"}`, "text/plain; charset=utf-8")},
		{"chunked transfer", 100, chunked},
		{"a gzip-compressed body", 100, gzipped},
		{"height 0x0", 0, answering(`{"jsonrpc":"2.0","id":1,"result":"{h}"}`, "application/json")},
		{"height 0xffffffffffffffff", 1<<64 - 1, answering(`{"jsonrpc":"2.0","id":1,"result":"{h}"}`, "application/json")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := newProvider(t, tt.height)
			tested := newServer(t, tt.handler(t, tt.height))
			m := mustNew(t, Config{Endpoints: named("plain", plain.URL, "tested", tested.URL)})
			if err := check(m); err != nil {
				t.Fatalf("Check = %v", err)
			}
			if !m.Eligible("plain") || !m.Eligible("tested") {
				t.Errorf("plain eligible %v, tested eligible %v: the height was misread", m.Eligible("plain"), m.Eligible("tested"))
			}
		})
	}
}

// answering returns a handler factory that writes body, with {h} filled
// in, under the given Content-Type ("" sends none).
func answering(body, contentType string) func(*testing.T, uint64) http.HandlerFunc {
	return func(t *testing.T, height uint64) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			out := strings.ReplaceAll(body, "{h}", "0x"+strconv.FormatUint(height, 16))
			w.Header()["Content-Type"] = nil // stop net/http from sniffing one
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.Write([]byte(out))
		}
	}
}

// chunked sends the answer in two flushed pieces without a Content-Length,
// as Hardhat does.
func chunked(t *testing.T, height uint64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out := answer(readRequest(t, r).ID, height)
		w.Write([]byte(out[:10]))
		w.(http.Flusher).Flush()
		w.Write([]byte(out[10:]))
		if r.ProtoMajor == 1 && len(w.Header()["Content-Length"]) != 0 {
			t.Error("the answer was not chunked")
		}
	}
}

// gzipped compresses the answer, as go-ethereum does when asked.
func gzipped(t *testing.T, height uint64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			t.Errorf("probe asked for encoding %q; Go's transport should ask for gzip", r.Header.Get("Accept-Encoding"))
		}
		out := answer(readRequest(t, r).ID, height)
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(out))
		zw.Close()
	}
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

// A provider streaming 64 MiB fails as too large after a few KiB are read,
// and a Check against it allocates well under 1 MiB. No goroutine outlives
// the Check once idle connections are closed.
func TestHugeAnswersAreBounded(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		name := map[bool]string{false: "64 MiB plain", true: "a gzip bomb of 64 MiB"}[compressed]
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, huge(compressed))
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			m := mustNew(t, Config{Endpoints: named("huge", srv.URL), Base: base})
			before := runtime.NumGoroutine()

			var stats runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&stats)
			allocated := stats.TotalAlloc
			err := check(m)
			runtime.ReadMemStats(&stats)
			allocated = stats.TotalAlloc - allocated

			if pe := probeErrors(t, err)["huge"]; pe == nil || !strings.Contains(pe.Error(), "larger than 4096") {
				t.Fatalf("Check = %v, want the answer rejected as too large", err)
			}
			t.Logf("a Check against it allocated %d bytes", allocated)
			if allocated >= 1<<20 {
				t.Errorf("a Check allocated %d bytes, want under 1 MiB", allocated)
			}
			base.CloseIdleConnections()
			if !waitForGoroutines(before) {
				t.Errorf("%d goroutines after the Check, %d before", runtime.NumGoroutine(), before)
			}
		})
	}
}

// Endpoints whose URLs carry keys in their userinfo, path and query never see
// those keys in an error, whatever goes wrong.
func TestSecretsNeverLeak(t *testing.T) {
	secrets := []string{"userSECRET", "passSECRET", "pathSECRET", "querySECRET"}
	withSecrets := func(base string) string {
		return strings.Replace(base, "://", "://userSECRET:passSECRET@", 1) + "/v3/pathSECRET?apikey=querySECRET"
	}
	good := newProvider(t, 100)
	failures := []struct {
		name    string
		url     string
		timeout time.Duration
	}{
		{"dial refused", "http://127.0.0.1:1", 0},
		{"probe timeout", newServer(t, hang(t)).URL, 100 * time.Millisecond},
		{"redirect", newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, withSecrets(good.URL), http.StatusFound)
		}).URL, 0},
		{"bad status", newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }).URL, 0},
		{"bad body", newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }).URL, 0},
		{"closed mid-response", newServer(t, closeMidResponse(t, "")).URL, 0},
		{"TLS to a plain server", strings.Replace(good.URL, "http://", "https://", 1), 0},
	}
	assertClean := func(t *testing.T, err error) {
		t.Helper()
		// Walk the whole chain: a wrapped error is printed by someone too.
		var walk func(error)
		walk = func(e error) {
			if e == nil {
				return
			}
			for _, s := range secrets {
				if strings.Contains(e.Error(), s) {
					t.Errorf("error %q (%T) leaks %s", e, e, s)
				}
			}
			switch u := e.(type) {
			case interface{ Unwrap() []error }:
				for _, inner := range u.Unwrap() {
					walk(inner)
				}
			case interface{ Unwrap() error }:
				walk(u.Unwrap())
			}
		}
		walk(err)
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			m := mustNew(t, Config{Endpoints: named("good", good.URL, "bad", withSecrets(f.url)), ProbeTimeout: f.timeout})
			err := check(m)
			if probeErrors(t, err)["bad"] == nil {
				t.Fatalf("Check = %v, want a ProbeError for bad", err)
			}
			assertClean(t, err)
		})
	}
	t.Run("Check's context runs out", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("bad", withSecrets(newServer(t, hang(t)).URL))})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := m.Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Check = %v, want the deadline", err)
		}
		assertClean(t, err)
	})
	t.Run("validation", func(t *testing.T) {
		for _, raw := range []string{
			"ftp://userSECRET:passSECRET@x/v3/pathSECRET?apikey=querySECRET",
			"http://userSECRET:passSECRET@x/v3/pathSECRET?apikey=querySECRET#frag",
			"/v3/pathSECRET?apikey=querySECRET",
			"http://userSECRET:passSECRET@%zz/v3/pathSECRET?apikey=querySECRET",
			"http://userSECRET:passSECRET@/v3/pathSECRET?apikey=querySECRET",
		} {
			_, err := New(Config{Endpoints: []failnext.Endpoint{{ID: "bad", URL: raw}}})
			if err == nil {
				t.Fatalf("New accepted %s", raw)
			}
			assertClean(t, err)
		}
	})
}
