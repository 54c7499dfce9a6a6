package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// A go-ethereum read cut by its deadline still matches
// context.DeadlineExceeded once it has gone through Monitor.Redact, so the
// program can tell a timeout from a provider's error after redacting it.
func TestRedactKeepsTheDeadlineOfAGoEthereumRead(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer hung.Close()
	defer close(release) // before hung.Close, which waits for its handler

	endpoints := []failnext.Endpoint{{ID: "hung", URL: hung.URL + "/v3/9aa3d95b3bc440fa88ea12eaa4456161"}}
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
	rpcClient, err := rpc.DialOptions(context.Background(), hung.URL,
		rpc.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		t.Fatal(err)
	}
	defer rpcClient.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, readErr := ethclient.NewClient(rpcClient).BlockNumber(ctx)
	if !errors.Is(readErr, context.DeadlineExceeded) {
		t.Fatalf("go-ethereum's error %v does not match the deadline itself", readErr)
	}
	if redacted := monitor.Redact(readErr); !errors.Is(redacted, context.DeadlineExceeded) {
		t.Errorf("Redact(%v) = %v, which no longer matches context.DeadlineExceeded", readErr, redacted)
	}
}
