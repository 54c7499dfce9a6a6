package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// newWatcher returns the command's loop over endpoints, with MaxLag 3 as the
// command's default, reading through a failnext client that is closed when
// the test ends.
func newWatcher(t *testing.T, endpoints []failnext.Endpoint, s settings, logger *log.Logger) *watcher {
	t.Helper()
	monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3})
	if err != nil {
		t.Fatal(err)
	}
	client, err := newClient(context.Background(), endpoints, monitor)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return &watcher{s: s, monitor: monitor, endpoints: endpoints, read: client.BlockNumber, logger: logger}
}

// A provider cannot write lines of its own into the log through a read
// error: go-ethereum quotes an HTTP error's body and an RPC error's message
// word for word, and the read line escapes them.
func TestReadErrorsStayOnOneLine(t *testing.T) {
	const forged = "2026/01/01 00:00:00 read: block 99999999 from backup"
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"an HTTP error body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "oops\n"+forged+"\r\x1b[2J")
		}},
		{"an RPC error message", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy\n`+forged+`\u001b"}}`)
		}},
		{"a long HTTP error body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, strings.Repeat("x", 100_000))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			var out bytes.Buffer
			w := newWatcher(t, []failnext.Endpoint{{ID: "only", URL: srv.URL}}, settings{readTimeout: 5 * time.Second}, log.New(&out, "", 0))
			w.readOnce(context.Background())
			line := strings.TrimSuffix(out.String(), "\n")
			if !strings.HasPrefix(line, "read: error: ") || strings.ContainsAny(line, "\n\r\x1b") {
				t.Errorf("read logged %q, want one line reporting the error", out.String())
			}
			if len(line) > 400 {
				t.Errorf("read logged %d bytes, want the error clipped", len(line))
			}
		})
	}
}

// A check line shows each provider's height, lag and verdict; when a Check
// publishes nothing, the line says so and shows the verdicts still in force
// with their age.
func TestCheckLines(t *testing.T) {
	var down atomic.Bool
	node := func(height string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"`+height+`"}`)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	primary, backup := node("0x4ce"), node("0x4d2") // 1230 and 1234
	endpoints := []failnext.Endpoint{{ID: "primary", URL: primary.URL}, {ID: "backup", URL: backup.URL}}
	var out bytes.Buffer
	w := newWatcher(t, endpoints, settings{checkTimeout: 5 * time.Second}, log.New(&out, "", 0))

	w.check(context.Background())
	if want := "check: ref=1234 primary=1230 (lag 4, ineligible) backup=1234 (eligible)\n"; out.String() != want {
		t.Errorf("check logged %q, want %q", out.String(), want)
	}
	out.Reset()
	down.Store(true)
	w.check(context.Background())
	line := out.String()
	for _, want := range []string{
		"check: no new verdicts (",
		`endpoint "primary": HTTP status 503`,
		"still using those from 0s ago: ref=1234 primary=1230 (lag 4, ineligible) backup=1234 (eligible)\n",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("check logged %q, want it to contain %q", line, want)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("check logged %q, want one line", line)
	}
}
