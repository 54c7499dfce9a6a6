package blocklag

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostileCase is a provider behaviour that only a real HTTP exchange shows;
// the answer rules themselves are answerCases'.
type hostileCase struct {
	name string
	// target starts the provider and returns its URL, to which secrets are
	// added; good is the URL of a good provider at height 100.
	target       func(t *testing.T, good string) string
	probeTimeout time.Duration
	want         string // "" means height 100 is read; else part of the ProbeError
	outOfTime    bool   // the probe lasts until the margin before the Check's deadline
	maxAlloc     uint64 // when set, what a Check may allocate at most
	chain        bool   // it is shown to the chain ID request too
}

// A 200 answer that net/http ends after 16 bytes of the 100 it announced.
const cutShort = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\""

// A 503 answer that net/http ends after 16 bytes of the 100 it announced.
const cut503 = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\""

var hostileCases = []hostileCase{
	{name: "a redirect to the good provider is not followed", target: redirect, want: "HTTP status 301",
		chain: true},
	{name: "TLS to a plain HTTP server fails", target: plainAsTLS,
		want: "first record does not look like a TLS handshake"},
	{name: "a connection closed mid-answer fails", target: serve(hijacked(cutShort)), want: "unexpected EOF",
		chain: true},
	{name: "a header line of 2 MiB of control bytes, which net/http cites in 8 MB of text, fails",
		target: serve(hijacked("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("\x01", 2<<20) + "\r\n\r\n")),
		want:   "malformed MIME header line"},
	{name: "a server that never sends headers runs out of the Check's time", target: serve(hanging),
		want: "ran out of the Check's time", outOfTime: true, chain: true},
	{name: "a server that drips one byte at a time runs out of the Check's time",
		target: serve(drip(http.StatusOK)), want: "ran out of the Check's time", outOfTime: true},
	{name: "a server that never sends headers times out under ProbeTimeout", target: serve(hanging),
		probeTimeout: time.Second, want: "timed out", chain: true},
	{name: "a server that never sends headers runs out of the Check's time under a longer ProbeTimeout",
		target: serve(hanging), probeTimeout: time.Hour,
		want: "ran out of the Check's time", outOfTime: true},
	{name: "a 429 with Infura's body fails as its status",
		target: serve(reply(429, rpcErrorAnswer(-32005, "daily request count exceeded"))),
		want:   `HTTP status 429: RPC error -32005: "daily request count exceeded"`, chain: true},
	{name: "a 503 cut short of its Content-Length fails as its status", target: serve(hijacked(cut503)),
		want: "HTTP status 503", chain: true},
	{name: "a 503 that drips its body until the Check's time runs out fails as its status",
		target: serve(drip(http.StatusServiceUnavailable)), want: "HTTP status 503", outOfTime: true},
	{name: "64 MiB of plain text is not read", target: serve(huge(false)), want: "larger than 4096",
		maxAlloc: 1 << 20, chain: true},
	{name: "a gzip bomb of 64 MiB is not read", target: serve(huge(true)), want: "larger than 4096",
		maxAlloc: 1 << 20},
	{name: "a gzip answer sent unasked is not decoded", target: serve(gzipUnasked),
		want: "not a JSON object"},
	{name: "a chunked answer is read", target: serve(chunked), chain: true},
	{name: "an answer without Content-Type is read", target: serve(withContentType(""))},
	{name: "an answer with Content-Type text/plain is read",
		target: serve(withContentType("text/plain; charset=utf-8"))},
}

// Each provider is checked beside a good one at the same height, with MaxLag
// 0 and secrets in its URL. Whatever it does, the Check publishes within its
// context, follows no redirect, closes every body and shows no secret; a
// failing provider gets a short one-line ProbeError naming it and the fault,
// and is published ineligible beside the good one. The chain ID request
// meets one behaviour of each kind as the height probe does, and its failure
// says it was the chain ID request; those answers report 100, then the chain
// ID to confirm. The cases that measure what a Check allocates run alone,
// the others at once.
func TestHostileProvidersCannotStallOrFoolACheck(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, false) })
		if c.chain {
			t.Run(c.name+", met by the chain ID request", func(t *testing.T) { c.run(t, true) })
		}
	}
}

