package blocklagprom

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
	"github.com/prometheus/client_golang/prometheus/testutil"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// fixedMonitor answers the collector with a Status and a Stats built by
// hand, so that a test can set every field as it likes and export them
// through the collector as a Monitor's.
type fixedMonitor struct {
	status blocklag.Status
	stats  blocklag.Stats
}

func (m fixedMonitor) Status() blocklag.Status { return m.status }
func (m fixedMonitor) Stats() blocklag.Stats   { return m.stats }

// failed is the error of a probe that failed because of err. The label
// comes from the EndpointStatus's ID, so the ProbeError's is left empty.
func failed(err error) error { return &blocklag.ProbeError{Err: err} }

// EightReasons is every reason a probe can fail for, in sorted order,
// written out here as the oracle, apart from the Stats the collector reads
// them from. It and StateSet are exported for the package's external tests.
var EightReasons = []blocklag.Reason{"bad_answer", "http_status", "rate_limited", "rpc_error", "timeout", "transport", "unauthorized", "wrong_chain"}

// statsOf is the Stats that a Monitor over st's endpoints gives before its
// first failure: every reason, at 0, for every endpoint.
func statsOf(st blocklag.Status, reasons ...blocklag.Reason) blocklag.Stats {
	var ss blocklag.Stats
	for _, e := range st.Endpoints {
		failures := map[blocklag.Reason]uint64{}
		for _, r := range reasons {
			failures[r] = 0
		}
		ss.Endpoints = append(ss.Endpoints, blocklag.EndpointStats{ID: e.ID, Failures: failures})
	}
	return ss
}

// StateSet is the exposition of blocklag_provider_failure_reason for the
// providers of failed, in sorted order, over reasons: 1 for the reason
// each failed with, 0 for the others ("" for one that succeeded).
func StateSet(failed map[string]blocklag.Reason, reasons []blocklag.Reason) string {
	out := failureReasonHead
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		for _, r := range reasons {
			v := 0
			if failed[id] == r {
				v = 1
			}
			out += fmt.Sprintf("blocklag_provider_failure_reason{provider=%q,reason=%q} %d\n", id, r, v)
		}
	}
	return out
}

// The failure reasons are a state set: for every provider in the check in
// force, every reason, 1 for the Reason of its ProbeError and 0 for the
// others, all 0 when it answered. An Err that merely wraps a ProbeError is
// read through, and one that holds no ProbeError, which only a hand-built
// Status can have, counts as a transport failure: the reasons that the
// Status's JSON shows.
func TestFailureReasonIsAStateSetOfEveryReason(t *testing.T) {
	st := blocklag.Status{
		Checked:   time.Unix(1700000000, 0),
		Reference: 110,
		Endpoints: []blocklag.EndpointStatus{
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
		},
	}
	want := map[string]blocklag.Reason{
		"ok": "", "http429": "rate_limited", "rpc32005": "rate_limited", "http403": "unauthorized",
		"http503": "http_status", "rpc32000": "rpc_error", "chain": "wrong_chain", "bad": "bad_answer",
		"slow": "timeout", "reset": "transport", "wrapped": "unauthorized", "plain": "transport", "bare429": "rate_limited",
	}
	c := collector{monitor: fixedMonitor{status: st, stats: statsOf(st, EightReasons...)}}
	if err := testutil.CollectAndCompare(c, strings.NewReader(StateSet(want, EightReasons)), "blocklag_provider_failure_reason"); err != nil {
		t.Error(err)
	}
	assertLint(t, c)

	text, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct{ Endpoints []struct{ ID, Reason string } }
	if err := json.Unmarshal(text, &shown); err != nil {
		t.Fatal(err)
	}
	for _, e := range shown.Endpoints {
		if blocklag.Reason(e.Reason) != want[e.ID] {
			t.Errorf("the Status's JSON shows %s failing as %q, but the metric was pinned as %q", e.ID, e.Reason, want[e.ID])
		}
	}
}

