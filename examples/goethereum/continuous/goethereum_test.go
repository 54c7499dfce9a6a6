package main

import (
	"context"
	"testing"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// blocklag judges go-ethereum's own JSON-RPC server right: its probe is an
// answer go-ethereum accepts, and the heights it reads are the nodes' own.
func TestBlocklagJudgesGoEthereumNodes(t *testing.T) {
	lagging := startDevNode(t, 5)
	fresh := startDevNode(t, 20)
	laggingHeight := heightOf(t, lagging.URL)
	freshHeight := heightOf(t, fresh.URL)
	if laggingHeight != 5 || freshHeight != 20 {
		t.Fatalf("dev nodes at %d and %d, want 5 and 20", laggingHeight, freshHeight)
	}
	endpoints := []failnext.Endpoint{{ID: "lagging", URL: lagging.URL}, {ID: "fresh", URL: fresh.URL}}
	for _, tt := range []struct {
		maxLag        uint64
		laggingIsUsed bool
	}{{3, false}, {15, true}} {
		m, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: tt.maxLag})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(context.Background()); err != nil {
			t.Fatalf("MaxLag %d: Check: %v", tt.maxLag, err)
		}
		st := m.Status()
		l := endpoint(st, "lagging")
		if l.Height != 5 || l.Lag != 15 || l.Eligible != tt.laggingIsUsed || !m.Eligible("fresh") {
			t.Errorf("MaxLag %d: lagging %+v, fresh eligible %v; "+
				"want height 5, lag 15, eligible %v, and fresh eligible",
				tt.maxLag, l, m.Eligible("fresh"), tt.laggingIsUsed)
		}
	}
}
