package blocklag

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostileCase is a provider behaviour that only a real HTTP exchange shows.
// The answer rules themselves are pinned by
// TestJudgeAcceptsOnlyAnswersThatKeepEveryRule, and a refused dial by
// TestRefusedDialKeepsTheErrorNumber.
type hostileCase struct {
	name string
	// target starts the provider and returns its URL, to which secrets are
	// added; good is the URL of a good provider at height 100.
	target       func(t *testing.T, good string) string
	probeTimeout time.Duration
	want         string // "" means height 100 is read; else part of the ProbeError
	outOfTime    bool   // the provider keeps its probe until the margin before the Check's deadline, which it must not pass
	maxAlloc     uint64 // when set, what a Check may allocate at most
	chain        bool   // it is shown to the chain ID request too
}

var hostileCases = []hostileCase{
	{name: "a 301 redirect (which turns a POST into a GET) to the good provider is not followed", target: serving(redirect(301)), want: "HTTP status 301", chain: true},
	{name: "a 307 redirect (which keeps the POST) to the good provider is not followed", target: serving(redirect(307)), want: "HTTP status 307"},
	{name: "TLS to a plain HTTP server", target: plainAsTLS, want: "first record does not look like a TLS handshake"},
	{name: "a connection closed mid-answer", target: serving(hijacked("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\"")), want: "unexpected EOF", chain: true},
	{name: "a status line of 200 KB with an ESC", target: serving(hijacked("HTTP/1.1 2" + strings.Repeat("0", 200<<10) + "\x1b OK\r\n\r\n")), want: "malformed HTTP status code"},
	{name: "a header line of 2 MiB of control bytes, which net/http cites in 8 MB of text", target: serving(hijacked("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("\x01", 2<<20) + "\r\n\r\n")), want: "malformed MIME header line"},
	{name: "a server that never sends headers", target: serving(hanging), want: "ran out of the Check's time", outOfTime: true, chain: true},
	{name: "a server that drips one byte at a time", target: serving(drip(http.StatusOK)), want: "ran out of the Check's time", outOfTime: true},
	{name: "a server that drips one byte at a time, under a ProbeTimeout longer than the Check", target: serving(drip(http.StatusOK)), probeTimeout: time.Hour, want: "ran out of the Check's time", outOfTime: true},
	{name: "a 429 with Infura's body", target: serving(replying(429, rpcErrorAnswer(-32005, "daily request count exceeded"))),
		want: `HTTP status 429: RPC error -32005: "daily request count exceeded"`, chain: true},
	{name: "a 401 whose RPC error echoes the request's path and query", target: serving(echoing(401)), want: `HTTP status 401: RPC error -32001: "invalid key in [redacted]`},
	{name: "a 503 cut short of its Content-Length", target: serving(hijacked("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\"")), want: "HTTP status 503", chain: true},
	{name: "a 503 that drips its body, under ProbeTimeout", target: serving(drip(http.StatusServiceUnavailable)), probeTimeout: 100 * time.Millisecond, want: "HTTP status 503"},
	{name: "a 503 that drips its body until the Check's time runs out", target: serving(drip(http.StatusServiceUnavailable)), want: "HTTP status 503", outOfTime: true},
	{name: "a 502 streaming 64 MiB", target: serving(streaming(http.StatusBadGateway)), want: "HTTP status 502", maxAlloc: 1 << 20},
	{name: "a server that never sends headers, under ProbeTimeout", target: serving(hanging), probeTimeout: 100 * time.Millisecond, want: "timed out", chain: true},
	{name: "a server that drips one byte at a time, under ProbeTimeout", target: serving(drip(http.StatusOK)), probeTimeout: 100 * time.Millisecond, want: "timed out"},
	{name: "64 MiB of plain text", target: serving(func(*testing.T, string) http.HandlerFunc { return huge(false) }), want: "larger than 4096", maxAlloc: 1 << 20},
	{name: "a gzip bomb of 64 MiB", target: serving(func(*testing.T, string) http.HandlerFunc { return huge(true) }), want: "larger than 4096", maxAlloc: 1 << 20},
	{name: "a provider that compresses only when asked is not asked", target: serving(gzipped), chain: true},
	{name: "a gzip answer sent unasked is not decoded", target: serving(gzipUnasked), want: "not a JSON object"},
	{name: "a 40-byte answer behind 1 MiB of empty deflate blocks counts the bytes sent", target: serving(emptyBlocks(1 << 20)), want: "larger than 4096", maxAlloc: 1 << 20},
	{name: "an endless stream of empty deflate blocks fails at once", target: serving(emptyBlocks(-1)), want: "larger than 4096", maxAlloc: 1 << 20, chain: true},
	{name: "a chunked answer", target: serving(chunked)},
	{name: "an answer without Content-Type", target: serving(withContentType(""))},
	{name: "an answer with Content-Type text/plain", target: serving(withContentType("text/plain; charset=utf-8"))},
}

// Each provider is checked beside a good one at the same height, with
// MaxLag 0 and secrets in its URL. Whatever it does, the Check ends within
// its context, follows no redirect, closes every body it was handed, and
// lets no secret into its error. A provider that fails gets a ProbeError
// naming it and the fault, short and on one line, and is ineligible while the
// good one is eligible, in a snapshot that the Check published: one that
// never finishes its answer too, since its probe ends before the Check's
// deadline. An accepted one is read at exactly the good one's height.
func TestHostileProvidersCannotStallOrFoolACheck(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, false) })
	}
}

