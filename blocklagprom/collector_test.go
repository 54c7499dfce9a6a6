package blocklagprom_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

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
// check: every one of reasons at 0 for every endpoint, all of allReasons
// when none are given.
func zeroStats(st blocklag.Status, reasons ...string) blocklag.Stats {
	if len(reasons) == 0 {
		reasons = allReasons
	}
	var ss blocklag.Stats
	for _, e := range st.Endpoints {
		failures := map[blocklag.Reason]uint64{}
		for _, r := range reasons {
			failures[blocklag.Reason(r)] = 0
		}
		ss.Endpoints = append(ss.Endpoints, blocklag.EndpointStats{ID: e.ID, Failures: failures})
	}
	return ss
}

// collectCase is a Status and a Stats as a Monitor could give them, and
// the golden file, under testdata/collector, of what the collector exports
// for them.
type collectCase struct {
	name   string
	golden string
	status blocklag.Status
	stats  blocklag.Stats // when it has no endpoints, zeroStats(status) instead
}

// collectCases are the Statuses and Stats of the tests that read the
// collector's output, with every case the presence rules distinguish:
// fail-open, published with successes at 0, failures, ahead and advanced.
var collectCases = func() []collectCase {
	checked := time.Unix(1700000000, 250_000_000)
	advanced := time.Unix(1699999990, 500_000_000)
	return []collectCase{
		{
			name:   "a fail-open status exports every provider eligible and MaxLag, and nothing of a check",
			golden: "fail-open",
			status: blocklag.Status{MaxLag: 3, Endpoints: []blocklag.EndpointStatus{
				{ID: "a", Eligible: true},
				{ID: "b", Eligible: true},
			}},
		},
		{
			name:   "a published status exports height, lag, ahead, reference and MaxLag even at 0, and each probe's duration",
			golden: "published-at-zero",
			status: blocklag.Status{Checked: checked, Reference: 0, MaxLag: 0, Endpoints: []blocklag.EndpointStatus{
				{ID: "genesis", Eligible: true, Latency: 250 * time.Millisecond},
				{ID: "down", Err: failed(&blocklag.StatusError{StatusCode: 503}), Latency: 2 * time.Second},
			}},
		},
		{
			name:   "a failed provider keeps its advanced time but exports no height, lag or ahead",
			golden: "advanced-and-ahead",
			status: blocklag.Status{Checked: checked, Reference: 110, MaxLag: 5, Advanced: advanced, Endpoints: []blocklag.EndpointStatus{
				{ID: "front", Eligible: true, Height: 110, Advanced: advanced, Latency: 1500 * time.Microsecond},
				{ID: "behind", Height: 100, Lag: 10, Latency: 30 * time.Millisecond},
				{ID: "above", Height: 130, Ahead: 20, Latency: 2 * time.Millisecond},
				{ID: "down", Err: failed(&blocklag.StatusError{StatusCode: 429}), Advanced: advanced.Add(-time.Minute)},
			}},
		},
		{
			// An Err that merely wraps a ProbeError is read through, and one
			// that holds no ProbeError, which only a hand-built Status can
			// have, is classified all the same.
			name:   "each provider's failure reason is 1 for the reason it failed with and 0 for every other",
			golden: "every-reason",
			status: blocklag.Status{Checked: checked, Reference: 110, Endpoints: []blocklag.EndpointStatus{
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
		},
		{
			name:   "a reason that the Stats count is a state and a counter, and one they do not count is neither",
			golden: "reasons-from-stats",
			status: blocklag.Status{Checked: checked, Endpoints: []blocklag.EndpointStatus{
				{ID: "a", Err: failed(errors.New("reset"))},
			}},
			stats: blocklag.Stats{Endpoints: []blocklag.EndpointStats{
				{ID: "a", Failures: map[blocklag.Reason]uint64{"newer": 0, "transport": 3}},
			}},
		},
		{
			name:   "the counters are the Stats as they stand, whatever the Status says",
			golden: "counters",
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
		},
	}
}()

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

// The collector exports the Status and the Stats it reads as the golden
// files show, every gauge and counter with its help text and value.
func TestCollectorExportsTheStatusAndTheStats(t *testing.T) {
	for _, tc := range collectCases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.collector()
			assertGolden(t, registry(c), "collector/"+tc.golden)
			assertLintClean(t, c)
		})
	}
}

// statusMembers and endpointMembers name the gauges that come with each
// member of Status's JSON form. A gauge comes where the JSON shows its
// member, with two differences: ahead comes with the lag, also at 0,
// where the JSON leaves it out; and up and the failure reasons come with
// the latency, which the JSON shows for every provider once a check has
// published. endpoints, id, reason and error carry no gauge of their own.
var (
	statusMembers = map[string][]string{
		"checked":   {"blocklag_checked_timestamp_seconds"},
		"reference": {"blocklag_reference_height"},
		"max_lag":   {"blocklag_max_lag_blocks"},
		"advanced":  {"blocklag_advanced_timestamp_seconds"},
		"endpoints": nil,
	}
	endpointMembers = map[string][]string{
		"id":       nil,
		"eligible": {"blocklag_provider_eligible"},
		"height":   {"blocklag_provider_height"},
		"lag":      {"blocklag_provider_lag_blocks", "blocklag_provider_ahead_blocks"},
		"ahead":    {"blocklag_provider_ahead_blocks"},
		"latency_seconds": {
			"blocklag_provider_last_probe_duration_seconds",
			"blocklag_provider_up",
			"blocklag_provider_failure_reason",
		},
		"advanced": {"blocklag_provider_advanced_timestamp_seconds"},
		"reason":   nil,
		"error":    nil,
	}
)