// The collector takes the reasons from Stats, keeping no list of its own:
// a reason that Stats counts is a counter and a state of the set, and one
// it does not count is neither.
func TestReasonsComeFromTheStats(t *testing.T) {
	st := blocklag.Status{Checked: time.Unix(1700000000, 0), Endpoints: []blocklag.EndpointStatus{
		{ID: "a", Err: failed(errors.New("reset"))},
	}}
	reasons := []blocklag.Reason{"newer", "transport"}
	c := collector{monitor: fixedMonitor{status: st, stats: statsOf(st, reasons...)}}
	want := StateSet(map[string]blocklag.Reason{"a": "transport"}, reasons) + `# HELP blocklag_provider_probe_failures_total Failed probes of the provider, by the reason ProbeError.Reason names, in every check.
# TYPE blocklag_provider_probe_failures_total counter
blocklag_provider_probe_failures_total{provider="a",reason="newer"} 0
blocklag_provider_probe_failures_total{provider="a",reason="transport"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "blocklag_provider_failure_reason", "blocklag_provider_probe_failures_total"); err != nil {
		t.Error(err)
	}
}

// assertLint fails t when testutil.CollectAndLint finds a problem in what c
// collects.
func assertLint(t *testing.T, c prometheus.Collector) {
	t.Helper()
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// What is exported follows the presence rules of Status's JSON form, but
// for ahead, which the JSON leaves out at 0 and a gauge keeps beside the
// lag: eligibility and MaxLag always, even when MaxLag is 0; up, each
// probe's duration, the reference height and the checked time once a
// check has published, the reference even when it is 0; height, lag and
// ahead only for a provider that answered, even when they are 0, and a
// reason only for one that did not; each advanced time only when it is
// set. A Status without endpoints, which only a Monitor that New did not
// make has, exports nothing at all, counters included.
func TestCollectorPresenceFollowsTheStatus(t *testing.T) {
	checked := time.Unix(1700000000, 250_000_000)
	advanced := time.Unix(1699999990, 500_000_000)
	tests := []struct {
		name   string
		status blocklag.Status
		want   string
	}{
		{
			name:   "a status without endpoints exports nothing",
			status: blocklag.Status{MaxLag: 3},
			want:   ``,
		},
		{
			name: "a fail-open status exports only eligibility and MaxLag",
			status: blocklag.Status{MaxLag: 3, Endpoints: []blocklag.EndpointStatus{
				{ID: "a", Eligible: true},
				{ID: "b", Eligible: true},
			}},
			want: `# HELP blocklag_max_lag_blocks Most blocks a provider may lag behind the reference height and stay eligible, per Config.MaxLag.
# TYPE blocklag_max_lag_blocks gauge
blocklag_max_lag_blocks 3
# HELP blocklag_provider_eligible Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.
# TYPE blocklag_provider_eligible gauge
blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 1
`,
		},
		{
			name: "a published status exports height, lag and MaxLag at 0, each probe's duration, and leaves out the advanced times that are not set",
			status: blocklag.Status{Checked: checked, Reference: 0, MaxLag: 0, Endpoints: []blocklag.EndpointStatus{
				{ID: "genesis", Eligible: true, Latency: 250 * time.Millisecond},
				{ID: "down", Err: failed(&blocklag.StatusError{StatusCode: 503}), Latency: 2 * time.Second},
			}},
			want: `# HELP blocklag_checked_timestamp_seconds Unix time when the latest published check finished probing, per Status.Checked.
# TYPE blocklag_checked_timestamp_seconds gauge
blocklag_checked_timestamp_seconds 1.70000000025e+09
# HELP blocklag_max_lag_blocks Most blocks a provider may lag behind the reference height and stay eligible, per Config.MaxLag.
# TYPE blocklag_max_lag_blocks gauge
blocklag_max_lag_blocks 0
# HELP blocklag_provider_ahead_blocks Blocks the provider was above the reference height in the latest published check.
# TYPE blocklag_provider_ahead_blocks gauge
blocklag_provider_ahead_blocks{provider="genesis"} 0
# HELP blocklag_provider_eligible Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.
# TYPE blocklag_provider_eligible gauge
blocklag_provider_eligible{provider="down"} 0
blocklag_provider_eligible{provider="genesis"} 1
# HELP blocklag_provider_height Block height the provider reported in the latest published check.
# TYPE blocklag_provider_height gauge
blocklag_provider_height{provider="genesis"} 0
# HELP blocklag_provider_lag_blocks Blocks the provider was behind the reference height in the latest published check.
# TYPE blocklag_provider_lag_blocks gauge
blocklag_provider_lag_blocks{provider="genesis"} 0
# HELP blocklag_provider_last_probe_duration_seconds How long the provider's probe took in the latest published check, a last value rather than a distribution.
# TYPE blocklag_provider_last_probe_duration_seconds gauge
blocklag_provider_last_probe_duration_seconds{provider="down"} 2
blocklag_provider_last_probe_duration_seconds{provider="genesis"} 0.25
# HELP blocklag_provider_up Whether the provider's probe succeeded (1) or failed (0) in the latest published check.
# TYPE blocklag_provider_up gauge
blocklag_provider_up{provider="down"} 0
blocklag_provider_up{provider="genesis"} 1
# HELP blocklag_reference_height Block height that lag was measured from in the latest published check.
# TYPE blocklag_reference_height gauge
blocklag_reference_height 0
`,
		},
		{
			name: "a failed provider keeps its advanced time but shows no height, lag or ahead",
			status: blocklag.Status{Checked: checked, Reference: 110, MaxLag: 5, Advanced: advanced, Endpoints: []blocklag.EndpointStatus{
				{ID: "front", Eligible: true, Height: 110, Advanced: advanced, Latency: 1500 * time.Microsecond},
				{ID: "behind", Height: 100, Lag: 10, Latency: 30 * time.Millisecond},
				{ID: "above", Height: 130, Ahead: 20, Latency: 2 * time.Millisecond},
				{ID: "down", Err: failed(&blocklag.StatusError{StatusCode: 429}), Advanced: advanced.Add(-time.Minute)},
			}},
			want: `# HELP blocklag_advanced_timestamp_seconds Unix time when the front last moved, per Status.Advanced.
# TYPE blocklag_advanced_timestamp_seconds gauge
blocklag_advanced_timestamp_seconds 1.6999999905e+09
# HELP blocklag_checked_timestamp_seconds Unix time when the latest published check finished probing, per Status.Checked.
# TYPE blocklag_checked_timestamp_seconds gauge
blocklag_checked_timestamp_seconds 1.70000000025e+09
# HELP blocklag_max_lag_blocks Most blocks a provider may lag behind the reference height and stay eligible, per Config.MaxLag.
# TYPE blocklag_max_lag_blocks gauge
blocklag_max_lag_blocks 5
# HELP blocklag_provider_advanced_timestamp_seconds Unix time when the provider last advanced, per EndpointStatus.Advanced.
# TYPE blocklag_provider_advanced_timestamp_seconds gauge
blocklag_provider_advanced_timestamp_seconds{provider="down"} 1.6999999305e+09
blocklag_provider_advanced_timestamp_seconds{provider="front"} 1.6999999905e+09
# HELP blocklag_provider_ahead_blocks Blocks the provider was above the reference height in the latest published check.
# TYPE blocklag_provider_ahead_blocks gauge
blocklag_provider_ahead_blocks{provider="above"} 20
blocklag_provider_ahead_blocks{provider="behind"} 0
blocklag_provider_ahead_blocks{provider="front"} 0
# HELP blocklag_provider_eligible Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.
# TYPE blocklag_provider_eligible gauge
blocklag_provider_eligible{provider="above"} 0
blocklag_provider_eligible{provider="behind"} 0
blocklag_provider_eligible{provider="down"} 0
blocklag_provider_eligible{provider="front"} 1
# HELP blocklag_provider_height Block height the provider reported in the latest published check.
# TYPE blocklag_provider_height gauge
blocklag_provider_height{provider="above"} 130
blocklag_provider_height{provider="behind"} 100
blocklag_provider_height{provider="front"} 110
# HELP blocklag_provider_lag_blocks Blocks the provider was behind the reference height in the latest published check.
# TYPE blocklag_provider_lag_blocks gauge
blocklag_provider_lag_blocks{provider="above"} 0
blocklag_provider_lag_blocks{provider="behind"} 10
blocklag_provider_lag_blocks{provider="front"} 0
# HELP blocklag_provider_last_probe_duration_seconds How long the provider's probe took in the latest published check, a last value rather than a distribution.
# TYPE blocklag_provider_last_probe_duration_seconds gauge
blocklag_provider_last_probe_duration_seconds{provider="above"} 0.002
blocklag_provider_last_probe_duration_seconds{provider="behind"} 0.03
blocklag_provider_last_probe_duration_seconds{provider="down"} 0
blocklag_provider_last_probe_duration_seconds{provider="front"} 0.0015
# HELP blocklag_provider_up Whether the provider's probe succeeded (1) or failed (0) in the latest published check.
# TYPE blocklag_provider_up gauge
blocklag_provider_up{provider="above"} 1
blocklag_provider_up{provider="behind"} 1
blocklag_provider_up{provider="down"} 0
blocklag_provider_up{provider="front"} 1
# HELP blocklag_reference_height Block height that lag was measured from in the latest published check.
# TYPE blocklag_reference_height gauge
blocklag_reference_height 110
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := collector{monitor: fixedMonitor{status: tt.status, stats: statsOf(tt.status, EightReasons...)}}
			if len(tt.status.Endpoints) == 0 {
				if n := testutil.CollectAndCount(c); n != 0 {
					t.Errorf("exported %d metrics, want none", n)
				}
			}
			if n := testutil.CollectAndCount(c, "blocklag_provider_failure_reason"); tt.status.Checked.IsZero() && n != 0 {
				t.Errorf("exported %d failure reasons before a check published, want none", n)
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader(tt.want), gaugeNames...); err != nil {
				t.Error(err)
			}
			assertLint(t, c)
		})
	}
}

