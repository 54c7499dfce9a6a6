package blocklag

import (
	"log/slog"
	"sync/atomic"

	"github.com/yermakovsa/failnext"
)

// Stats counts what a Monitor's Checks did, published or not: failures that
// published nothing show here, not in Status. Its names are Status's.
type Stats struct {
	Checks    uint64          `json:"checks"`    // Checks that sent probes, one to each endpoint
	Published uint64          `json:"published"` // of those, the ones that published
	Endpoints []EndpointStats `json:"endpoints"` // in configured order
}

// EndpointStats is one endpoint's part of a Stats.
type EndpointStats struct {
	ID       failnext.EndpointID `json:"id"`
	Failures map[Reason]uint64   `json:"failures"` // its failed probes by Reason, every Reason from 0
}

// Stats returns the counts so far as a copy, never waiting for a Check.
func (m *Monitor) Stats() Stats {
	if m == nil || m.turn == nil {
		return Stats{}
	}
	c := &m.counts
	// Published before Checks, and failures before Checks, the opposite
	// of the order in which a Check adds to them, so that no count runs
	// ahead of Checks.
	st := Stats{Published: c.published.Load(), Endpoints: make([]EndpointStats, len(m.endpoints))}
	for i := range m.endpoints {
		failures := make(map[Reason]uint64, len(reasons))
		for k, r := range reasons {
			failures[r] = c.failures[i][k].Load()
		}
		st.Endpoints[i] = EndpointStats{ID: m.endpoints[i].id, Failures: failures}
	}
	st.Checks = c.checks.Load()
	return st
}

// LogValue logs the JSON members, the endpoints as groups keyed by ID.
func (s Stats) LogValue() slog.Value {
	eps := make([]slog.Attr, len(s.Endpoints))
	for i, e := range s.Endpoints {
		failures := make([]slog.Attr, 0, len(e.Failures))
		for _, r := range reasons {
			if n, ok := e.Failures[r]; ok {
				failures = append(failures, slog.Uint64(string(r), n))
			}
		}
		eps[i] = slog.Attr{Key: string(e.ID), Value: slog.GroupValue(slog.Attr{Key: "failures", Value: slog.GroupValue(failures...)})}
	}
	return slog.GroupValue(slog.Uint64("checks", s.Checks), slog.Uint64("published", s.Published),
		slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)})
}

// counts is what Stats reads. Only the Check holding the turn adds to it
// and Stats reads it at any time, so every count is atomic: no lock, so
// that counting costs next to nothing and Stats never waits.
type counts struct {
	checks    atomic.Uint64
	published atomic.Uint64
	failures  [][len(reasons)]atomic.Uint64 // per endpoint, indexed as reasons lists them; the slice is set by New
}

// failed counts a failed probe of endpoint i.
func (c *counts) failed(i int, r Reason) {
	for k, known := range reasons {
		if known == r {
			c.failures[i][k].Add(1)
			return
		}
	}
}

// reasons lists every Reason, in the order Reason lists them, to index the
// failure counts.
var reasons = [...]Reason{
	ReasonRateLimited, ReasonUnauthorized, ReasonHTTPStatus, ReasonRPCError,
	ReasonWrongChain, ReasonBadAnswer, ReasonTimeout, ReasonTransport,
}