// Which gauges the collector exports agrees with which members
// json.Marshal of the Status shows, as statusMembers and endpointMembers
// map them, and the one failure reason at 1 of each provider is the
// reason its JSON shows.
func TestGaugesAgreeWithTheMembersOfTheStatusJSON(t *testing.T) {
	for _, tc := range collectCases {
		t.Run(tc.name, func(t *testing.T) {
			text, err := json.Marshal(tc.status)
			if err != nil {
				t.Fatal(err)
			}
			var status map[string]json.RawMessage
			if err := json.Unmarshal(text, &status); err != nil {
				t.Fatal(err)
			}
			var endpoints []map[string]json.RawMessage
			if err := json.Unmarshal(status["endpoints"], &endpoints); err != nil {
				t.Fatal(err)
			}
			var reasons []string // the Stats' own, as the collector takes them
			for r := range tc.collectedStats().Endpoints[0].Failures {
				reasons = append(reasons, string(r))
			}

			want := map[string]float64{} // each series, with the failure reasons' values
			for member := range status {
				families, ok := statusMembers[member]
				if !ok {
					t.Fatalf("the JSON shows %q, which statusMembers does not map to gauges", member)
				}
				for _, f := range families {
					want[f+"{}"] = 0
				}
			}
			for _, e := range endpoints {
				var id, reason string
				if err := json.Unmarshal(e["id"], &id); err != nil {
					t.Fatal(err)
				}
				if r, ok := e["reason"]; ok {
					if err := json.Unmarshal(r, &reason); err != nil {
						t.Fatal(err)
					}
				}
				for member := range e {
					families, ok := endpointMembers[member]
					if !ok {
						t.Fatalf("the JSON shows %q for %s, which endpointMembers does not map to gauges", member, id)
					}
					for _, f := range families {
						if f != "blocklag_provider_failure_reason" {
							want[fmt.Sprintf("%s{provider=%q}", f, id)] = 0
							continue
						}
						for _, r := range reasons {
							want[fmt.Sprintf("%s{provider=%q,reason=%q}", f, id, r)] = oneIf(r == reason)
						}
					}
				}
			}

			got := gauges(t, registry(tc.collector()))
			gotSeries := slices.Sorted(maps.Keys(got))
			wantSeries := slices.Sorted(maps.Keys(want))
			if !slices.Equal(gotSeries, wantSeries) {
				t.Errorf("the collector exports\n%s\nwant, from the JSON %s:\n%s",
					strings.Join(gotSeries, "\n"), text, strings.Join(wantSeries, "\n"))
			}
			for series, v := range want {
				if strings.HasPrefix(series, "blocklag_provider_failure_reason{") && got[series] != v {
					t.Errorf("%s = %v, want %v: the JSON %s", series, got[series], v, text)
				}
			}
		})
	}
}

// oneIf is 1 for true and 0 for false, a yes-or-no gauge's value.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// changingMonitor gives another Status and Stats at every call, and counts
// the calls.
type changingMonitor struct{ statusCalls, statsCalls int }

func (m *changingMonitor) Status() blocklag.Status {
	m.statusCalls++
	n := uint64(m.statusCalls)
	return blocklag.Status{Checked: time.Unix(1700000000, 0), Reference: 100 * n, MaxLag: n,
		Endpoints: []blocklag.EndpointStatus{{ID: "a", Eligible: true, Height: 100 * n}}}
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
	families := gatherAll(t, registry(blocklagprom.CollectorOf(m)))
	got := seriesOf(families, dto.MetricType_GAUGE, dto.MetricType_COUNTER)
	assertSeries(t, got, map[string]float64{
		`blocklag_max_lag_blocks{}`:              1,
		`blocklag_reference_height{}`:            100,
		`blocklag_provider_height{provider="a"}`: 100,
		`blocklag_checks_total{}`:                1,
		`blocklag_checks_published_total{}`:      1,
	})
	if m.statusCalls != 1 || m.statsCalls != 1 {
		t.Errorf("one scrape read Status %d times and Stats %d times, want once each", m.statusCalls, m.statsCalls)
	}
}

// An endpoint ID that is not valid UTF-8 cannot be a label value: the
// scrape fails with an error naming the metric, and nothing panics.
func TestCollectorRefusesAnIDThatIsNoLabelValue(t *testing.T) {
	st := blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "bad\xff", Eligible: true}}}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(blocklagprom.CollectorOf(fixedMonitor{status: st, stats: zeroStats(st)}))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "blocklag_provider_eligible") {
		t.Errorf("gather error %v, want one naming blocklag_provider_eligible", err)
	}
}