// The chain ID request goes through the same client, limits and timeout as
// the height probe: one behaviour of each kind (a status, a broken
// connection, a stall, a timeout, an accepted answer), shown to it alone,
// gets the same verdict, and a failure says that it was the chain ID
// request. The providers' answers report 100, which is then the chain ID to
// confirm.
func TestChainIDRequestMeetsHostileProvidersAsTheHeightProbeDoes(t *testing.T) {
	for _, c := range hostileCases {
		if c.chain {
			t.Run(c.name, func(t *testing.T) { c.run(t, true) })
		}
	}
}

// run checks the hostile provider beside a good one. With onChainID the
// providers see only chain ID requests: the Base answers every height probe
// itself.
func (c hostileCase) run(t *testing.T, onChainID bool) {
	good := newProvider(t, 100)
	base := &recorder{}
	cfg := Config{
		Endpoints:    named("good", good.URL, "hostile", withSecrets(c.target(t, good.URL))),
		Base:         base,
		ProbeTimeout: c.probeTimeout,
	}
	if onChainID {
		cfg.ChainID, base.height = 100, 100
		good.serveChain(`"0x64"`)
	}
	m := mustNew(t, cfg)

	limit := 5 * time.Second
	if c.outOfTime {
		limit = time.Second // so that the probe has 900 ms, and the Check a margin of 100 ms
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stats runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&stats)
	allocated := stats.TotalAlloc
	start := time.Now()
	err := m.Check(ctx)
	took := time.Since(start)
	runtime.ReadMemStats(&stats)
	allocated = stats.TotalAlloc - allocated

	if took > limit+time.Second {
		t.Errorf("Check took %v with a %v context", took, limit)
	}
	if c.maxAlloc > 0 && allocated > c.maxAlloc {
		t.Errorf("a Check allocated %d bytes, want at most %d", allocated, c.maxAlloc)
	}
	if good.total() != 1 {
		t.Errorf("the good provider got %d requests, want 1 (no redirect followed)", good.total())
	}
	if n := base.open.Load(); n != 0 {
		t.Errorf("Check returned with %d response bodies open", n)
	}
	assertShowsNone(t, err)

	switch {
	case c.want == "":
		if err != nil {
			t.Errorf("Check = %v, want both read at height 100", err)
		}
		wantEligible(t, m, verdicts{"good": true, "hostile": true})
	default:
		errs := probeErrors(t, err)
		pe := errs["hostile"]
		if len(errs) != 1 || pe == nil || !strings.Contains(pe.Error(), c.want) {
			t.Fatalf("Check = %v, want one ProbeError for hostile saying %q", err, c.want)
		}
		if strings.Contains(c.want, "timed out") && (took < c.probeTimeout || !errors.Is(pe, context.DeadlineExceeded)) {
			t.Errorf("a probe that ran out of ProbeTimeout after %v gave %v, which does not wrap context.DeadlineExceeded", took, pe)
		}
		if c.outOfTime && ctx.Err() != nil {
			t.Errorf("Check returned after its context ended: %v", ctx.Err())
		}
		if strings.Contains(c.want, "ran out of the Check's time") && (!errors.Is(pe, context.DeadlineExceeded) || pe.Reason() != ReasonTimeout) {
			t.Errorf("a probe that ran out of the Check's time gave %v (%s), want a timeout wrapping context.DeadlineExceeded", pe, pe.Reason())
		}
		if onChainID != strings.HasPrefix(pe.Err.Error(), "chain ID request: ") {
			t.Errorf("error %q, want it to say whether it was the chain ID request (%v)", pe.Err, onChainID)
		}
		if msg := pe.Error(); !strings.Contains(msg, `endpoint "hostile"`) || hasControl(msg) || len(msg) > 400 {
			t.Errorf("message of %d bytes %.200q does not name the endpoint, holds a control character, or is too long", len(msg), msg)
		}
		wantEligible(t, m, verdicts{"good": true, "hostile": false})
	}
}

