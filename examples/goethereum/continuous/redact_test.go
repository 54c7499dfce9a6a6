package main

import (
	"context"
	"errors"
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

// TestRedactMasksAKeyThatGoEthereumPrints reads through go-ethereum's client
// from a provider that rejects the key with a 401 and echoes it in the body,
// which go-ethereum's error prints. Passed through Monitor.Redact, the error
// shows no key; a read cut by its deadline still matches
// context.DeadlineExceeded after Redact.
func TestRedactMasksAKeyThatGoEthereumPrints(t *testing.T) {
	const key = "9aa3d95b3bc440fa88ea12eaa4456161"
	release := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hang") != "" {
			<-release
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"invalid project id ` +
			key + `"}}`))
	}))
	defer provider.Close()
	defer close(release)

	for _, tt := range []struct {
		name         string
		url          string
		timeout      time.Duration
		wantDeadline bool
	}{
		{name: "a 401 that echoes the key shows the marker instead",
			url: provider.URL + "/v3/" + key, timeout: 10 * time.Second},
		{name: "a read cut by its deadline still matches the deadline",
			url: provider.URL + "/v3/" + key + "?hang=1", timeout: 100 * time.Millisecond,
			wantDeadline: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			endpoints := []failnext.Endpoint{{ID: "infura", URL: tt.url}}
			monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints})
			if err != nil {
				t.Fatal(err)
			}
			transport, err := failnext.New(failnext.Config{
				Endpoints: endpoints,
				Eligible:  monitor.Eligible,
				Base:      blocklag.OwnCredentials(nil),
			})
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: transport}
			rpcClient, err := rpc.DialOptions(context.Background(), provider.URL, rpc.WithHTTPClient(client))
			if err != nil {
				t.Fatal(err)
			}
			defer rpcClient.Close()
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			_, readErr := ethclient.NewClient(rpcClient).BlockNumber(ctx)
			if readErr == nil {
				t.Fatal("the read succeeded; want it to fail")
			}
			redacted := monitor.Redact(readErr)
			if tt.wantDeadline {
				if !errors.Is(readErr, context.DeadlineExceeded) {
					t.Fatalf("go-ethereum's error %v does not match the deadline itself", readErr)
				}
				if !errors.Is(redacted, context.DeadlineExceeded) {
					t.Errorf("Redact(%v) = %v, which no longer matches the deadline",
						readErr, redacted)
				}
				return
			}
			if !strings.Contains(readErr.Error(), key) {
				t.Fatalf("go-ethereum's error %q does not show the key: the test shows nothing", readErr)
			}
			for i := 0; i+8 <= len(key); i++ {
				if strings.Contains(redacted.Error(), key[i:i+8]) {
					t.Fatalf("Redact shows %q of the key: %q", key[i:i+8], redacted)
				}
			}
			if !strings.Contains(redacted.Error(), "[redacted]") {
				t.Errorf("Redact = %q, want the key shown as [redacted]", redacted)
			}
		})
	}
}
