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
// providers, what the golden files under testdata/monitor show, with the
// times and durations that vary from run to run set to 1. The Monitors
// require mainnet, so that a provider on another chain fails too.
func TestCollectorExportsWhatARealMonitorFound(t *testing.T) {
	tests := []struct {
		name      string
		golden    string
		providers int                    // 2 when 0
		tune      func(*blocklag.Config) // a setting the other cases leave at its default, if any
		checks    [][]answer             // each Check's answers, one per provider a, b, c...
	}{
		{name: "before any check every provider is eligible beside MaxLag, and every counter is at 0",
			golden: "before-any-check"},
		{name: "a published check exports every provider's verdict, height, lag and lead, and counts itself published",
			golden: "published", checks: [][]answer{{behind, healthy}}},
		{name: "a provider whose probe fails is down and ineligible without height or lag, and counted by its reason",
			golden: "one-failing", checks: [][]answer{{unavailable, healthy}}},
		{name: "a provider whose probe fails keeps the time it last advanced",
			golden: "failing-after-advancing", checks: [][]answer{{behind, healthy}, {unavailable, {height: 111, chain: mainnet}}}},
		{name: "a provider that MaxAhead leaves out is ineligible with how far ahead it is, and a failed one has no lead",
			golden: "ahead", providers: 4, tune: func(c *blocklag.Config) { c.MaxAhead = 5; c.Quorum = 2 },
			checks: [][]answer{{{height: 1000, chain: mainnet}, healthy, healthy, unavailable}}},
		{name: "a provider cut off fails as transport and one that hangs as timeout",
			golden: "transport-and-timeout", providers: 3, checks: [][]answer{{healthy, cut, hang}}},
		{name: "each failed provider has its own reason",
			golden: "every-reason", providers: 8,
			checks: [][]answer{{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut}}},
		{name: "a provider whose reason changes has only its new one",
			golden: "reason-changes", checks: [][]answer{{healthy, cut}, {healthy, hang}}},
		{name: "a provider that recovers has no reason",
			golden: "recovers", checks: [][]answer{{healthy, cut}, {healthy, behind}}},
		{name: "a check in which every probe fails counts each failure and nothing published, and stays fail-open",
			golden: "every-probe-failing", checks: [][]answer{{rejected, tooMany}}},
		{name: "the counts add up across checks, published or not",
			golden: "counts-add-up", checks: [][]answer{{healthy, otherChain}, {rejected, tooMany}, {healthy, tooMany}, {hang, behind}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tune := tt.tune
			if tune == nil {
				tune = func(*blocklag.Config) {}
			}
			m, nodes := newMonitorWith(t, max(tt.providers, 2), tune)
			for _, answers := range tt.checks {
				checkWith(t, m, nodes, answers)
			}
			c := blocklagprom.NewCollector(m)
			assertGolden(t, steadyGatherer(registry(c)), "monitor/"+tt.golden)
			assertLintClean(t, c)
		})
	}
}

// A Check in which every probe fails (here, every key rejected) publishes
// nothing, so every gauge stays as the check in force left it, fail-open
// included. (TestCollectorExportsWhatARealMonitorFound shows that the
// counters count such checks.)
func TestACheckInWhichEveryProbeFailsChangesNoGauge(t *testing.T) {
	tests := []struct {
		name   string
		before [][]answer // the Checks before the failing ones
	}{
		{"a fail-open Monitor stays fail-open", nil},
		{"a Monitor keeps the verdicts of its last published check", [][]answer{{healthy, behind}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, nodes := checkedMonitor(t, 2, tt.before)
			reg := registry(blocklagprom.NewCollector(m))
			kept := gauges(t, reg)

			for range 2 {
				checkWith(t, m, nodes, []answer{rejected, rejected})
			}
			if got := gauges(t, reg); !maps.Equal(got, kept) {
				t.Errorf("after checks in which every probe failed, the gauges are\n%v\nwant them as they were:\n%v", got, kept)
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
		{"a nil Monitor exports nothing", nil},
		{"a zero Monitor, which New did not make, exports nothing", &blocklag.Monitor{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if families, err := registry(blocklagprom.NewCollector(tt.monitor)).Gather(); err != nil || len(families) > 0 {
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
		prometheus.WrapRegistererWith(prometheus.Labels{"chain": chain}, reg).MustRegister(blocklagprom.NewCollector(m))
		if err := reg.Register(blocklagprom.NewCollector(m)); err == nil {
			t.Errorf("a collector registered without the chain label was accepted next to the %s one", chain)
		}
	}
	assertSeries(t, gauges(t, reg), map[string]float64{
		`blocklag_reference_height{chain="mainnet"}`:             100,
		`blocklag_reference_height{chain="sepolia"}`:             200,
		`blocklag_provider_height{chain="mainnet",provider="b"}`: 100,
		`blocklag_provider_height{chain="sepolia",provider="a"}`: 200,
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
			checkWith(t, m, nodes, []answer{{height: 100 + i, chain: mainnet}, {height: 100 + 2*i, chain: mainnet}})
		}
	}()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for scraping := true; scraping; {
				select {
				case <-done:
					scraping = false // one last scrape after the last Check
				default:
				}
				if c := counters(t, reg); c[`blocklag_checks_published_total{}`] > c[`blocklag_checks_total{}`] {
					t.Errorf("%v checks published of %v: not from one Stats", c[`blocklag_checks_published_total{}`], c[`blocklag_checks_total{}`])
				}
				g := gauges(t, reg)
				ref, ok := g[`blocklag_reference_height{}`]
				for _, id := range []string{"a", "b"} {
					height, lag := g[`blocklag_provider_height{provider="`+id+`"}`], g[`blocklag_provider_lag_blocks{provider="`+id+`"}`]
					eligible := g[`blocklag_provider_eligible{provider="`+id+`"}`]
					if ok && (lag != ref-height || (eligible == 1) != (lag <= 3)) {
						t.Errorf("%s: reference %v, height %v, lag %v, eligible %v: not from one check", id, ref, height, lag, eligible)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// checkedMonitor is newMonitor(t, n) after one Check per entry of checks,
// in which the nodes give those answers.
func checkedMonitor(t *testing.T, n int, checks [][]answer) (*blocklag.Monitor, []*node) {
	t.Helper()
	m, nodes := newMonitor(t, n)
	for _, answers := range checks {
		checkWith(t, m, nodes, answers)
	}
	return m, nodes
}
