package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// testTimeout bounds each wait on the dev nodes; a healthy run needs a
// fraction of it.
const testTimeout = 60 * time.Second

// heightOf reads a node's height straight from it, without blocklag.
func heightOf(t *testing.T, url string) uint64 {
	t.Helper()
	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// blocklag against go-ethereum's own JSON-RPC server.
func TestBlocklagAgainstGoEthereum(t *testing.T) {
	lagging, fresh := startDevNode(t, 5), startDevNode(t, 20)
	if l, f := heightOf(t, lagging.URL), heightOf(t, fresh.URL); l != 5 || f != 20 {
		t.Fatalf("dev nodes at %d and %d, want 5 and 20", l, f)
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
		if m.Eligible("lagging") != tt.laggingIsUsed || !m.Eligible("fresh") {
			t.Errorf("MaxLag %d: lagging eligible %v, fresh eligible %v; want %v and true",
				tt.maxLag, m.Eligible("lagging"), m.Eligible("fresh"), tt.laggingIsUsed)
		}
	}
}

// gzipSeen is a Base that records whether Go's transport decompressed an
// answer for the probe.
type gzipSeen struct{ decompressed atomic.Bool }

func (g *gzipSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.Uncompressed {
		g.decompressed.Store(true)
	}
	return resp, err
}

// go-ethereum compresses its answers when asked; the probe accepts them.
func TestProbeAcceptsGzipFromGoEthereum(t *testing.T) {
	n := startDevNode(t, 3)
	base := &gzipSeen{}
	m, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{{ID: "geth", URL: n.URL}}, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !base.decompressed.Load() {
		t.Error("go-ethereum's answer was not gzip-compressed; the test proves nothing")
	}
	if !m.Eligible("geth") {
		t.Error("a gzip-compressed answer was not accepted")
	}
}

// lines turns what a logger writes into a channel of lines.
func lines(t *testing.T) (*log.Logger, <-chan string) {
	r, w := io.Pipe()
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		s := bufio.NewScanner(r)
		for s.Scan() {
			ch <- s.Text()
		}
	}()
	t.Cleanup(func() { w.Close() })
	return log.New(w, "", 0), ch
}

// waitFor returns the first line containing want, failing after testTimeout.
func waitFor(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		select {
		case line := <-ch:
			t.Log(line)
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line containing %q", want)
		}
	}
}

// The continuous loop reads through failnext from the fresh node, and
// fails over to the remaining node once the fresh one is gone. Its log
// shows each provider's height, lag and verdict, and who served each read.
func TestContinuousLoop(t *testing.T) {
	lagging, fresh := startDevNode(t, 5), startDevNode(t, 20)
	// The lagging node is first, so failnext would use it if blocklag let it.
	endpoints := []failnext.Endpoint{{ID: "primary", URL: lagging.URL}, {ID: "backup", URL: fresh.URL}}
	logger, out := lines(t)
	s := settings{checkEvery: 50 * time.Millisecond, readEvery: 20 * time.Millisecond, checkTimeout: 5 * time.Second, readTimeout: 5 * time.Second}
	w := newWatcher(t, endpoints, s, logger)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()

	waitFor(t, out, "check: ref=20 primary=5 (lag 15, ineligible) backup=20 (eligible)")
	waitFor(t, out, "read: block 20 from backup")

	fresh.Stop()
	line := waitFor(t, out, "backup=failed (ineligible: ")
	if !strings.HasPrefix(line, "check: ref=5 primary=5 (eligible) backup=failed") {
		t.Errorf("check line %q does not show the primary as the reference", line)
	}
	waitFor(t, out, "read: block 5 from primary")

	// The stopped node's error is a ProbeError naming it.
	var pe *blocklag.ProbeError
	if err := w.monitor.Check(context.Background()); !errors.As(err, &pe) || pe.Endpoint != "backup" {
		t.Errorf("Check = %v, want a ProbeError for backup", err)
	}
	cancel()
	<-done
}
