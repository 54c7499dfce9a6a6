package main

// The SDK marks its classic dashboard model deprecated in favour of the v2
// schema. The v2 schema is new in Grafana 12 and older releases cannot
// import it, while every release imports and provisions the classic model.
//lint:file-ignore SA1019 the classic model is the one every Grafana imports

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the data source of every panel, target and query
// variable: the dashboard's own variable, so that one import works against
// whichever Prometheus the user picks, with no uid of ours baked in.
var datasource = common.DataSourceRef{
	Type: cog.ToPtr("prometheus"),
	Uid:  cog.ToPtr("${datasource}"),
}

// target is the selector every expression carries, so that the job and
// instance pickers narrow every panel alike.
const target = `job=~"$job", instance=~"$instance"`

// Legend prefixes. Series of several targets, or of several Monitors in
// one program told apart by a chain label as the package doc shows, would
// otherwise share a name. A label a series lacks shows as nothing.
const (
	where       = "{{instance}} {{chain}}"
	whichServer = where + " {{provider}}"
)

// sinceLastPublishTitle is the title of the panel that shows how old the
// verdicts in force are: the one that tells an outage of every probe,
// which the panels of verdicts point to.
const sinceLastPublishTitle = "Since the last published check"

// verdicts ends the description of a panel that shows the verdicts in
// force, which only a published check changes.
func verdicts(description string) string {
	return description + " It shows the verdicts in force since the last publish: " +
		"while every probe fails, nothing is published and it stays as it was, so the panel " +
		sinceLastPublishTitle + " is the one that tells."
}

// countsFromVerdicts ends the description of a panel of the time since a
// moment that the verdicts in force hold.
func countsFromVerdicts(description string) string {
	return description + " It counts from the verdicts in force since the last publish: while every " +
		"probe fails, that moment stays as it was and the panel climbs as if nothing moved, so the panel " +
		sinceLastPublishTitle + " is the one that tells."
}

// nonZeroRate is the per-second rate of a counter over Grafana's rate
// interval, narrowed to the picked jobs and instances, without the series
// whose rate is zero: a panel of rates then draws the failures and checks
// that happen, not a flat line for every provider and reason that has none.
func nonZeroRate(counter string) string {
	return "rate(" + selected(counter) + "[$__rate_interval]) > 0"
}

// build returns the whole dashboard: the variables, then one row per
// question a person asks of the Monitors, each with its panels.
func build() *dashboard.DashboardBuilder {
	d := dashboard.NewDashboardBuilder("blocklag").
		Uid("blocklag").
		Description("Which Ethereum JSON-RPC providers a blocklag Monitor finds eligible, and why.").
		Tags([]string{"blocklag", "ethereum"}).
		Refresh("30s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Type("prometheus")).
		WithVariable(labelVariable("job", "Job",
			`label_values(blocklag_checks_total, job)`)).
		WithVariable(labelVariable("instance", "Instance",
			`label_values(blocklag_checks_total{job=~"$job"}, instance)`))

	d.WithRow(dashboard.NewRowBuilder("Eligibility")).
		WithPanel(eligibility()).
		WithPanel(shareEligible())
	d.WithRow(dashboard.NewRowBuilder("Lag")).
		WithPanel(lag()).
		WithPanel(ahead())
	d.WithRow(dashboard.NewRowBuilder("Heights")).
		WithPanel(heights())
	d.WithRow(dashboard.NewRowBuilder("Failures")).
		WithPanel(failureRate()).
		WithPanel(reasonInForce()).
		WithPanel(failuresInRange())
	d.WithRow(dashboard.NewRowBuilder("Probes")).
		WithPanel(probeDuration()).
		WithPanel(up())
	d.WithRow(dashboard.NewRowBuilder("Checks")).
		WithPanel(checks())
	d.WithRow(dashboard.NewRowBuilder("Freshness")).
		WithPanel(sinceChecked()).
		WithPanel(sinceFrontMoved()).
		WithPanel(sinceProviderAdvanced())
	return d
}

// labelVariable is a multi-value picker of the values of one target
// label, with All selected at first so that a new dashboard shows every
// Monitor.
func labelVariable(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		Current(dashboard.VariableOption{
			Selected: cog.ToPtr(true),
			Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
		})
}

// query is a range query of expr on the dashboard's data source, drawn
// under legend. refID names it for the overrides that single it out.
func query(refID, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasource).
		RefId(refID).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

// selected is metric narrowed to the picked jobs and instances.
func selected(metric string) string {
	return metric + "{" + target + "}"
}

// states maps the values of a 0-or-1 gauge to words and colours, for the
// state timelines.
func states(one, oneColor, zero, zeroColor string) []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"1": {Text: cog.ToPtr(one), Color: cog.ToPtr(oneColor), Index: cog.ToPtr[int32](0)},
			"0": {Text: cog.ToPtr(zero), Color: cog.ToPtr(zeroColor), Index: cog.ToPtr[int32](1)},
		},
	}}}
}

