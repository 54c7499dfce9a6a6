package blocklagprom_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// gauges gathers g and returns every gauge series, as
// name{label="value",...}, with its value; counters does the same for the
// counters. They report a failed Gather with t.Error, so that scraping
// goroutines may call them too.
func gauges(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return gather(t, g, dto.MetricType_GAUGE)
}

func counters(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return gather(t, g, dto.MetricType_COUNTER)
}

func gather(t *testing.T, g prometheus.Gatherer, kind dto.MetricType) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Errorf("gather: %v", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetType() != kind {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue()
			if kind == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

// The collector exports what Status says, and leaves out what does not
// apply: everything but eligibility and MaxLag while fail-open, and the
// height, lag and lead of a provider whose probe failed. The timestamps, probe
// durations and failure reasons are taken from the Monitor's own Status,
// whose meaning blocklag owns.
func TestCollectorExportsTheStatusInForce(t *testing.T) {
	published := map[string]float64{
		`blocklag_provider_eligible{provider="a"}`:     0,
		`blocklag_provider_eligible{provider="b"}`:     1,
		`blocklag_provider_up{provider="a"}`:           1,
		`blocklag_provider_up{provider="b"}`:           1,
		`blocklag_provider_height{provider="a"}`:       100,
		`blocklag_provider_height{provider="b"}`:       110,
		`blocklag_provider_lag_blocks{provider="a"}`:   10,
		`blocklag_provider_ahead_blocks{provider="a"}`: 0,
		`blocklag_provider_lag_blocks{provider="b"}`:   0,
		`blocklag_provider_ahead_blocks{provider="b"}`: 0,
		`blocklag_reference_height{}`:                  110,
		`blocklag_max_lag_blocks{}`:                    3,
	}
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, for a and b
		want   map[string]float64
	}{
		{"before any check every provider is exported eligible, beside MaxLag, and nothing else", nil, map[string]float64{
			`blocklag_provider_eligible{provider="a"}`: 1,
			`blocklag_provider_eligible{provider="b"}`: 1,
			`blocklag_max_lag_blocks{}`:                3,
		}},
		{"a published check exports every provider's verdict, height, lag and lead", [][]answer{{behind, healthy}}, published},
		{"a failed probe is exported down and ineligible without height or lag", [][]answer{{unavailable, healthy}}, map[string]float64{
			`blocklag_provider_eligible{provider="a"}`:     0,
			`blocklag_provider_eligible{provider="b"}`:     1,
			`blocklag_provider_up{provider="a"}`:           0,
			`blocklag_provider_up{provider="b"}`:           1,
			`blocklag_provider_height{provider="b"}`:       110,
			`blocklag_provider_lag_blocks{provider="b"}`:   0,
			`blocklag_provider_ahead_blocks{provider="b"}`: 0,
			`blocklag_reference_height{}`:                  110,
			`blocklag_max_lag_blocks{}`:                    3,
		}},
		{"a provider whose probe fails keeps the time it last advanced", [][]answer{{behind, healthy}, {unavailable, {height: 111, chain: mainnet}}}, map[string]float64{
			`blocklag_provider_eligible{provider="a"}`:     0,
			`blocklag_provider_eligible{provider="b"}`:     1,
			`blocklag_provider_up{provider="a"}`:           0,
			`blocklag_provider_up{provider="b"}`:           1,
			`blocklag_provider_height{provider="b"}`:       111,
			`blocklag_provider_lag_blocks{provider="b"}`:   0,
			`blocklag_provider_ahead_blocks{provider="b"}`: 0,
			`blocklag_reference_height{}`:                  111,
			`blocklag_max_lag_blocks{}`:                    3,
		}},
		{"a check in which every probe fails leaves the exported gauges as they were", [][]answer{{behind, healthy}, {unavailable, unavailable}}, published},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := checkedMonitor(t, 2, tt.checks)
			c := blocklagprom.NewCollector(m)
			got := gauges(t, registry(c))

			st := m.Status()
			want := maps.Clone(tt.want)
			if len(tt.checks) > 0 {
				want[`blocklag_checked_timestamp_seconds{}`] = seconds(st.Checked)
			}
			if !st.Advanced.IsZero() {
				want[`blocklag_advanced_timestamp_seconds{}`] = seconds(st.Advanced)
			}
			for _, e := range st.Endpoints {
				if !e.Advanced.IsZero() {
					want[`blocklag_provider_advanced_timestamp_seconds{provider="`+string(e.ID)+`"}`] = seconds(e.Advanced)
				}
				if len(tt.checks) == 0 {
					continue
				}
				want[`blocklag_provider_last_probe_duration_seconds{provider="`+string(e.ID)+`"}`] = e.Latency.Seconds()
				var pe *blocklag.ProbeError
				errors.As(e.Err, &pe)
				for _, r := range allReasons {
					want[`blocklag_provider_failure_reason{provider="`+string(e.ID)+`",reason="`+r+`"}`] = 0
					if pe != nil && string(pe.Reason()) == r {
						want[`blocklag_provider_failure_reason{provider="`+string(e.ID)+`",reason="`+r+`"}`] = 1
					}
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("gathered\n%v\nwant\n%v", got, want)
			}
			assertLintClean(t, c)
		})
	}
}

