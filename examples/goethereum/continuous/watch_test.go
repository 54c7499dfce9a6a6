package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

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
			endpoints := []failnext.Endpoint{{ID: "only", URL: srv.URL}}
			monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints})
			if err != nil {
				t.Fatal(err)
			}
			transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible, OnEvent: recordEvent})
			if err != nil {
				t.Fatal(err)
			}
			rpcClient, err := rpc.DialOptions(context.Background(), srv.URL, rpc.WithHTTPClient(&http.Client{Transport: transport}))
			if err != nil {
				t.Fatal(err)
			}
			client := ethclient.NewClient(rpcClient)
			defer client.Close()

			var out bytes.Buffer
			w := &watcher{s: settings{readTimeout: 5 * time.Second}, endpoints: endpoints, read: client.BlockNumber, logger: log.New(&out, "", 0)}
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