// limitLine draws a series as a dashed red line without fill, so that a
// limit such as MaxLag reads as a threshold beside the series it bounds.
func limitLine() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		{Id: "custom.fillOpacity", Value: 0},
	}
}

// legend is the list legend below a time series panel, with each series'
// last value, which is what a person looks for first.
func legend() *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().
		DisplayMode(common.LegendDisplayModeList).
		Placement(common.LegendPlacementBottom).
		ShowLegend(true).
		Calcs([]string{"lastNotNull"})
}

// series is a time series panel of the common shape: on the dashboard's
// data source, half the width, every series in the tooltip.
func series(title, description, unit string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Unit(unit).
		Height(8).
		Span(12).
		Legend(legend()).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
}

// timeline is a state timeline panel of a 0-or-1 gauge per provider.
func timeline(title, description string, mappings []dashboard.ValueMapping) *statetimeline.PanelBuilder {
	return statetimeline.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Height(8).
		Span(12).
		Mappings(mappings).
		ShowValue(common.VisibilityModeNever).
		MergeValues(true).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(false)).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeSingle).
			Sort(common.SortOrderNone))
}

func eligibility() *statetimeline.PanelBuilder {
	return timeline("Eligible providers",
		verdicts("Whether failnext may send reads to each provider, as Monitor.Eligible answers. "+
			"Every provider shows as eligible while no check has published yet (fail-open)."),
		states("eligible", "green", "ineligible", "red")).
		Span(16).
		WithTarget(query("A", selected("blocklag_provider_eligible"), whichServer))
}

func shareEligible() *stat.PanelBuilder {
	// Aggregating without provider, as the rules' FewEligible does, keeps
	// every other label, whatever label tells two Monitors apart.
	expr := "sum without (provider) (" + selected("blocklag_provider_eligible") + ")\n" +
		"/\ncount without (provider) (" + selected("blocklag_provider_eligible") + ")"
	return stat.NewPanelBuilder().
		Title("Share of providers eligible").
		Description(verdicts("The part of each Monitor's providers that are eligible now. " +
			"Below half, every read goes to a few providers.")).
		Datasource(datasource).
		Height(8).
		Span(8).
		Unit("percentunit").
		Min(0).
		Max(1).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{
				{Color: "red"},
				{Value: cog.ToPtr(0.5), Color: "green"},
			})).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Orientation(common.VizOrientationAuto).
		WithTarget(query("A", expr, where))
}

func lag() *timeseries.PanelBuilder {
	return series("Lag behind the reference",
		verdicts("Blocks each provider was behind the reference height in the check in force, "+
			"beside MaxLag (dashed): above that line a provider is ineligible. "+
			"A provider whose probe failed has no lag."),
		"none").
		Decimals(0).
		Min(0).
		WithTarget(query("A", selected("blocklag_provider_lag_blocks"), whichServer)).
		WithTarget(query("B", selected("blocklag_max_lag_blocks"), where+" MaxLag")).
		OverrideByQuery("B", limitLine())
}

func ahead() *timeseries.PanelBuilder {
	return series("Ahead of the reference",
		verdicts("Blocks each provider was above the reference height in the check in force. "+
			"With Quorum and MaxAhead set, more than MaxAhead makes a provider ineligible; "+
			"one far ahead of the rest may serve another chain or a bogus height."),
		"none").
		Decimals(0).
		Min(0).
		WithTarget(query("A", selected("blocklag_provider_ahead_blocks"), whichServer))
}

func heights() *timeseries.PanelBuilder {
	return series("Heights beside the reference",
		verdicts("The block height each provider reported in the check in force, and the reference "+
			"height (dashed) that lag is measured from."),
		"none").
		Span(24).
		Decimals(0).
		WithTarget(query("A", selected("blocklag_provider_height"), whichServer)).
		WithTarget(query("B", selected("blocklag_reference_height"), where+" reference")).
		OverrideByQuery("B", limitLine())
}

