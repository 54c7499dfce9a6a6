package blocklagprom_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// The tests of the collector over a Status and a Stats built by hand.

// fixedMonitor answers the collector with a Status and a Stats built by
// hand, so that a test can set every field as it likes.
type fixedMonitor struct {
	status blocklag.Status
	stats  blocklag.Stats
}

func (m fixedMonitor) Status() blocklag.Status { return m.status }
func (m fixedMonitor) Stats() blocklag.Stats   { return m.stats }

// failed is the error of a probe that failed because of err. The label
// comes from the EndpointStatus's ID, so the ProbeError's is left empty.
func failed(err error) error { return &blocklag.ProbeError{Err: err} }

// zeroStats is the Stats of a Monitor over st's endpoints before its first
// check: every one of allReasons at 0 for every endpoint.
func zeroStats(st blocklag.Status) blocklag.Stats {
	var ss blocklag.Stats
	for _, e := range st.Endpoints {
		failures := map[blocklag.Reason]uint64{}
		for _, r := range allReasons {
			failures[blocklag.Reason(r)] = 0
		}
		ss.Endpoints = append(ss.Endpoints, blocklag.EndpointStats{ID: e.ID, Failures: failures})
	}
	return ss
}

// collectCase is a Status and a Stats as a Monitor could give them, and
// what the collector exports for them of the metric families the case is
// about.
type collectCase struct {
	name   string
	status blocklag.Status
	stats  blocklag.Stats // when it has no endpoints, zeroStats(status) instead
	// want is every series of the families it names, as
	// name{label="value",...} value; the other families are not compared.
	want []string
	// golden, set on one case only, names the file under testdata that
	// holds the case's whole exposition: every family, with its help text
	// and type.
	golden string
}

// The times of the published checks in collectCases.
var (
	checkedAt  = time.Unix(1700000000, 250_000_000)
	advancedAt = time.Unix(1699999990, 500_000_000)
)

