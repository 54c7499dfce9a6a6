package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// BenchmarkBlockNumber compares what one blocklag probe costs with what
// go-ethereum's ethclient pays for the same eth_blockNumber call, against
// one loopback provider that answers as go-ethereum's own server does. Both
// sides count the provider's work too, which is the same for each.
func BenchmarkBlockNumber(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1521a3f"}`+"\n", req.ID)
	}))
	defer srv.Close()
	ctx := context.Background()

	b.Run("blocklag-Check", func(b *testing.B) {
		monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{{ID: "a", URL: srv.URL}}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := monitor.Check(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ethclient-BlockNumber", func(b *testing.B) {
		client, err := ethclient.Dial(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer client.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.BlockNumber(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
