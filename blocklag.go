// Package blocklag tells which Ethereum JSON-RPC providers are lagging, so
// that a failnext transport can skip them.
//
// A [Monitor] holds a fixed set of providers. Each [Monitor.Check] asks
// every provider for eth_blockNumber at once, takes the highest height (or,
// with [Config.Quorum], the Quorum-th highest) as reference, and publishes
// a snapshot in which a provider is eligible when it answered correctly
// and is at most [Config.MaxLag] blocks behind it. [Monitor.Eligible]
// answers from that snapshot, as the Eligible field of [failnext.Config]:
//
//	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible})
//
// [Monitor.Status] shows what the snapshot in force rests on, and
// [Monitor.Stats] counts what every Check did. A probe that fails is a
// [*ProbeError], whose [ProbeError.Reason] tells a provider that refused
// us from one that is broken. The caller decides when to Check: nothing of
// blocklag's runs between Checks.
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

// Monitor compares the heights of a fixed set of providers. Make one with
// New. Its methods are safe for concurrent use.
type Monitor struct {
	// Set by New and read-only afterwards.
	endpoints    []endpoint
	maxLag       uint64
	quorum       int
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

// New validates cfg and returns a Monitor in which every configured endpoint
// is eligible until the first [Monitor.Check] publishes. It returns a nil
// Monitor and an error when cfg.Endpoints is empty, ProbeTimeout or Quorum
// is negative, an ID is empty, repeated, or holds a rune that
// [strconv.IsPrint] rejects or invalid UTF-8, or a URL begins or ends with
// white space, is not absolute http or https, does not parse, has no host,
// has a port outside 1 to 65535, or holds a '#'. Such an error names the
// endpoint by index and ID, says what to fix, and of the URL shows at most
// the scheme.
func New(cfg Config) (*Monitor, error) {
	eps, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	m := &Monitor{
		endpoints:    eps,
		secrets:      newMatcher(eps),
		maxLag:       cfg.MaxLag,
		quorum:       cfg.Quorum,
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

// Check probes every provider once, concurrently, and returns only after
// every probe it started has finished. A probe is one eth_blockNumber
// request and, while the provider has not confirmed [Config.ChainID], one
// eth_chainId request beside it.
//
// Each request is a POST through Config.Base to the URL as configured,
// with the body {"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}
// (or eth_chainId), JSON Content-Type and Accept, Accept-Encoding
// identity, a User-Agent of failnext-blocklag, and Basic auth from the
// URL's userinfo. It succeeds only on status 200 with a body of at most
// 4096 bytes as sent, as long as any Content-Length says, that is one JSON
// object with "jsonrpc" "2.0", "id" the number 1, no error but null, and a
// "result" of "0x" and at most 16 lowercase hex digits without leading
// zeros. Nothing is redirected or retried. Any other status's body is read
// under the same limits (see [StatusError]), and every body is closed when
// the probe's time is up, whatever the Base's body does.
//
// When ctx has a deadline, every probe ends a margin before it: a tenth of
// the time left when the probes start, at most a second (with a 5 s
// context, at 4.5 s). A probe ended so fails as a timeout wrapping
// [context.DeadlineExceeded], and the Check publishes what the others
// found. Without a deadline, probes last until they end or ctx does
// ([Config.ProbeTimeout] bounds each one).
//
// The outcome is exactly one of these, the first that applies:
//
//   - ctx is done when the probes have finished: the Check is abandoned,
//     publishes nothing, and returns an error that is not a [*CheckError]
//     and satisfies errors.Is(err, ctx.Err()).
//   - Every probe failed: nothing is published, and Check returns a
//     [*CheckError] holding every provider's [*ProbeError].
//   - Some failed: Check publishes, the failed providers ineligible, and
//     returns a *CheckError holding theirs.
//   - Every probe succeeded: Check publishes and returns nil.
//
// An abandoned Check's error and a *CheckError holding a timed-out probe
// both match context.DeadlineExceeded: tell them apart with [errors.As]
// and a *CheckError first. When nothing is published, the snapshot in
// force stays; a new one replaces it at once, so [Monitor.Eligible] and
// [Monitor.Status] see one or the other, never a mix.
//
// Checks run one at a time: one that waits returns ctx's error, without
// probing, as soon as ctx is done. On a nil Monitor, one not made by
// [New], or a nil ctx, Check returns an error and does nothing.
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
	s := next(m.current.Load(), outcomes, checked, m.maxLag, m.quorum)
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

// Eligible reports whether the provider with this ID may serve requests:
// every configured ID until the first [Monitor.Check] publishes, then the
// verdict of the last Check that published. An ID not configured is never
// eligible, nor is any on a nil or zero Monitor. Eligible does no I/O,
// takes no lock and allocates nothing, so it can sit on every request's
// path as the Eligible field of [failnext.Config].
//
// Each call reads the snapshot in force at that moment, so two calls (even
// two that failnext makes for one request) may answer from two snapshots
// when a Check publishes between them, and a request in flight keeps the
// answer it got before the newest one.
func (m *Monitor) Eligible(id failnext.EndpointID) bool {
	if m == nil {
		return false
	}
	s := m.current.Load()
	return s != nil && s.eligible[id]
}