// An endpoint ID that is not valid UTF-8 cannot be a label value: the
// scrape fails with an error naming the metric, and nothing panics.
func TestCollectorRefusesAnIDThatIsNoLabelValue(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector{monitor: fixedMonitor{status: blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "bad\xff", Eligible: true}}}}})
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "blocklag_provider_eligible") {
		t.Errorf("gather error %v, want one naming blocklag_provider_eligible", err)
	}
}

// failureReasonHead is the exposition's header for the failure reasons.
const failureReasonHead = `# HELP blocklag_provider_failure_reason Whether the provider's probe failed for this reason (1) or not (0) in the latest published check, as ProbeError.Reason names it.
# TYPE blocklag_provider_failure_reason gauge
`

// gaugeNames is every gauge the collector exports but the failure
// reasons, which TestFailureReasonIsAStateSetOfEveryReason pins, so that a
// comparison of the gauges leaves the counters out.
var gaugeNames = []string{
	"blocklag_provider_eligible",
	"blocklag_provider_up",
	"blocklag_provider_height",
	"blocklag_provider_lag_blocks",
	"blocklag_provider_ahead_blocks",
	"blocklag_provider_advanced_timestamp_seconds",
	"blocklag_provider_last_probe_duration_seconds",
	"blocklag_reference_height",
	"blocklag_checked_timestamp_seconds",
	"blocklag_advanced_timestamp_seconds",
	"blocklag_max_lag_blocks",
}

