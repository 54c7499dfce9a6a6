package blocklagprom_test

import (
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// The tests of the collector over real Monitors, checking fake providers.

// steadyGatherer is g with the value of every series that changes from
// run to run (a time, or a probe's duration) set to 1, so that a golden
// file can show which of them are there.
func steadyGatherer(g prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, err := g.Gather()
		for _, f := range families {
			if !slices.Contains(varying, f.GetName()) {
				continue
			}
			for _, m := range f.GetMetric() {
				one := 1.0
				m.Gauge.Value = &one
			}
		}
		return families, err
	})
}

// varying is every metric family whose values change from run to run.
var varying = []string{
	"blocklag_checked_timestamp_seconds",
	"blocklag_advanced_timestamp_seconds",
	"blocklag_provider_advanced_timestamp_seconds",
	"blocklag_provider_last_probe_duration_seconds",
}

// A real Monitor's collector exports, after these checks of fake
// providers, the series each case wants of the families it is about, with
// the times and durations that vary from run to run set to 1; one case
// compares its whole exposition with a golden file. Which gauges are there
// agrees with the members of the Monitor's Status JSON. The Monitors
// require mainnet, so that a provider on another chain fails too.
func TestCollectorExportsWhatARealMonitorFound(t *testing.T) {
	tests := []struct {
		name      string
		providers int                    // 2 when 0
		tune      func(*blocklag.Config) // a setting the other cases leave at its default, if any
		checks    [][]answer             // each Check's answers, one per provider a, b, c...
		want      []string               // every series of the families it names
		golden    string                 // the file of the whole exposition, for one case
	}{
		{
			name: "before any check every provider is eligible beside MaxLag, and every counter is at 0",
			want: slices.Concat(
				[]string{
					`blocklag_provider_eligible{provider="a"} 1`,
					`blocklag_provider_eligible{provider="b"} 1`,
					`blocklag_max_lag_blocks{} 3`,
					`blocklag_checks_total{} 0`,
					`blocklag_checks_published_total{} 0`,
				},
				failureCounts("a", nil),
				failureCounts("b", nil),
			),
		},
		{
			name: "a published check exports every provider's verdict, height, lag and lead, " +
				"and counts itself published",
			checks: [][]answer{{behind, healthy}},
			want: []string{
				`blocklag_provider_eligible{provider="a"} 0`,
				`blocklag_provider_eligible{provider="b"} 1`,
				`blocklag_provider_up{provider="a"} 1`,
				`blocklag_provider_up{provider="b"} 1`,
				`blocklag_provider_height{provider="a"} 100`,
				`blocklag_provider_height{provider="b"} 110`,
				`blocklag_provider_lag_blocks{provider="a"} 10`,
				`blocklag_provider_lag_blocks{provider="b"} 0`,
				`blocklag_provider_ahead_blocks{provider="a"} 0`,
				`blocklag_provider_ahead_blocks{provider="b"} 0`,
				`blocklag_reference_height{} 110`,
				`blocklag_checks_total{} 1`,
				`blocklag_checks_published_total{} 1`,
			},
		},
		{
			name: "a provider whose probe fails is down and ineligible without height or lag, " +
				"and counted by its reason",
			checks: [][]answer{{unavailable, healthy}},
			want: slices.Concat(
				[]string{
					`blocklag_provider_eligible{provider="a"} 0`,
					`blocklag_provider_eligible{provider="b"} 1`,
					`blocklag_provider_up{provider="a"} 0`,
					`blocklag_provider_up{provider="b"} 1`,
					`blocklag_provider_height{provider="b"} 110`,
					`blocklag_provider_lag_blocks{provider="b"} 0`,
				},
				reasonStates("a", "http_status"),
				reasonStates("b", ""),
				failureCounts("a", map[string]int{"http_status": 1}),
				failureCounts("b", nil),
			),
		},
		{
			name:   "a provider whose probe fails keeps the time it last advanced",
			checks: [][]answer{{behind, healthy}, {unavailable, {height: 111, chain: mainnet}}},
			want: []string{
				`blocklag_provider_up{provider="a"} 0`,
				`blocklag_provider_up{provider="b"} 1`,
				`blocklag_provider_advanced_timestamp_seconds{provider="a"} 1`,
				`blocklag_provider_advanced_timestamp_seconds{provider="b"} 1`,
			},
		},
		{
			name: "a provider that MaxAhead leaves out is ineligible with how far ahead it is, " +
				"and a failed one has no lead",
			providers: 4,
			tune: func(c *blocklag.Config) {
				c.MaxAhead = 5
				c.Quorum = 2
			},
			checks: [][]answer{{{height: 1000, chain: mainnet}, healthy, healthy, unavailable}},
			want: []string{
				`blocklag_provider_eligible{provider="a"} 0`,
				`blocklag_provider_eligible{provider="b"} 1`,
				`blocklag_provider_eligible{provider="c"} 1`,
				`blocklag_provider_eligible{provider="d"} 0`,
				`blocklag_provider_height{provider="a"} 1000`,
				`blocklag_provider_height{provider="b"} 110`,
				`blocklag_provider_height{provider="c"} 110`,
				`blocklag_provider_ahead_blocks{provider="a"} 890`,
				`blocklag_provider_ahead_blocks{provider="b"} 0`,
				`blocklag_provider_ahead_blocks{provider="c"} 0`,
				`blocklag_reference_height{} 110`,
			},
			golden: "monitor",
		},
		{
			name:      "a provider cut off fails as transport and one that hangs as timeout",
			providers: 3,
			checks:    [][]answer{{healthy, cut, hang}},
			want: slices.Concat(
				reasonStates("a", ""),
				reasonStates("b", "transport"),
				reasonStates("c", "timeout"),
				failureCounts("a", nil),
				failureCounts("b", map[string]int{"transport": 1}),
				failureCounts("c", map[string]int{"timeout": 1}),
			),
		},
		{
			name:      "each failed provider has its own reason",
			providers: 8,
			checks: [][]answer{
				{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut},
			},
			want: slices.Concat(
				reasonStates("a", ""),
				reasonStates("b", ""),
				reasonStates("c", "rate_limited"),
				reasonStates("d", "rate_limited"),
				reasonStates("e", "unauthorized"),
				reasonStates("f", "http_status"),
				reasonStates("g", "wrong_chain"),
				reasonStates("h", "transport"),
			),
		},
		{
			name:   "a provider whose reason changes has only its new one",
			checks: [][]answer{{healthy, cut}, {healthy, hang}},
			want: slices.Concat(
				reasonStates("a", ""),
				reasonStates("b", "timeout"),
				failureCounts("a", nil),
				failureCounts("b", map[string]int{"transport": 1, "timeout": 1}),
			),
		},
		{
			name:   "a provider that recovers has no reason, and its counter keeps the failure",
			checks: [][]answer{{healthy, cut}, {healthy, behind}},
			want: slices.Concat(
				[]string{
					`blocklag_provider_up{provider="a"} 1`,
					`blocklag_provider_up{provider="b"} 1`,
				},
				reasonStates("a", ""),
				reasonStates("b", ""),
				failureCounts("a", nil),
				failureCounts("b", map[string]int{"transport": 1}),
			),
		},
		{
			name: "a check in which every probe fails counts each failure and nothing published, " +
				"and stays fail-open",
			checks: [][]answer{{rejected, tooMany}},
			want: slices.Concat(
				[]string{
					`blocklag_provider_eligible{provider="a"} 1`,
					`blocklag_provider_eligible{provider="b"} 1`,
					`blocklag_checks_total{} 1`,
					`blocklag_checks_published_total{} 0`,
				},
				failureCounts("a", map[string]int{"unauthorized": 1}),
				failureCounts("b", map[string]int{"rate_limited": 1}),
			),
		},
		{
			name: "the counts add up across checks, published or not",
			checks: [][]answer{
				{healthy, otherChain},
				{rejected, tooMany},
				{healthy, tooMany},
				{hang, behind},
			},
			want: slices.Concat(
				[]string{
					`blocklag_checks_total{} 4`,
					`blocklag_checks_published_total{} 3`,
				},
				failureCounts("a", map[string]int{"unauthorized": 1, "timeout": 1}),
				failureCounts("b", map[string]int{"wrong_chain": 1, "rate_limited": 2}),
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := checkedMonitor(t, max(tt.providers, 2), tt.tune, tt.checks)
			c := blocklagprom.NewCollector(m)
			reg := registry(c)
			assertExports(t, steadyGatherer(reg), tt.want)
			if tt.golden != "" {
				assertEveryFamily(t, reg)
				assertGolden(t, steadyGatherer(reg), tt.golden)
			}
			assertGaugesFollowTheJSON(t, reg, m.Status(), reasonsOf(m.Stats()))
			assertLintClean(t, c)
		})
	}
}

