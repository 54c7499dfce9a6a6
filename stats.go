package blocklag

import (
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/yermakovsa/failnext"
)

// Stats counts what a Monitor's Checks did, published or not: failures that
// published nothing show here, not in Status. Its JSON and slog forms use
// the same snake_case names as Status's.
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
	if m == nil || m.running == nil {
		return Stats{}
	}
	c := &m.counts
	// Published before Checks, and failures before Checks, the opposite
	// of the order in which a Check adds to them, so that no count runs
	// ahead of Checks.
	st := Stats{Published: c.published.Load()}
	st.Endpoints = make([]EndpointStats, len(m.endpoints))
	for i := range m.endpoints {
		failures := make(map[Reason]uint64, len(reasonRules))
		for k, rule := range reasonRules {
			failures[rule.reason] = c.failures[i][k].Load()
		}
		st.Endpoints[i] = EndpointStats{ID: m.endpoints[i].id, Failures: failures}
	}
	st.Checks = c.checks.Load()
	return st
}

// LogValue logs the JSON form's members, each endpoint a group keyed by ID.
func (s Stats) LogValue() slog.Value {
	eps := make([]slog.Attr, len(s.Endpoints))
	for i, e := range s.Endpoints {
		failures := make([]slog.Attr, 0, len(e.Failures))
		// In the JSON form's order, which sorts a map's keys.
		for _, r := range slices.Sorted(maps.Keys(e.Failures)) {
			failures = append(failures, slog.Uint64(string(r), e.Failures[r]))
		}
		group := slog.GroupValue(slog.Attr{Key: "failures", Value: slog.GroupValue(failures...)})
		eps[i] = slog.Attr{Key: string(e.ID), Value: group}
	}
	return slog.GroupValue(
		slog.Uint64("checks", s.Checks),
		slog.Uint64("published", s.Published),
		slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)},
	)
}

// counts is what Stats reads. Only the Check holding running adds to it and
// Stats reads it at any time, so every count is atomic: no lock, so that
// counting costs next to nothing and Stats never waits.
type counts struct {
	checks    atomic.Uint64
	published atomic.Uint64
	// failures[i][k] counts endpoint i's failures whose Reason is
	// reasonRules[k]'s. New makes both slices; their lengths never change.
	failures [][]atomic.Uint64
}

// newCounts returns the counts of n endpoints, every one at 0.
func newCounts(n int) counts {
	failures := make([][]atomic.Uint64, n)
	for i := range failures {
		failures[i] = make([]atomic.Uint64, len(reasonRules))
	}
	return counts{failures: failures}
}

// failed counts a failure of endpoint i whose Reason is reasonRules[k]'s.
func (c *counts) failed(i, k int) {
	c.failures[i][k].Add(1)
}
