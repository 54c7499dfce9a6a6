// Package blocklag tells which Ethereum JSON-RPC providers are lagging, so
// that a failnext transport can skip them.
//
// A Monitor holds a fixed set of providers. Each call to Check asks every
// provider for eth_blockNumber at once, takes the highest height (or, with
// Quorum, the Quorum-th highest) as the reference, and publishes a snapshot
// in which a provider is eligible when it answered correctly and is at most
// MaxLag blocks behind. Eligible answers from the last published snapshot
// without I/O or locking, and has the type that failnext.Config.Eligible
// expects:
//
//	monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3})
//	...
//	transport, err := failnext.New(failnext.Config{
//		Endpoints: endpoints,
//		Eligible:  monitor.Eligible,
//	})
//
// Status shows what the snapshot in force rests on: when it was checked,
// the reference height, and each provider's height, lag, verdict and probe
// error.
//
// blocklag runs nothing in the background: the caller decides when to Check,
// and a snapshot stays in force until a later Check publishes another.
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
	client       *http.Client

	// turn holds one token while a Check runs. It is a channel rather than a
	// sync.Mutex so that a Check waiting for its turn can give up when its
	// context ends.
	turn chan struct{}

	// current is the snapshot in force. New stores the fail-open one; after
	// that only the Check holding turn stores. Eligible and Status load it at
	// any time, and never see a snapshot change once loaded.
	current atomic.Pointer[snapshot]
}

// New validates cfg and returns a Monitor in which every configured endpoint
// is eligible until the first Check publishes. It returns an error naming the
// offending endpoint by index and ID, never quoting its URL, when there are
// no endpoints, an ID is empty or repeated, or a URL is not an absolute http
// or https URL with a host and without a fragment.
func New(cfg Config) (*Monitor, error) {
	eps, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	base := cfg.Base
	if base == nil {
		base = http.DefaultTransport
	}
	m := &Monitor{
		endpoints:    eps,
		maxLag:       cfg.MaxLag,
		quorum:       cfg.Quorum,
		probeTimeout: cfg.ProbeTimeout,
		client: &http.Client{
			Transport: base,
			// A provider that redirects fails its probe: return the
			// 3xx answer itself instead of following it.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		turn: make(chan struct{}, 1),
	}
	m.current.Store(failOpen(eps))
	return m, nil
}

// ProbeError reports why one provider's probe failed. Every per-provider
// failure that Check returns is a *ProbeError; its message names the
// endpoint's ID and never contains the endpoint's URL.
type ProbeError struct {
	// Endpoint is the ID of the provider whose probe failed.
	Endpoint failnext.EndpointID
	// Err says why: a transport error, a timeout, an unexpected status, or
	// an answer that is not a valid eth_blockNumber result.
	Err error
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("blocklag: endpoint %q: %v", e.Endpoint, e.Err)
}

// Unwrap returns the reason the probe failed.
func (e *ProbeError) Unwrap() error { return e.Err }

var errNotNew = errors.New("blocklag: Monitor was not made by New")

// Check probes every provider concurrently and, when at least one answered,
// publishes a new snapshot. It returns nil when every probe succeeded, and
// otherwise the failed probes' *ProbeError values joined with errors.Join,
// whether or not it published.
//
// The previous snapshot stays in force when every probe failed, and when ctx
// is done by the time the probes have finished; in the latter case the error
// satisfies errors.Is(err, ctx.Err()). Checks run one at a time: a Check that
// waits for another returns ctx's error as soon as ctx is done, without
// probing. Check returns only after every probe it started has finished.
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

	outcomes := m.probeAll(ctx)
	checked := time.Now()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blocklag: check abandoned, previous snapshot kept: %w", err)
	}
	if s := compare(m.endpoints, outcomes, m.maxLag, m.quorum, checked); s != nil {
		m.current.Store(s)
	}
	var errs []error
	for _, o := range outcomes {
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	return errors.Join(errs...)
}

// probeAll runs one probe per endpoint, all at once, and waits for them.
// Each goroutine writes only its own element of the result.
func (m *Monitor) probeAll(ctx context.Context) []outcome {
	outcomes := make([]outcome, len(m.endpoints))
	var wg sync.WaitGroup
	for i, ep := range m.endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			height, err := m.probe(ctx, ep)
			if err != nil {
				outcomes[i].err = &ProbeError{Endpoint: ep.id, Err: err}
			}
			outcomes[i].height = height
		}()
	}
	wg.Wait()
	return outcomes
}

// Eligible reports whether the provider with this ID may serve requests,
// according to the snapshot in force: every configured ID until the first
// Check publishes, then that Check's verdict. An ID that is not configured is
// never eligible. Eligible does no I/O, takes no lock and allocates nothing,
// so it can sit on every request's path as failnext.Config.Eligible.
func (m *Monitor) Eligible(id failnext.EndpointID) bool {
	if m == nil {
		return false
	}
	s := m.current.Load()
	return s != nil && s.eligible[id]
}