// A Check in which every probe fails (here, every key rejected) publishes
// nothing, so every gauge stays as the check in force left it, fail-open
// included. That the counters count such checks is tested with the other
// counts.
func TestACheckInWhichEveryProbeFailsChangesNoGauge(t *testing.T) {
	tests := []struct {
		name   string
		before [][]answer // the Checks before the failing ones
	}{
		{name: "a fail-open Monitor stays fail-open"},
		{
			name:   "a Monitor keeps the verdicts of its last published check",
			before: [][]answer{{healthy, behind}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, nodes := checkedMonitor(t, 2, nil, tt.before)
			reg := registry(blocklagprom.NewCollector(m))
			kept := gauges(t, reg)

			for range 2 {
				checkWith(t, m, nodes, []answer{rejected, rejected})
			}
			got := gauges(t, reg)
			if !maps.Equal(got, kept) {
				t.Errorf("after checks in which every probe failed, the gauges are\n%v\n"+
					"want them as they were:\n%v", got, kept)
			}
		})
	}
}

// A collector of a nil Monitor, or of a zero one that New did not make,
// exports nothing, and does not panic.
func TestCollectorOfANilOrZeroMonitorExportsNothing(t *testing.T) {
	tests := []struct {
		name    string
		monitor *blocklag.Monitor
	}{
		{name: "a nil Monitor exports nothing", monitor: nil},
		{name: "a zero Monitor, which New did not make, exports nothing", monitor: &blocklag.Monitor{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			families, err := registry(blocklagprom.NewCollector(tt.monitor)).Gather()
			if err != nil || len(families) > 0 {
				t.Errorf("gathered %v, error %v; want nothing", families, err)
			}
		})
	}
}

