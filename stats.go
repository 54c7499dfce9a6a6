package blocklag

import (
	"sync/atomic"

	"github.com/yermakovsa/failnext"
)

// Stats counts what the Checks of one Monitor did since [New], published or
// not. Status shows only the Check in force; Stats also sees the Checks
// that publish nothing, such as those in which every provider rejects its
// key.
type Stats struct {
	// Checks counts the Checks that sent probes. A Check that gave up
	// waiting for its turn, or whose context was done before it could
	// start, sent none and is not counted.
	Checks uint64

	// Published counts those of them that published a snapshot.
	Published uint64

	// Endpoints has one entry per configured endpoint, in configured order.
	Endpoints []EndpointStats
}

// EndpointStats is one endpoint's part of a Stats.
type EndpointStats struct {
	// ID is the endpoint's configured ID.
	ID failnext.EndpointID

	// Probes counts the probes sent to the endpoint, one per counted
	// Check: a height request and the chain ID request beside it are one
	// probe.
	Probes uint64

	// Failures counts the endpoint's failed probes by [ProbeError.Reason],
	// in every counted Check, those that were abandoned included (a probe
	// that the cancellation itself cut short may or may not be counted).
	// It holds only the reasons that occurred.
	Failures map[Reason]uint64
}

// Stats returns the counts so far, as a copy the caller may keep. It never
// waits for a running Check and is safe for concurrent use. Every count
// only grows, and within one Stats, Published is at most Checks and an
// endpoint's failures add up to at most its Probes; a Check that runs
// meanwhile may be counted in part. A nil or zero Monitor returns the zero
// Stats.
func (m *Monitor) Stats() Stats {
	if m == nil || m.turn == nil {
		return Stats{}
	}
	c := &m.counts
	// Each pair is read in the opposite order to the one Check adds to it
	// in, so that the later count never runs ahead of the earlier one.
	st := Stats{Published: c.published.Load()}
	st.Checks = c.checks.Load()
	st.Endpoints = make([]EndpointStats, len(m.endpoints))
	for i := range m.endpoints {
		ec := &c.endpoints[i]
		failures := map[Reason]uint64{}
		for k := range ec.failures {
			if n := ec.failures[k].Load(); n > 0 {
				failures[reasons[k]] = n
			}
		}
		st.Endpoints[i] = EndpointStats{ID: m.endpoints[i].id, Probes: ec.probes.Load(), Failures: failures}
	}
	return st
}

// counts is what Stats reads. Only the Check holding the turn adds to it,
// and Stats reads it at any time, so every count is atomic; no lock is
// taken, so that counting costs a Check next to nothing and Stats never
// waits.
type counts struct {
	checks    atomic.Uint64
	published atomic.Uint64
	endpoints []endpointCounts // in configured order; the slice is set by New
}

type endpointCounts struct {
	probes   atomic.Uint64
	failures [len(reasons)]atomic.Uint64 // indexed as reasons lists them
}

// started counts a Check that is about to send one probe per endpoint.
func (c *counts) started() {
	c.checks.Add(1)
	for i := range c.endpoints {
		c.endpoints[i].probes.Add(1)
	}
}

// failed counts a failed probe of endpoint i.
func (c *counts) failed(i int, r Reason) {
	for k, known := range reasons {
		if known == r {
			c.endpoints[i].failures[k].Add(1)
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
