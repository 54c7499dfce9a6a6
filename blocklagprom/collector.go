package blocklagprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// providerLabel names the provider a per-provider gauge is about. It is not
// "endpoint" because many Prometheus setups already use that name as a
// target label, which would clash with it.
const providerLabel = "provider"

// The collector's fixed descriptors. Describe sends all of them; Collect
// sends a subset, by the presence rules in the package doc.
var (
	providerEligibleDesc = providerDesc("blocklag_provider_eligible",
		"1 when the provider is eligible in the verdicts in force, 0 when not; what Monitor.Eligible answers. 1 for every provider before the first published check (fail-open).")
	providerUpDesc = providerDesc("blocklag_provider_up",
		"1 when the provider's probe succeeded in the check that published the verdicts in force, 0 when it failed. Absent before the first published check.")
	providerHeightDesc = providerDesc("blocklag_provider_height",
		"Block height the provider reported in the check that published the verdicts in force. Absent when its probe failed, and before the first published check.")
	providerLagDesc = providerDesc("blocklag_provider_lag_blocks",
		"Blocks the provider was behind the reference height in the check that published the verdicts in force; 0 at or above it. Absent when its probe failed, and before the first published check.")
	providerAdvancedDesc = providerDesc("blocklag_provider_advanced_timestamp_seconds",
		"Unix time of the latest published check in which the provider reported a height above all it had reported before. Absent until its first height counts.")
	referenceHeightDesc = prometheus.NewDesc("blocklag_reference_height",
		"Height that lag was measured from in the check that published the verdicts in force. Absent before the first published check.", nil, nil)
	checkedDesc = prometheus.NewDesc("blocklag_checked_timestamp_seconds",
		"Unix time when the check that published the verdicts in force finished probing. Absent before the first published check.", nil, nil)
	advancedDesc = prometheus.NewDesc("blocklag_advanced_timestamp_seconds",
		"Unix time when the front last moved: the latest blocklag_provider_advanced_timestamp_seconds among the providers eligible in the verdicts in force. Absent while no eligible provider has advanced.", nil, nil)
)

var allDescs = []*prometheus.Desc{
	providerEligibleDesc, providerUpDesc, providerHeightDesc, providerLagDesc,
	providerAdvancedDesc, referenceHeightDesc, checkedDesc, advancedDesc,
}

func providerDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{providerLabel}, nil)
}

// NewCollector returns a checked collector that exports m's verdicts and
// the numbers they rest on as gauges. It keeps no state of its own: every
// Collect reads one m.Status() and builds all its metrics from it, so a
// scrape never disagrees with m.Eligible and never mixes two checks. It is
// safe for concurrent scrapes, also while a Check runs, and it never waits
// for one. A nil m exports nothing.
//
// Register one collector per Monitor. A second Monitor in the same registry
// needs its own label, added by [prometheus.WrapRegistererWith], since both
// collectors have the same descriptors.
func NewCollector(m *blocklag.Monitor) prometheus.Collector {
	return collector{monitor: m}
}

// collector holds only the Monitor it reads; it is never written after
// NewCollector, so concurrent scrapes share nothing else.
type collector struct {
	monitor *blocklag.Monitor
}

// Describe sends every descriptor that Collect may use.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the gauges of one Status, by the presence rules in the
// package doc.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.monitor.Status()
	published := !st.Checked.IsZero()
	for _, e := range st.Endpoints {
		id := string(e.ID)
		send(ch, providerEligibleDesc, flag(e.Eligible), id)
		if published {
			send(ch, providerUpDesc, flag(e.Err == nil), id)
			if e.Err == nil {
				send(ch, providerHeightDesc, float64(e.Height), id)
				send(ch, providerLagDesc, float64(e.Lag), id)
			}
		}
		if !e.Advanced.IsZero() {
			send(ch, providerAdvancedDesc, unixSeconds(e.Advanced), id)
		}
	}
	if published {
		send(ch, referenceHeightDesc, float64(st.Reference))
		send(ch, checkedDesc, unixSeconds(st.Checked))
	}
	if !st.Advanced.IsZero() {
		send(ch, advancedDesc, unixSeconds(st.Advanced))
	}
}

// send sends one gauge. blocklag accepts any non-empty endpoint ID, but a
// label value must be valid UTF-8; for an ID that is not, the scrape gets
// an error naming the metric rather than a panic that would end the
// program.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds keeps the fraction of a second, which a check interval of a
// few seconds needs.
func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}