// Two Monitors share one registry when each collector is registered
// through a registerer that adds its own chain label; a collector
// registered without it is refused, since its metrics clash.
func TestTwoMonitorsShareARegistryThroughWrappedLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	for i, chain := range []string{"mainnet", "sepolia"} {
		m, nodes := newMonitor(t, 2)
		at := answer{height: uint64(100 * (i + 1)), chain: mainnet}
		checkWith(t, m, nodes, []answer{at, at})
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"chain": chain}, reg)
		wrapped.MustRegister(blocklagprom.NewCollector(m))
		err := reg.Register(blocklagprom.NewCollector(m))
		if err == nil {
			t.Errorf("a collector registered without the chain label was accepted next to the %s one", chain)
		}
	}
	assertExports(t, reg, []string{
		`blocklag_reference_height{chain="mainnet"} 100`,
		`blocklag_reference_height{chain="sepolia"} 200`,
		`blocklag_provider_height{chain="mainnet",provider="a"} 100`,
		`blocklag_provider_height{chain="mainnet",provider="b"} 100`,
		`blocklag_provider_height{chain="sepolia",provider="a"} 200`,
		`blocklag_provider_height{chain="sepolia",provider="b"} 200`,
	})
}

// Scrapes that run while Checks publish each see one whole check: the lag
// of every provider is the reference minus its height, and its verdict
// follows from that lag. Their counters come from one Stats too, in which
// no more checks have published than have run.
func TestScrapesDuringChecksEachSeeOneCheck(t *testing.T) {
	m, nodes := newMonitor(t, 2)
	reg := registry(blocklagprom.NewCollector(m))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range uint64(50) { // b gains a block on a each time
			a := answer{height: 100 + i, chain: mainnet}
			b := answer{height: 100 + 2*i, chain: mainnet}
			checkWith(t, m, nodes, []answer{a, b})
		}
	}()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				last := false
				select {
				case <-done:
					last = true // one last scrape after the last Check
				default:
				}
				assertScrapeSeesOneCheck(t, reg)
				if last {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// assertScrapeSeesOneCheck scrapes reg, a collector of a Monitor with
// MaxLag 3 over the providers a and b, once, and fails t unless the
// scrape's lags, verdicts and counters each come from one check.
func assertScrapeSeesOneCheck(t *testing.T, reg prometheus.Gatherer) {
	t.Helper()
	series := seriesOf(gatherAll(t, reg), dto.MetricType_GAUGE, dto.MetricType_COUNTER)
	published := series[`blocklag_checks_published_total{}`]
	checks := series[`blocklag_checks_total{}`]
	if published > checks {
		t.Errorf("%v checks published of %v: not from one Stats", published, checks)
	}
	ref, ok := series[`blocklag_reference_height{}`]
	if !ok {
		return // fail-open, before the first published check
	}
	for _, id := range []string{"a", "b"} {
		height := series[`blocklag_provider_height{provider="`+id+`"}`]
		lag := series[`blocklag_provider_lag_blocks{provider="`+id+`"}`]
		eligible := series[`blocklag_provider_eligible{provider="`+id+`"}`]
		if lag != ref-height || (eligible == 1) != (lag <= 3) {
			t.Errorf("%s: reference %v, height %v, lag %v, eligible %v: not from one check",
				id, ref, height, lag, eligible)
		}
	}
}

// checkedMonitor is newMonitorWith(t, n, tune) after one Check per entry
// of checks, in which the nodes give those answers.
func checkedMonitor(t *testing.T, n int, tune func(*blocklag.Config),
	checks [][]answer) (*blocklag.Monitor, []*node) {
	t.Helper()
	m, nodes := newMonitorWith(t, n, tune)
	for _, answers := range checks {
		checkWith(t, m, nodes, answers)
	}
	return m, nodes
}
