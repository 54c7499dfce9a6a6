// Package blocklag tells which Ethereum JSON-RPC providers lag behind the
// others, so that a failnext transport can skip them.
//
// [Monitor.Check] asks every provider for its latest block and takes the
// highest height as the reference ([Config.Quorum] can change that). A
// provider is eligible when it answered and is at most [Config.MaxLag]
// blocks below the reference. [Monitor.Eligible] answers from the verdicts
// that the last Check published, and plugs into failnext as it is:
//
//	transport, err := failnext.New(failnext.Config{Endpoints: endpoints,
//		Eligible: monitor.Eligible, Base: blocklag.OwnCredentials(nil)})
//
// Without [OwnCredentials], a provider's password could reach the next
// provider when the first fails over.
//
// Until a Check publishes, every provider is eligible. [Monitor.Status]
// shows what the verdicts rest on, and [Monitor.Stats] what every Check did.
//
// # Probes
//
// A probe POSTs {"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}
// through [Config.Base] to the URL exactly as configured, with Content-Type
// and Accept application/json, Accept-Encoding identity, a User-Agent of
// failnext-blocklag (failnext-blocklag/v0.1.0 when the build records the
// module's version) and Basic auth from the URL's user name and password.
// With [Config.ChainID] set, it also asks eth_chainId until the provider
// confirms the chain. The answer must have status 200, at most 4096 bytes
// (as many as its Content-Length says) and one JSON object with "jsonrpc"
// "2.0", "id" 1, no error, and a "result" of "0x" and 1 to 16 lowercase hex
// digits without a leading zero. No redirect is followed and nothing is
// retried. When the Check's context has a deadline, probes end a tenth of
// the time left before it, at most a second, so that the Check can publish.
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
	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// Monitor compares the heights of a fixed set of providers. Its methods are
// safe for concurrent use. On a Monitor not made by [New] they do nothing.
type Monitor struct {
	// Set by New and read-only afterwards.
	endpoints    []endpoint
	rules        rules
	probeTimeout time.Duration
	chainID      uint64
	base         http.RoundTripper // Config.Base, or http.DefaultTransport
	redactor     *redact.Redactor  // every endpoint's secrets, redacted in every endpoint's messages

	// running holds one token while a Check runs: a channel rather than a
	// sync.Mutex, so that a Check waiting for its turn can give up.
	running chan struct{}
	// confirmed[i] is set once endpoint i has answered eth_chainId with
	// chainID. Only the Check holding running uses it: probeAll reads it
	// as it starts each probe, and Check writes it once all have ended.
	confirmed []bool
	// current is the snapshot in force. New stores the fail-open one, then
	// only the Check holding running stores; Eligible and Status load it at
	// any time, and a loaded snapshot never changes.
	current atomic.Pointer[snapshot]
	// now stamps Checks and times probes: time.Now, which tests replace
	// before they Check.
	now func() time.Time
	// counts is what Stats reports: the Check holding running adds to it,
	// and Stats reads it at any time.
	counts counts
}

// New returns a fail-open Monitor for cfg. An invalid cfg is refused with
// an error that names the endpoint at fault and says what to change; of a
// URL it shows no more than the scheme.
func New(cfg Config) (*Monitor, error) {
	urls := make([]string, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		urls[i] = ep.URL
	}
	redactor := redact.New(urls)
	eps, err := cfg.validate()
	if err != nil {
		return nil, errors.New(redactor.Message(err.Error()))
	}
	m := &Monitor{
		endpoints:    eps,
		redactor:     redactor,
		rules:        rules{maxLag: cfg.MaxLag, maxAhead: cfg.MaxAhead, quorum: cfg.Quorum},
		probeTimeout: cfg.ProbeTimeout,
		chainID:      cfg.ChainID,
		base:         cfg.Base,
		running:      make(chan struct{}, 1),
		confirmed:    make([]bool, len(eps)),
		now:          time.Now,
		counts:       newCounts(len(eps)),
	}
	if m.base == nil {
		m.base = http.DefaultTransport
	}
	m.current.Store(failOpen(eps, m.rules))
	return m, nil
}

var errNotNew = errors.New("blocklag: Monitor was not made by New")

// Check probes every provider at once and, once all probes have ended:
//
//   - ctx is done: it publishes nothing and returns an error that matches
//     ctx's error with [errors.Is]: ctx.Err() itself when ctx ended before
//     the probes began, wrapped when it ended while they ran;
//   - every probe failed: it publishes nothing; a *CheckError holds them all;
//   - some failed: it publishes, those ineligible; a *CheckError holds theirs;
//   - none failed: it publishes and returns nil.
//
// Only the first case returns an error that is not a *CheckError. A
// *CheckError with a timed-out probe matches context.DeadlineExceeded too,
// so try [errors.As] first. Checks run one at a time; one waiting for its
// turn gives up when ctx ends.
func (m *Monitor) Check(ctx context.Context) error {
	if m == nil || m.running == nil {
		return errNotNew
	}
	if ctx == nil {
		return errors.New("blocklag: nil context")
	}
	select {
	case m.running <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.running }()
	if err := ctx.Err(); err != nil { // both cases were ready and select chose the turn
		return err
	}

	m.counts.checks.Add(1)
	outcomes := m.probeAll(ctx)
	checked := m.now()
	// Each failure becomes one *ProbeError, which Status and the
	// CheckError share.
	failed := &CheckError{probes: len(outcomes)}
	for i := range outcomes {
		o := &outcomes[i]
		if o.confirmed {
			m.confirmed[i] = true
		}
		if o.err != nil {
			pe := &ProbeError{Endpoint: m.endpoints[i].id, Err: o.err}
			pe.msg = m.redactor.Message(pe.format(o.err.Error()))
			o.err = pe
			failed.Errors = append(failed.Errors, pe)
			m.counts.failed(i, reasonIndex(pe.Err))
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
	failed.msg = m.redactor.Message(failed.format())
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

// withinCheckTime returns the context of a Check's probes. When ctx has a
// deadline, it ends a margin before it, a tenth of the time left and at most
// a second, with an *outOfCheckTime as its cause, so that the Check still
// has time to publish what its probes found. Without a deadline it is ctx.
func withinCheckTime(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	left := max(time.Until(deadline), 0)
	margin := min(left/10, time.Second)
	cause := &outOfCheckTime{after: (left - margin).Round(time.Millisecond)}
	return context.WithDeadlineCause(ctx, deadline.Add(-margin), cause)
}

// Eligible reports the verdict on id in the snapshot in force, and false for
// an ID not configured. It does no I/O, takes no lock and allocates nothing.
// Two calls, even within one failnext request, may read two snapshots when a
// Check publishes between them.
func (m *Monitor) Eligible(id failnext.EndpointID) bool {
	if m == nil {
		return false
	}
	s := m.current.Load()
	return s != nil && s.eligible[id]
}