// collectCases are the Statuses and Stats of the tests that read the
// collector's output, with every case the presence rules distinguish:
// fail-open, published with successes at 0, failures, ahead and advanced.
var collectCases = []collectCase{
	{
		name: "a fail-open status exports every provider eligible and MaxLag, and nothing of a check",
		status: blocklag.Status{MaxLag: 3, Endpoints: []blocklag.EndpointStatus{
			{ID: "a", Eligible: true},
			{ID: "b", Eligible: true},
		}},
		want: []string{
			`blocklag_provider_eligible{provider="a"} 1`,
			`blocklag_provider_eligible{provider="b"} 1`,
			`blocklag_max_lag_blocks{} 3`,
		},
	},
	{
		name: "a published status exports height, lag, ahead, reference and MaxLag even at 0, " +
			"and each probe's duration",
		status: blocklag.Status{
			Checked:   checkedAt,
			Reference: 0,
			MaxLag:    0,
			Endpoints: []blocklag.EndpointStatus{
				{ID: "genesis", Eligible: true, Latency: 250 * time.Millisecond},
				{ID: "down", Err: failed(&blocklag.StatusError{StatusCode: 503}), Latency: 2 * time.Second},
			},
		},
		want: []string{
			`blocklag_provider_height{provider="genesis"} 0`,
			`blocklag_provider_lag_blocks{provider="genesis"} 0`,
			`blocklag_provider_ahead_blocks{provider="genesis"} 0`,
			`blocklag_reference_height{} 0`,
			`blocklag_max_lag_blocks{} 0`,
			`blocklag_checked_timestamp_seconds{} 1.70000000025e+09`,
			`blocklag_provider_last_probe_duration_seconds{provider="down"} 2`,
			`blocklag_provider_last_probe_duration_seconds{provider="genesis"} 0.25`,
		},
	},
	{
		name: "a failed provider keeps its advanced time but exports no height, lag or ahead, " +
			"and one above the reference exports its lead",
		status: blocklag.Status{
			Checked:   checkedAt,
			Reference: 110,
			MaxLag:    5,
			MaxAhead:  10,
			Advanced:  advancedAt,
			Endpoints: []blocklag.EndpointStatus{
				{
					ID:       "front",
					Eligible: true,
					Height:   110,
					Advanced: advancedAt,
					Latency:  1500 * time.Microsecond,
				},
				{ID: "behind", Height: 100, Lag: 10, Latency: 30 * time.Millisecond},
				{ID: "above", Height: 130, Ahead: 20, Latency: 2 * time.Millisecond},
				{
					ID:       "down",
					Err:      failed(&blocklag.StatusError{StatusCode: 429}),
					Advanced: advancedAt.Add(-time.Minute),
				},
			},
		},
		want: []string{
			`blocklag_provider_up{provider="above"} 1`,
			`blocklag_provider_up{provider="behind"} 1`,
			`blocklag_provider_up{provider="down"} 0`,
			`blocklag_provider_up{provider="front"} 1`,
			`blocklag_provider_height{provider="above"} 130`,
			`blocklag_provider_height{provider="behind"} 100`,
			`blocklag_provider_height{provider="front"} 110`,
			`blocklag_provider_lag_blocks{provider="above"} 0`,
			`blocklag_provider_lag_blocks{provider="behind"} 10`,
			`blocklag_provider_lag_blocks{provider="front"} 0`,
			`blocklag_provider_ahead_blocks{provider="above"} 20`,
			`blocklag_provider_ahead_blocks{provider="behind"} 0`,
			`blocklag_provider_ahead_blocks{provider="front"} 0`,
			`blocklag_provider_advanced_timestamp_seconds{provider="down"} 1.6999999305e+09`,
			`blocklag_provider_advanced_timestamp_seconds{provider="front"} 1.6999999905e+09`,
			`blocklag_advanced_timestamp_seconds{} 1.6999999905e+09`,
		},
		golden: "collector",
	},
	{
		// An Err that merely wraps a ProbeError is read through, and one
		// that holds no ProbeError, which only a hand-built Status can
		// have, is classified all the same.
		name: "each provider's failure reason is 1 for the reason it failed with and 0 for every other",
		status: blocklag.Status{Checked: checkedAt, Reference: 110, Endpoints: []blocklag.EndpointStatus{
			{ID: "ok", Eligible: true, Height: 110},
			{ID: "http429", Err: failed(&blocklag.StatusError{StatusCode: 429})},
			{ID: "rpc32005", Err: failed(&blocklag.RPCError{Code: -32005, Message: "limit exceeded"})},
			{ID: "http403", Err: failed(&blocklag.StatusError{StatusCode: 403})},
			{ID: "http503", Err: failed(&blocklag.StatusError{StatusCode: 503})},
			{ID: "rpc32000", Err: failed(&blocklag.RPCError{Code: -32000})},
			{ID: "chain", Err: failed(&blocklag.ChainIDError{Got: 11155111, Want: 1})},
			{ID: "bad", Err: failed(fmt.Errorf("answer id is null: %w", blocklag.ErrBadAnswer))},
			{ID: "slow", Err: failed(fmt.Errorf("timed out: %w", context.DeadlineExceeded))},
			{ID: "reset", Err: failed(errors.New("connection reset"))},
			{ID: "wrapped", Err: fmt.Errorf("seen: %w", failed(&blocklag.StatusError{StatusCode: 401}))},
			{ID: "plain", Err: errors.New("not a probe error")},
			{ID: "bare429", Err: &blocklag.StatusError{StatusCode: 429}},
		}},
		want: slices.Concat(
			reasonStates("ok", ""),
			reasonStates("http429", "rate_limited"),
			reasonStates("rpc32005", "rate_limited"),
			reasonStates("http403", "unauthorized"),
			reasonStates("http503", "http_status"),
			reasonStates("rpc32000", "rpc_error"),
			reasonStates("chain", "wrong_chain"),
			reasonStates("bad", "bad_answer"),
			reasonStates("slow", "timeout"),
			reasonStates("reset", "transport"),
			reasonStates("wrapped", "unauthorized"),
			reasonStates("plain", "transport"),
			reasonStates("bare429", "rate_limited"),
		),
	},
	{
		name: "a reason that the Stats count is a state and a counter, and one they do not count is neither",
		status: blocklag.Status{Checked: checkedAt, Endpoints: []blocklag.EndpointStatus{
			{ID: "a", Err: failed(errors.New("reset"))},
		}},
		stats: blocklag.Stats{Endpoints: []blocklag.EndpointStats{
			{ID: "a", Failures: map[blocklag.Reason]uint64{"newer": 0, "transport": 3}},
		}},
		want: []string{
			`blocklag_provider_failure_reason{provider="a",reason="newer"} 0`,
			`blocklag_provider_failure_reason{provider="a",reason="transport"} 1`,
			`blocklag_provider_probe_failures_total{provider="a",reason="newer"} 0`,
			`blocklag_provider_probe_failures_total{provider="a",reason="transport"} 3`,
		},
	},
	{
		name: "the counters are the Stats as they stand, whatever the Status says",
		status: blocklag.Status{MaxLag: 3, Endpoints: []blocklag.EndpointStatus{
			{ID: "a", Eligible: true},
			{ID: "b", Eligible: true},
		}},
		stats: func() blocklag.Stats {
			ss := zeroStats(blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "a"}, {ID: "b"}}})
			ss.Checks = 7
			ss.Published = 5
			ss.Endpoints[0].Failures[blocklag.ReasonUnauthorized] = 2
			ss.Endpoints[0].Failures[blocklag.ReasonTimeout] = 1
			return ss
		}(),
		want: slices.Concat(
			[]string{
				`blocklag_checks_total{} 7`,
				`blocklag_checks_published_total{} 5`,
			},
			failureCounts("a", map[string]int{"unauthorized": 2, "timeout": 1}),
			failureCounts("b", nil),
		),
	},
}