// The counters are Stats as it stands: the checks, those that published,
// and per provider its failures of each of the eight reasons, 0 for those
// it has never failed with, whatever the Status says.
func TestCountersAreTheStats(t *testing.T) {
	c := collector{monitor: fixedMonitor{
		status: blocklag.Status{Endpoints: []blocklag.EndpointStatus{{ID: "a", Eligible: true}, {ID: "b", Eligible: true}}},
		stats: blocklag.Stats{Checks: 7, Published: 5, Endpoints: []blocklag.EndpointStats{
			{ID: "a", Failures: failures(map[blocklag.Reason]uint64{blocklag.ReasonUnauthorized: 2, blocklag.ReasonTimeout: 1})},
			{ID: "b", Failures: failures(nil)},
		}},
	}}
	want := `# HELP blocklag_checks_total Checks that sent probes, one to every provider, published or not.
# TYPE blocklag_checks_total counter
blocklag_checks_total 7
# HELP blocklag_checks_published_total Checks that published verdicts.
# TYPE blocklag_checks_published_total counter
blocklag_checks_published_total 5
# HELP blocklag_provider_probe_failures_total Failed probes of the provider, by the reason ProbeError.Reason names, in every check.
# TYPE blocklag_provider_probe_failures_total counter
blocklag_provider_probe_failures_total{provider="a",reason="bad_answer"} 0
blocklag_provider_probe_failures_total{provider="a",reason="http_status"} 0
blocklag_provider_probe_failures_total{provider="a",reason="rate_limited"} 0
blocklag_provider_probe_failures_total{provider="a",reason="rpc_error"} 0
blocklag_provider_probe_failures_total{provider="a",reason="timeout"} 1
blocklag_provider_probe_failures_total{provider="a",reason="transport"} 0
blocklag_provider_probe_failures_total{provider="a",reason="unauthorized"} 2
blocklag_provider_probe_failures_total{provider="a",reason="wrong_chain"} 0
blocklag_provider_probe_failures_total{provider="b",reason="bad_answer"} 0
blocklag_provider_probe_failures_total{provider="b",reason="http_status"} 0
blocklag_provider_probe_failures_total{provider="b",reason="rate_limited"} 0
blocklag_provider_probe_failures_total{provider="b",reason="rpc_error"} 0
blocklag_provider_probe_failures_total{provider="b",reason="timeout"} 0
blocklag_provider_probe_failures_total{provider="b",reason="transport"} 0
blocklag_provider_probe_failures_total{provider="b",reason="unauthorized"} 0
blocklag_provider_probe_failures_total{provider="b",reason="wrong_chain"} 0
`
	counterNames := []string{"blocklag_checks_total", "blocklag_checks_published_total", "blocklag_provider_probe_failures_total"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), counterNames...); err != nil {
		t.Error(err)
	}
	assertLint(t, c)
}

