package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// testTimeout bounds each wait; a healthy run needs a fraction of it.
const testTimeout = 60 * time.Second

// logTap is a slog.Handler that keeps every record, so that a test can wait
// for the one it expects. The loop logs through slog's default logger, and
// tapLog makes the tap that logger for the length of a test; tests using it
// must not run in parallel.
type logTap struct {
	mu      sync.Mutex
	records []slog.Record
	more    chan struct{} // closed when a record arrives, then replaced
}

func tapLog(t *testing.T) *logTap {
	t.Helper()
	tap := &logTap{more: make(chan struct{})}
	old := slog.Default()
	slog.SetDefault(slog.New(tap))
	t.Cleanup(func() { slog.SetDefault(old) })
	return tap
}

func (l *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTap) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logTap) WithGroup(string) slog.Handler            { return l }

func (l *logTap) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	close(l.more)
	l.more = make(chan struct{})
	return nil
}

// text is everything logged so far, as slog's text handler writes it.
func (l *logTap) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, nil)
	for _, r := range l.records {
		h.Handle(context.Background(), r)
	}
	return b.String()
}

// cursor reads a logTap's records in order, each once.
type cursor struct {
	tap  *logTap
	next int
}

// waitFor returns the next record with message msg (any message, for "")
// for which match holds, skipping the others, and fails the test if none
// comes within testTimeout.
func (c *cursor) waitFor(t *testing.T, what, msg string, match func(slog.Record) bool) slog.Record {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		c.tap.mu.Lock()
		records, more := c.tap.records, c.tap.more
		c.tap.mu.Unlock()
		for ; c.next < len(records); c.next++ {
			r := records[c.next]
			if (msg == "" || r.Message == msg) && match(r) {
				c.next++
				return r
			}
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("no log record showing %s within %v; the log:\n%s", what, testTimeout, c.tap.text())
		}
	}
}

// attr returns the value of a record's attribute, as it was logged: a
// blocklag.Status, an error, a number, a string.
func attr(r slog.Record, key string) any {
	var v any
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Any()
			return false
		}
		return true
	})
	return v
}

// names matches a record about provider id.
func names(id failnext.EndpointID) func(slog.Record) bool {
	return func(r slog.Record) bool {
		return attr(r, "provider") == id
	}
}

// endpoint returns one endpoint's part of a Status.
func endpoint(st blocklag.Status, id string) blocklag.EndpointStatus {
	for _, e := range st.Endpoints {
		if string(e.ID) == id {
			return e
		}
	}
	return blocklag.EndpointStatus{}
}

// about returns the messages of the records that name provider id, in order.
func (l *logTap) about(id failnext.EndpointID) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var msgs []string
	for _, r := range l.records {
		if attr(r, "provider") == id {
			msgs = append(msgs, r.Message)
		}
	}
	return msgs
}

// servedBy matches a read record for block served by endpoint id.
func servedBy(id failnext.EndpointID, block uint64) func(slog.Record) bool {
	return func(r slog.Record) bool {
		return attr(r, "endpoint") == id && attr(r, "block") == block
	}
}

// startDevNode starts an in-process dev chain that adds blocks only when
// told to, brings it to the given height, and stops it when the test ends.
func startDevNode(t *testing.T, blocks int) *devnet.Node {
	t.Helper()
	n, err := devnet.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	n.Commit(blocks)
	return n
}

// isRead matches a record of a read, served or failed.
func isRead(r slog.Record) bool {
	return r.Message == "read" || r.Message == "read failed"
}

// isProbe reports whether r is one of blocklag's probes, which name
// blocklag in their User-Agent; go-ethereum's reads do not.
func isProbe(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("User-Agent"), "failnext-blocklag")
}

// answerHeight answers a JSON-RPC request, a probe or a read of
// eth_blockNumber, with height, such as "0x12".
func answerHeight(w http.ResponseWriter, r *http.Request, height string) {
	var req struct{ ID json.RawMessage }
	json.NewDecoder(r.Body).Decode(&req)
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("1")
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%q}`, req.ID, height)
}

// startProvider starts a provider at height that answers blocklag's
// probes, and reads too when reads is nil; otherwise reads handles them.
// It closes when the test ends, its connections first, so that a handler
// waiting on its request's context returns.
func startProvider(t *testing.T, height string, reads http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reads == nil || isProbe(r) {
			answerHeight(w, r, height)
			return
		}
		reads(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// hang is a handler that answers nothing until the client gives up. It
// reads the request's body first: the server notices a closed connection,
// and ends the request's context, only once the body has been read.
func hang(_ http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// hangUp is a handler that closes the connection without an answer.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// setFlag sets the command line's flag name to value until the test ends.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag -%s", name)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}