func failureRate() *timeseries.PanelBuilder {
	// Each series is one provider's counter of one reason, so no sum is
	// needed, and none drops a label that tells Monitors apart.
	return series("Failed probes per second",
		"How often each provider's probes fail, by reason, counted in every check "+
			"whether or not it published: this shows failures even while the verdicts are stale. "+
			"A provider and reason without failures draws no line.",
		"ops").
		Min(0).
		WithTarget(query("A", nonZeroRate("blocklag_provider_probe_failures_total"),
			whichServer+" {{reason}}"))
}

func reasonInForce() *statetimeline.PanelBuilder {
	return timeline("Failure reason in force",
		verdicts("Why each provider's probe failed in the check in force, one line per provider and "+
			"reason; a provider whose probe succeeded shows no line."),
		[]dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
			Type: dashboard.MappingTypeValueToText,
			Options: map[string]dashboard.ValueMappingResult{
				"1": {Text: cog.ToPtr("failing"), Color: cog.ToPtr("red"), Index: cog.ToPtr[int32](0)},
			},
		}}}).
		WithTarget(query("A", selected("blocklag_provider_failure_reason")+" == 1",
			whichServer+" {{reason}}"))
}

func failuresInRange() *table.PanelBuilder {
	expr := "increase(" + selected("blocklag_provider_probe_failures_total") + "[$__range]) > 0"
	return table.NewPanelBuilder().
		Title("Failed probes in the time range").
		Description("How many probes of each provider failed in the dashboard's time range, by reason. " +
			"Providers and reasons without a failure are left out.").
		Datasource(datasource).
		Height(8).
		Span(24).
		Decimals(0).
		// The footer's total is every failed probe in the range, of the
		// picked targets; without a reducer the SDK would write null.
		Footer(common.NewTableFooterOptionsBuilder().
			Show(true).
			Reducer([]string{"sum"})).
		WithTransformation(dashboard.DataTransformerConfig{
			Id: "organize",
			Options: map[string]any{
				"excludeByName": map[string]bool{"Time": true},
				"renameByName":  map[string]string{"Value": "failed probes"},
			},
		}).
		WithTarget(prometheus.NewDataqueryBuilder().
			Datasource(datasource).
			RefId("A").
			Expr(expr).
			Format(prometheus.PromQueryFormatTable).
			Instant())
}

func probeDuration() *timeseries.PanelBuilder {
	return series("Probe duration",
		verdicts("How long each provider's probe took in the check in force, failed or not. "+
			"A last value per check, not a distribution."),
		"s").
		Min(0).
		WithTarget(query("A", selected("blocklag_provider_last_probe_duration_seconds"), whichServer))
}

func up() *statetimeline.PanelBuilder {
	return timeline("Probe succeeded",
		verdicts("Whether each provider's probe succeeded in the check in force. "+
			"Nothing shows until a check has published."),
		states("up", "green", "down", "red")).
		WithTarget(query("A", selected("blocklag_provider_up"), whichServer))
}

func checks() *timeseries.PanelBuilder {
	return series("Checks per second",
		"Checks that probed every provider, and those of them that published verdicts. "+
			"Checks that stop publishing while they go on mean every probe failed. "+
			"A Monitor whose checks have stopped, or never published, draws no line for them.",
		"ops").
		Span(24).
		Min(0).
		WithTarget(query("A", nonZeroRate("blocklag_checks_total"), where+" checks")).
		WithTarget(query("B", nonZeroRate("blocklag_checks_published_total"), where+" published"))
}

func sinceChecked() *timeseries.PanelBuilder {
	return since(sinceLastPublishTitle,
		"Seconds since the check in force finished probing. "+
			"It climbs while checks fail or stop: failnext then routes on old verdicts.",
		"blocklag_checked_timestamp_seconds", where)
}

func sinceFrontMoved() *timeseries.PanelBuilder {
	return since("Since the front moved",
		countsFromVerdicts("Seconds since the reference height last rose with a provider's new high. "+
			"It climbs when the chain, or every provider alike, is stuck."),
		"blocklag_advanced_timestamp_seconds", where)
}

func sinceProviderAdvanced() *timeseries.PanelBuilder {
	return since("Since each provider advanced",
		countsFromVerdicts("Seconds since each provider last reported a new high of its own. "+
			"One that climbs alone is stuck while the others move."),
		"blocklag_provider_advanced_timestamp_seconds", whichServer)
}

// since is a third-width panel of the seconds since the Unix time that
// metric holds.
func since(title, description, metric, legend string) *timeseries.PanelBuilder {
	return series(title, description, "s").
		Span(8).
		Min(0).
		WithTarget(query("A", "time() - "+selected(metric), legend))
}