// A collector of a nil Monitor, or of a zero one that New did not make,
// exports nothing, and does not panic.
func TestCollectorOfANilOrZeroMonitorExportsNothing(t *testing.T) {
	for name, m := range map[string]*blocklag.Monitor{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			if families, err := registry(blocklagprom.NewCollector(m)).Gather(); err != nil || len(families) > 0 {
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

// counts is the counters of a Monitor over the providers "a" and "b" after
// checks Checks that sent probes, of which published published: each
// provider failed as failures says, keyed by "provider/reason"; every
// other failure counter is 0.
func counts(checks, published float64, failures map[string]float64) map[string]float64 {
	out := map[string]float64{
		`blocklag_checks_total{}`:           checks,
		`blocklag_checks_published_total{}`: published,
	}
	for _, id := range []string{"a", "b"} {
		for _, r := range allReasons {
			out[`blocklag_provider_probe_failures_total{provider="`+id+`",reason="`+r+`"}`] = failures[id+"/"+r]
		}
	}
	return out
}

// The counters count every Check that sent probes, whether or not it
// published, and each provider's failed probes by reason. Every failure
// counter is there from the start, at 0.
func TestCountersCountEveryProbeOfEveryCheck(t *testing.T) {
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, for a and b
		want   map[string]float64
	}{
		{"before any check every counter is there at 0", nil, counts(0, 0, nil)},
		{"a check that publishes counts itself published and each failure by its reason",
			[][]answer{{healthy, unavailable}}, counts(1, 1, map[string]float64{"b/http_status": 1})},
		{"a check in which every probe fails counts each failure and nothing published",
			[][]answer{{rejected, tooMany}}, counts(1, 0, map[string]float64{"a/unauthorized": 1, "b/rate_limited": 1})},
		{"the counts add up across checks, published or not",
			[][]answer{{healthy, otherChain}, {rejected, tooMany}, {healthy, tooMany}, {hang, behind}},
			counts(4, 3, map[string]float64{"a/unauthorized": 1, "a/timeout": 1, "b/rate_limited": 2, "b/wrong_chain": 1})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := checkedMonitor(t, 2, tt.checks)
			c := blocklagprom.NewCollector(m)
			if got := counters(t, registry(c)); !maps.Equal(got, tt.want) {
				t.Errorf("gathered\n%v\nwant\n%v", got, tt.want)
			}
			assertLintClean(t, c)
		})
	}
}

// A Check in which every probe fails (here, every key rejected) publishes
// nothing, so every gauge stays as the check in force left it, fail-open
// included; the counters still count the Check and its failures, which is
// what lets an alert see them.
func TestAnAllFailingCheckClimbsTheCountersAndKeepsTheGauges(t *testing.T) {
	tests := []struct {
		name   string
		before [][]answer // the Checks before the failing ones
		want   map[string]float64
	}{
		{"while fail-open", nil,
			counts(2, 0, map[string]float64{"a/unauthorized": 2, "b/unauthorized": 2})},
		{"after a published check", [][]answer{{healthy, behind}},
			counts(3, 1, map[string]float64{"a/unauthorized": 2, "b/unauthorized": 2})},
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
			if got := counters(t, reg); !maps.Equal(got, tt.want) {
				t.Errorf("counters\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// A provider that MaxAhead leaves out is exported ineligible with how far
// above the reference it answered, and a lag of 0; the others answer ahead
// by 0, and a provider whose probe failed has no ahead at all.
func TestCollectorExportsHowFarAProviderIsAhead(t *testing.T) {
	m, nodes := newMonitorWith(t, 4, func(c *blocklag.Config) { c.MaxAhead, c.Quorum = 5, 2 })
	checkWith(t, m, nodes, []answer{{height: 1000, chain: mainnet}, healthy, healthy, unavailable})
	g := gauges(t, registry(blocklagprom.NewCollector(m)))
	assertSeries(t, g, map[string]float64{
		`blocklag_provider_eligible{provider="a"}`:     0,
		`blocklag_provider_ahead_blocks{provider="a"}`: 890,
		`blocklag_provider_lag_blocks{provider="a"}`:   0,
		`blocklag_provider_ahead_blocks{provider="b"}`: 0,
		`blocklag_provider_ahead_blocks{provider="c"}`: 0,
		`blocklag_reference_height{}`:                  110,
	})
	if got, ok := g[`blocklag_provider_ahead_blocks{provider="d"}`]; ok {
		t.Errorf("a failed provider is exported %v blocks ahead, want no series", got)
	}
}
