package main

import (
	"bytes"
	"context"
	"log/slog"
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

// waitFor returns the next record with message msg for which match holds,
// skipping the others, and fails the test if none comes within testTimeout.
func (c *cursor) waitFor(t *testing.T, what, msg string, match func(slog.Record) bool) slog.Record {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		c.tap.mu.Lock()
		records, more := c.tap.records, c.tap.more
		c.tap.mu.Unlock()
		for ; c.next < len(records); c.next++ {
			if r := records[c.next]; r.Message == msg && match(r) {
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
