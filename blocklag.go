// Package blocklag tells which Ethereum JSON-RPC providers lag behind the
// others, so that a failnext transport can skip them.
//
// A [Monitor]'s [Monitor.Check] asks every provider for its latest block and
// takes the highest height (see [Config.Quorum]) as the reference: a provider
// is eligible when it answered and is at most [Config.MaxLag] below it. The
// Check publishes these verdicts, which [Monitor.Eligible] answers from:
//
//	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible})
//
// Until a Check publishes, the Monitor is fail-open: every provider is
// eligible. [Monitor.Status] shows what verdicts rest on, [Monitor.Stats]
// what every Check did.
//
// # Probes
//
// A probe POSTs {"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}
// (and eth_chainId, until [Config.ChainID] is confirmed) through [Config.Base]
// to the URL as configured, with JSON Content-Type and Accept, Accept-Encoding
// identity, User-Agent failnext-blocklag and Basic auth from the userinfo. It
// needs status 200 and at most 4096 bytes, as many as any Content-Length says,
// of one JSON object: "jsonrpc" "2.0", "id" 1, no error, and a "result" of "0x"
// and 1 to 16 lowercase hex digits, no leading zero. Nothing is redirected or
// retried. Under a deadline, probes time out a tenth of the time left (at most 1 s) before it.
package blocklag

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yermakovsa/failnext"
)

// Monitor compares the heights of a fixed set of providers. Its methods are
// safe for concurrent use; on one not made by [New], they do nothing.
type Monitor struct {
	// Set by New and read-only afterwards.
	endpoints    []endpoint
	rules        rules
	probeTimeout time.Duration
	chainID      uint64
	base         http.RoundTripper // Config.Base, or http.DefaultTransport
	secrets      *matcher          // every endpoint's, masked in every endpoint's messages

	// turn holds one token while a Check runs: a channel rather than a
	// sync.Mutex, so that a Check waiting for its turn can give up.
	turn chan struct{}
	// confirmed[i] is set once endpoint i has answered eth_chainId with
	// chainID. Only the Check holding turn reads and writes it, before
	// the probes start and after they have all finished.
	confirmed []bool
	// current is the snapshot in force. New stores the fail-open one, then
	// only the Check holding turn stores; Eligible and Status load it at
	// any time, and a loaded snapshot never changes.
	current atomic.Pointer[snapshot]
	now     func() time.Time // stamps Checks and times probes: time.Now, which tests replace before they Check
	counts  counts           // what Stats reports: the Check holding turn adds to it
}

// New returns a fail-open Monitor for cfg, or an error that names the
// endpoint and the rule it breaks, showing of its URL at most the scheme.
func New(cfg Config) (*Monitor, error) {
	eps, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	m := &Monitor{
		endpoints:    eps,
		secrets:      newMatcher(eps),
		rules:        rules{maxLag: cfg.MaxLag, maxAhead: cfg.MaxAhead, quorum: cfg.Quorum},
		probeTimeout: cfg.ProbeTimeout,
		chainID:      cfg.ChainID,
		base:         cfg.Base,
		turn:         make(chan struct{}, 1),
		confirmed:    make([]bool, len(eps)),
		now:          time.Now,
		counts:       counts{failures: make([][len(reasons)]atomic.Uint64, len(eps))},
	}
	if m.base == nil {
		m.base = http.DefaultTransport
	}
	m.current.Store(failOpen(eps, cfg.MaxLag))
	return m, nil
}

var errNotNew = errors.New("blocklag: Monitor was not made by New")

// Check probes every provider at once and returns, once all have ended:
//
//   - ctx is done: nothing is published; an error, no *CheckError, matches ctx.Err();
//   - every probe failed: nothing is published; a *CheckError holds them all;
//   - some failed: it publishes, those ineligible; a *CheckError holds theirs;
//   - none failed: it publishes and returns nil.
//
// A *CheckError with a timed-out probe matches context.DeadlineExceeded
// too: try [errors.As] first. Checks run one at a time, a waiting one
// cancellable through ctx.
func (m *Monitor) Check(ctx context.Context) error {
	if m == nil || m.turn == nil {
		return errNotNew
	}
	if ctx == nil {
		return errors.New("blocklag: nil context")
	}
	select {
	case m.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.turn }()
	if err := ctx.Err(); err != nil { // both cases were ready and select chose the turn
		return err
	}

	m.counts.checks.Add(1)
	outcomes := m.probeAll(ctx)
	checked := m.now()
	// Each failure becomes one *ProbeError, which Status and the
	// CheckError share.
	failed := &CheckError{probes: len(outcomes), secrets: m.secrets}
	for i := range outcomes {
		o := &outcomes[i]
		if o.confirmed {
			m.confirmed[i] = true
		}
		if o.err != nil {
			pe := &ProbeError{Endpoint: m.endpoints[i].id, Err: o.err, secrets: m.secrets}
			o.err = pe
			failed.Errors = append(failed.Errors, pe)
			m.counts.failed(i, pe.Reason())
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blocklag: check abandoned, nothing published: %w", err)
	}
	s := nextSnapshot(m.current.Load(), outcomes, checked, m.rules)
	if s != nil {
		m.current.Store(s)
		m.counts.published.Add(1)
	}
	if len(failed.Errors) == 0 {
		return nil
	}
	failed.Published = s != nil
	return failed
}

// probeAll runs one probe per endpoint at once, each writing only its own
// outcome, the last on the calling goroutine, which would only wait.
func (m *Monitor) probeAll(ctx context.Context) []outcome {
	ctx, cancel := withinCheckTime(ctx)
	defer cancel()
	outcomes := make([]outcome, len(m.endpoints))
	probe := func(i int) {
		start := m.now()
		o := m.probe(ctx, m.endpoints[i], m.chainID != 0 && !m.confirmed[i])
		o.latency = m.now().Sub(start)
		outcomes[i] = o
	}
	last := len(m.endpoints) - 1
	var wg sync.WaitGroup
	for i := range last {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probe(i)
		}()
	}
	probe(last)
	wg.Wait()
	return outcomes
}

// withinCheckTime returns the context of a Check's probes: one that ends
// the margin that Check's doc states before ctx's deadline, with an
// *outOfCheckTime as its cause, so that the Check still has time to
// publish; ctx itself when it has no deadline.
func withinCheckTime(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	left := max(time.Until(deadline), 0)
	margin := min(left/10, time.Second)
	return context.WithDeadlineCause(ctx, deadline.Add(-margin), &outOfCheckTime{after: (left - margin).Round(time.Millisecond)})
}

// Eligible reports the verdict on this ID in the snapshot in force (never
// true for an ID not configured), with no I/O, lock or allocation. Two calls
// of one failnext request may read two snapshots if a Check publishes between.
func (m *Monitor) Eligible(id failnext.EndpointID) bool {
	if m == nil {
		return false
	}
	s := m.current.Load()
	return s != nil && s.eligible[id]
}