// failures is the Failures of a Stats: every reason, 0 unless n counts it.
func failures(n map[blocklag.Reason]uint64) map[blocklag.Reason]uint64 {
	all := map[blocklag.Reason]uint64{}
	for _, r := range EightReasons {
		all[r] = n[r]
	}
	return all
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
	return blocklag.Stats{Checks: n, Published: n, Endpoints: []blocklag.EndpointStats{{ID: "a", Failures: failures(nil)}}}
}

// One Collect reads the Status once and the Stats once, so that all its
// gauges come from one snapshot and all its counters from one count.
func TestCollectReadsStatusOnceAndStatsOnce(t *testing.T) {
	m := &changingMonitor{}
	c := collector{monitor: m}
	want := strings.NewReader(`# HELP blocklag_checks_total Checks that sent probes, one to every provider, published or not.
# TYPE blocklag_checks_total counter
blocklag_checks_total 1
# HELP blocklag_checks_published_total Checks that published verdicts.
# TYPE blocklag_checks_published_total counter
blocklag_checks_published_total 1
# HELP blocklag_max_lag_blocks Most blocks a provider may lag behind the reference height and stay eligible, per Config.MaxLag.
# TYPE blocklag_max_lag_blocks gauge
blocklag_max_lag_blocks 1
# HELP blocklag_provider_height Block height the provider reported in the latest published check.
# TYPE blocklag_provider_height gauge
blocklag_provider_height{provider="a"} 100
# HELP blocklag_reference_height Block height that lag was measured from in the latest published check.
# TYPE blocklag_reference_height gauge
blocklag_reference_height 100
`)
	names := []string{"blocklag_checks_total", "blocklag_checks_published_total", "blocklag_max_lag_blocks",
		"blocklag_provider_height", "blocklag_reference_height"}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if err := testutil.GatherAndCompare(reg, want, names...); err != nil {
		t.Error(err)
	}
	if m.statusCalls != 1 || m.statsCalls != 1 {
		t.Errorf("one scrape read Status %d times and Stats %d times, want once each", m.statusCalls, m.statsCalls)
	}
}
