package blocklagprom

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// providerLabel names the provider a per-provider metric is about. It is not
// "endpoint" because many Prometheus setups already use that name as a
// target label, which would clash with it.
const providerLabel = "provider"

// reasonLabel holds a blocklag.Reason.
const reasonLabel = "reason"

// The collector's fixed descriptors. Describe sends all of them; Collect
// sends the gauges that apply to the Status it reads and every counter of
// the Stats. Each help text says in one sentence what the number is; the
// README's tables say when it is there.
var (
	providerEligibleDesc = providerDesc("blocklag_provider_eligible",
		"Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.")
	providerUpDesc = providerDesc("blocklag_provider_up",
		"Whether the provider's probe succeeded (1) or failed (0) in the latest published check.")
	providerHeightDesc = providerDesc("blocklag_provider_height",
		"Block height the provider reported in the latest published check.")
	providerLagDesc = providerDesc("blocklag_provider_lag_blocks",
		"Blocks the provider was behind the reference height in the latest published check.")
	providerAheadDesc = providerDesc("blocklag_provider_ahead_blocks",
		"Blocks the provider was above the reference height in the latest published check.")
	providerAdvancedDesc = providerDesc("blocklag_provider_advanced_timestamp_seconds",
		"Unix time when the provider last advanced, per EndpointStatus.Advanced.")
	providerDurationDesc = providerDesc("blocklag_provider_last_probe_duration_seconds",
		"How long the provider's probe took in the latest published check, "+
			"a last value rather than a distribution.")
	providerFailureReasonDesc = prometheus.NewDesc("blocklag_provider_failure_reason",
		"Whether the provider's probe failed for this reason (1) or not (0) in the latest published check, "+
			"as ProbeError.Reason names it.",
		[]string{providerLabel, reasonLabel}, nil)
	referenceHeightDesc = prometheus.NewDesc("blocklag_reference_height",
		"Block height that lag was measured from in the latest published check.", nil, nil)
	checkedDesc = prometheus.NewDesc("blocklag_checked_timestamp_seconds",
		"Unix time when the latest published check finished probing, per Status.Checked.", nil, nil)
	advancedDesc = prometheus.NewDesc("blocklag_advanced_timestamp_seconds",
		"Unix time when the front last moved, per Status.Advanced.", nil, nil)
	maxLagDesc = prometheus.NewDesc("blocklag_max_lag_blocks",
		"Most blocks a provider may lag behind the reference height and stay eligible, per Config.MaxLag.",
		nil, nil)

	checksDesc = prometheus.NewDesc("blocklag_checks_total",
		"Checks that sent probes, one to every provider, published or not.", nil, nil)
	checksPublishedDesc = prometheus.NewDesc("blocklag_checks_published_total",
		"Checks that published verdicts.", nil, nil)
	providerFailuresDesc = prometheus.NewDesc("blocklag_provider_probe_failures_total",
		"Failed probes of the provider, by the reason ProbeError.Reason names, in every check.",
		[]string{providerLabel, reasonLabel}, nil)
)

// allDescs is every descriptor of the collector, which Describe sends.
var allDescs = []*prometheus.Desc{
	providerEligibleDesc, providerUpDesc, providerHeightDesc, providerLagDesc,
	providerAheadDesc, providerAdvancedDesc, providerDurationDesc, providerFailureReasonDesc,
	referenceHeightDesc, checkedDesc, advancedDesc, maxLagDesc,
	checksDesc, checksPublishedDesc, providerFailuresDesc,
}

// providerDesc describes a gauge of one provider, labelled with its ID.
func providerDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{providerLabel}, nil)
}

// NewCollector returns a checked collector that exports m's verdicts and
// the numbers they rest on as the gauges that the module's README lists,
// and what every check did as its counters. It keeps no state of its own:
// every Collect reads one m.Status() and one m.Stats() and builds all its
// metrics from those two, so a scrape never disagrees with m.Eligible and
// never mixes two checks' verdicts. It is safe for concurrent scrapes, also
// while a Check runs, and it never waits for one. A nil m, or a zero
// Monitor not made by blocklag.New, exports nothing.
//
// Register one collector per Monitor. Two collectors have the same
// descriptors, so a second Monitor in the same registry needs a label of its
// own, as the package doc shows.
func NewCollector(m *blocklag.Monitor) prometheus.Collector {
	return collector{monitor: m}
}

// collector holds only the Monitor it reads; it is never written after
// NewCollector, so concurrent scrapes share nothing else.
type collector struct {
	monitor monitor
}