// run checks the hostile provider beside a good one. With onChainID the Base
// answers every height probe itself, so the providers see only chain ID
// requests.
func (c hostileCase) run(t *testing.T, onChainID bool) {
	if c.maxAlloc == 0 {
		t.Parallel()
	}
	good := newProvider(t, 100)
	base := &recorder{}
	cfg := Config{
		Endpoints:    named("good", good.URL, "hostile", withSecrets(c.target(t, good.URL))),
		Base:         base,
		ProbeTimeout: c.probeTimeout,
	}
	if onChainID {
		cfg.ChainID = 100
		base.height = 100
		good.serveChain(`"0x64"`)
	}
	m := mustNew(t, cfg)

	// With 3 s, the probes have 2.7 s and the Check a margin of 300 ms to
	// publish in.
	limit := 5 * time.Second
	if c.outOfTime {
		limit = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var err error
	allocated := allocatedBy(func() { err = m.Check(ctx) })

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
	if c.want == "" {
		if err != nil {
			t.Errorf("Check = %v, want both read at height 100", err)
		}
		wantEligible(t, m, verdicts{"good": true, "hostile": true})
		return
	}
	// A *CheckError, which probeErrors asks for, is what a Check that
	// published before its deadline returns.
	errs := probeErrors(t, err)
	pe := errs["hostile"]
	if len(errs) != 1 || pe == nil || !strings.Contains(pe.Error(), c.want) {
		t.Fatalf("Check = %v, want one ProbeError for hostile saying %q", err, c.want)
	}
	ranOut := strings.Contains(c.want, "timed out") || strings.Contains(c.want, "ran out of the Check's time")
	if ranOut && !timedOut(pe) {
		t.Errorf("a probe that ran out of time gave %v, want it to match context.DeadlineExceeded", pe)
	}
	if onChainID != strings.HasPrefix(pe.Err.Error(), "chain ID request: ") {
		t.Errorf("error %q, want it to say whether it was the chain ID request (%v)", pe.Err, onChainID)
	}
	if msg := pe.Error(); !strings.Contains(msg, `endpoint "hostile"`) || hasControl(msg) || len(msg) > 400 {
		t.Errorf("message of %d bytes %.200q does not name the endpoint, holds a control character, "+
			"or is too long", len(msg), msg)
	}
	wantEligible(t, m, verdicts{"good": true, "hostile": false})
}

// serve is a target that reads and checks each request as a provider does,
// and then hands it to h.
func serve(h http.HandlerFunc) func(*testing.T, string) string {
	return func(t *testing.T, _ string) string {
		return newServer(t, func(w http.ResponseWriter, r *http.Request) {
			readRequest(t, r)
			h(w, r)
		}).URL
	}
}

// redirect is a target that sends every probe to the good provider, at a
// URL with secrets.
func redirect(t *testing.T, good string) string {
	return serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", withSecrets(good))
		w.WriteHeader(http.StatusMovedPermanently)
	})(t, good)
}

// plainAsTLS starts a plain HTTP provider and returns its URL with https.
func plainAsTLS(t *testing.T, _ string) string {
	return strings.Replace(newProvider(t, 100).URL, "http://", "https://", 1)
}

// hijacked answers with raw bytes and hangs up.
func hijacked(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if conn, buf, err := http.NewResponseController(w).Hijack(); err == nil {
			defer conn.Close()
			buf.WriteString(raw)
			buf.Flush()
		}
	}
}

// hanging answers nothing until the client gives up.
func hanging(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// drip sends status and then a space every 20 ms, without end.
func drip(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
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

// huge streams 64 MiB, plainly or as gzip that inflates to 64 MiB (one member
// of 1 MiB sent 64 times), from buffers made once.
func huge(compressed bool) http.HandlerFunc {
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	if compressed {
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

// withContentType answers under the given Content-Type ("" sends none).
func withContentType(contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // stop net/http from sniffing one
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		io.WriteString(w, answer(100))
	}
}

// chunked sends the answer in two flushed pieces without a Content-Length,
// as Hardhat does.
func chunked(w http.ResponseWriter, r *http.Request) {
	out := answer(100)
	io.WriteString(w, out[:10])
	w.(http.Flusher).Flush()
	io.WriteString(w, out[10:])
}

// gzipUnasked compresses the answer, though the probe asked for identity.
func gzipUnasked(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzip.NewWriter(w)
	io.WriteString(zw, answer(100))
	zw.Close()
}