// collectedStats is the Stats the collector reads in tc: zeroStats of its
// Status unless tc sets its own.
func (tc collectCase) collectedStats() blocklag.Stats {
	if tc.stats.Endpoints == nil {
		return zeroStats(tc.status)
	}
	return tc.stats
}

// collector is the collector over tc's Status and Stats.
func (tc collectCase) collector() prometheus.Collector {
	return blocklagprom.CollectorOf(fixedMonitor{status: tc.status, stats: tc.collectedStats()})
}

// The collector exports the Status and the Stats it reads: each case
// compares the families it is about, and one case its whole exposition,
// every family with its help text and type, with a golden file.
func TestCollectorExportsTheStatusAndTheStats(t *testing.T) {
	for _, tc := range collectCases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.collector()
			reg := registry(c)
			assertExports(t, reg, tc.want)
			if tc.golden != "" {
				assertEveryFamily(t, reg)
				assertGolden(t, reg, tc.golden)
			}
			assertLintClean(t, c)
		})
	}
}

// Which gauges the collector exports agrees with which members
// json.Marshal of the Status shows, and the one failure reason at 1 of
// each provider is the reason its JSON shows.
func TestGaugesAgreeWithTheMembersOfTheStatusJSON(t *testing.T) {
	for _, tc := range collectCases {
		t.Run(tc.name, func(t *testing.T) {
			reasons := reasonsOf(tc.collectedStats())
			assertGaugesFollowTheJSON(t, registry(tc.collector()), tc.status, reasons)
		})
	}
}

// changingMonitor gives another Status and Stats at every call, and counts
// the calls.
type changingMonitor struct {
	statusCalls int
	statsCalls  int
}

func (m *changingMonitor) Status() blocklag.Status {
	m.statusCalls++
	n := uint64(m.statusCalls)
	return blocklag.Status{
		Checked:   time.Unix(1700000000, 0),
		Reference: 100 * n,
		MaxLag:    n,
		Endpoints: []blocklag.EndpointStatus{{ID: "a", Eligible: true, Height: 100 * n}},
	}
}

func (m *changingMonitor) Stats() blocklag.Stats {
	m.statsCalls++
	n := uint64(m.statsCalls)
	st := blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "a"}}}
	ss := zeroStats(st)
	ss.Checks = n
	ss.Published = n
	return ss
}

// One Collect reads the Status once and the Stats once, so that all its
// gauges come from one snapshot and all its counters from one count.
func TestCollectReadsStatusOnceAndStatsOnce(t *testing.T) {
	m := &changingMonitor{}
	assertExports(t, registry(blocklagprom.CollectorOf(m)), []string{
		`blocklag_max_lag_blocks{} 1`,
		`blocklag_reference_height{} 100`,
		`blocklag_provider_height{provider="a"} 100`,
		`blocklag_checks_total{} 1`,
		`blocklag_checks_published_total{} 1`,
	})
	if m.statusCalls != 1 || m.statsCalls != 1 {
		t.Errorf("one scrape read Status %d times and Stats %d times, want once each",
			m.statusCalls, m.statsCalls)
	}
}

// An endpoint ID that is not valid UTF-8 cannot be a label value: the
// scrape fails with an error naming the metric, and nothing panics.
func TestCollectorRefusesAnIDThatIsNoLabelValue(t *testing.T) {
	st := blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "bad\xff", Eligible: true}}}
	reg := registry(blocklagprom.CollectorOf(fixedMonitor{status: st, stats: zeroStats(st)}))
	_, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), "blocklag_provider_eligible") {
		t.Errorf("gather error %v, want one naming blocklag_provider_eligible", err)
	}
}