// monitor is what the collector reads of a *blocklag.Monitor. It is an
// interface so that a test can hand the collector a Status and a Stats of
// its own, and count the reads of one Collect.
type monitor interface {
	Status() blocklag.Status
	Stats() blocklag.Stats
}

// Describe sends every descriptor that Collect may use.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the gauges of one Status and the counters of one Stats. A
// Status without endpoints comes only from a Monitor that New did not make,
// and gives nothing at all.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.monitor.Status()
	ss := c.monitor.Stats()
	if len(st.Endpoints) == 0 {
		return
	}
	reasons := reasonsOf(ss)
	collectStatus(ch, st, reasons)
	collectStats(ch, ss, reasons)
}

// reasonsOf is every reason that ss counts, in sorted order: Stats holds
// all of them, from 0, for every endpoint, so blocklagprom keeps no list
// of its own.
func reasonsOf(ss blocklag.Stats) []blocklag.Reason {
	seen := map[blocklag.Reason]bool{}
	for _, e := range ss.Endpoints {
		for r := range e.Failures {
			seen[r] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// collectStatus sends the gauges that apply to st. Each gauge is present
// exactly when Status's JSON form shows the member it mirrors, but for
// ahead, which comes with the lag even at 0, and for up and the failure
// reasons, which come with the latency. The failure reasons are a state
// set: every reason, 1 for the one the provider failed with and 0 for the
// others.
func collectStatus(ch chan<- prometheus.Metric, st blocklag.Status, reasons []blocklag.Reason) {
	published := !st.Checked.IsZero()
	for _, e := range st.Endpoints {
		id := string(e.ID)
		sendGauge(ch, providerEligibleDesc, oneIfTrue(e.Eligible), id)
		if published {
			sendGauge(ch, providerUpDesc, oneIfTrue(e.Err == nil), id)
			sendGauge(ch, providerDurationDesc, e.Latency.Seconds(), id)
			if e.Err == nil {
				sendGauge(ch, providerHeightDesc, float64(e.Height), id)
				sendGauge(ch, providerLagDesc, float64(e.Lag), id)
				sendGauge(ch, providerAheadDesc, float64(e.Ahead), id)
			}
			failedWith := e.Reason()
			for _, r := range reasons {
				sendGauge(ch, providerFailureReasonDesc, oneIfTrue(r == failedWith), id, string(r))
			}
		}
		if !e.Advanced.IsZero() {
			sendGauge(ch, providerAdvancedDesc, unixSeconds(e.Advanced), id)
		}
	}
	if published {
		sendGauge(ch, referenceHeightDesc, float64(st.Reference))
		sendGauge(ch, checkedDesc, unixSeconds(st.Checked))
	}
	if !st.Advanced.IsZero() {
		sendGauge(ch, advancedDesc, unixSeconds(st.Advanced))
	}
	sendGauge(ch, maxLagDesc, float64(st.MaxLag))
}

// collectStats sends the counters of ss, all of them always: a provider's
// failure counter of every reason, 0 until its first failure of the kind,
// so that increase() sees the first one.
func collectStats(ch chan<- prometheus.Metric, ss blocklag.Stats, reasons []blocklag.Reason) {
	sendCounter(ch, checksDesc, ss.Checks)
	sendCounter(ch, checksPublishedDesc, ss.Published)
	for _, e := range ss.Endpoints {
		id := string(e.ID)
		for _, r := range reasons {
			sendCounter(ch, providerFailuresDesc, e.Failures[r], id, string(r))
		}
	}
}

// sendGauge sends one gauge of value v with the label values labels.
func sendGauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	sendMetric(ch, d, prometheus.GaugeValue, v, labels)
}

// sendCounter sends one counter of value n with the label values labels.
func sendCounter(ch chan<- prometheus.Metric, d *prometheus.Desc, n uint64, labels ...string) {
	sendMetric(ch, d, prometheus.CounterValue, float64(n), labels)
}

// sendMetric sends one metric of type t. A label value must be valid
// UTF-8: New rejects IDs that are not, but a Status built by hand may still
// hold one, and the scrape then gets an error naming the metric rather
// than a panic that would end the program.
func sendMetric(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64,
	labels []string) {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}

// oneIfTrue is the value of a gauge that says yes (1) or no (0).
func oneIfTrue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds keeps the fraction of a second, which a check interval of a
// few seconds needs. Adding the fraction to the whole seconds rounds once,
// where dividing UnixNano, a number too large for a float64 to hold
// exactly, would round twice.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