// serving returns a target that starts a provider with the given handler.
func serving(handler func(t *testing.T, good string) http.HandlerFunc) func(*testing.T, string) string {
	return func(t *testing.T, good string) string { return newServer(t, handler(t, good)).URL }
}

// redirect sends every probe to the good provider, at a URL with secrets,
// with a body that is not a JSON-RPC error, so that the probe fails as a
// plain StatusError.
func redirect(code int) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, good string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.Header().Set("Location", withSecrets(good))
			w.WriteHeader(code)
			io.WriteString(w, "moved")
		}
	}
}

// plainAsTLS starts a plain HTTP provider and returns its URL with https.
func plainAsTLS(t *testing.T, _ string) string {
	t.Helper()
	return strings.Replace(newProvider(t, 100).URL, "http://", "https://", 1)
}

// hijacked answers a probe with raw bytes and then hangs up: here a body
// shorter than its Content-Length, or a status line that net/http rejects
// and cites.
func hijacked(raw string) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			buf.WriteString(raw)
			buf.Flush()
		}
	}
}

// hanging answers nothing until the client gives up.
func hanging(t *testing.T, _ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r) // the server notices a closed connection only once the body is read
		<-r.Context().Done()
	}
}

// drip sends status and then one space every 20 ms, so the answer never
// completes in the time a probe is given.
func drip(status int) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.WriteHeader(status)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					w.Write([]byte(" "))
					w.(http.Flusher).Flush()
				}
			}
		}
	}
}

// replying answers every probe with status and body.
func replying(status int, body string) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
}

// echoing answers every probe with status and a JSON-RPC error whose
// message quotes the request's path and query, as a provider refusing a key
// may.
func echoing(status int) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.WriteHeader(status)
			io.WriteString(w, rpcErrorAnswer(-32001, "invalid key in "+r.URL.RequestURI()))
		}
	}
}

// streaming answers every probe with status and 64 MiB of white space.
func streaming(status int) func(*testing.T, string) http.HandlerFunc {
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.WriteHeader(status)
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return // the probe hung up, as it should
				}
			}
		}
	}
}

// withContentType answers under the given Content-Type ("" sends none).
func withContentType(contentType string) func(*testing.T, string) http.HandlerFunc {
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			out := answer(100)
			w.Header()["Content-Type"] = nil // stop net/http from sniffing one
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			io.WriteString(w, out)
		}
	}
}

// chunked sends the answer in two flushed pieces without a Content-Length,
// as Hardhat does.
func chunked(t *testing.T, _ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r)
		out := answer(100)
		io.WriteString(w, out[:10])
		w.(http.Flusher).Flush()
		io.WriteString(w, out[10:])
		if r.ProtoMajor == 1 && len(w.Header()["Content-Length"]) != 0 {
			t.Error("the answer was not chunked")
		}
	}
}

// gzipped compresses the answer when the request asks for gzip, as
// go-ethereum does, and otherwise sends it plain.
func gzipped(t *testing.T, _ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r)
		out := answer(100)
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, out)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, out)
		zw.Close()
	}
}

// gzipUnasked compresses the answer whatever the request asked for.
func gzipUnasked(t *testing.T, _ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readRequest(t, r)
		out := answer(100)
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, out)
		zw.Close()
	}
}

// emptyBlocks sends a gzip stream of size bytes of empty deflate blocks,
// which decode to nothing, and then the answer; a negative size sends
// empty blocks until the probe hangs up (or 256 MiB have gone). Decoded,
// such a stream is a 40-byte answer, or never yields a byte.
func emptyBlocks(size int) func(*testing.T, string) http.HandlerFunc {
	// A stored deflate block that is not the last and holds no bytes: a
	// header byte, then its length 0 and that length's complement.
	chunk := bytes.Repeat([]byte("\x00\x00\x00\xff\xff"), 1<<16)
	return func(t *testing.T, _ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")) // a gzip header
			sent, limit := 0, size
			if limit < 0 {
				limit = 256 << 20
			}
			for sent < limit {
				if _, err := w.Write(chunk); err != nil {
					return // the probe hung up, as it should
				}
				sent += len(chunk)
			}
			// The answer itself, as the final deflate block, then the
			// gzip trailer.
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			io.WriteString(zw, answer(100))
			zw.Close()
			w.Write(buf.Bytes()[10:])
		}
	}
}
