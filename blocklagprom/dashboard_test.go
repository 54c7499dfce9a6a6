package blocklagprom_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// dashboardFile is the Grafana dashboard the module ships, written by the
// generator in dashboard/.
const dashboardFile = "dashboard.json"

// datasourceVariable is what every panel, target and query variable must
// name as its data source's uid: the dashboard's own variable.
const datasourceVariable = "${datasource}"

// grafanaPanel is the part of a panel of dashboard.json that the tests
// read. A collapsed row holds its panels in Panels.
type grafanaPanel struct {
	Type, Title, Description string
	Datasource               *grafanaDatasource
	Targets                  []grafanaTarget
	Panels                   []grafanaPanel
}

// grafanaTarget is one query of a panel.
type grafanaTarget struct {
	RefID      string `json:"refId"`
	Expr       string
	Datasource *grafanaDatasource
}

type grafanaDatasource struct{ Type, UID string }

// dashboardPanels returns every panel of dashboard.json but the rows, in
// the order of the file.
func dashboardPanels(t *testing.T) []grafanaPanel {
	t.Helper()
	d := readDashboard(t)
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(panels []grafanaPanel) {
		for _, p := range panels {
			if p.Type == "row" {
				walk(p.Panels)
			} else {
				out = append(out, p)
			}
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		t.Fatalf("%s has no panels", dashboardFile)
	}
	return out
}

type grafanaDashboard struct {
	Panels     []grafanaPanel
	Templating struct {
		List []struct {
			Name, Type string
			Datasource *grafanaDatasource
		}
	}
}

func readDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	text, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(text, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// The dashboard reads every metric family that the collector describes,
// so that a family added to the collector cannot go without a panel. The
// names come from the collector's own descriptors.
func TestTheDashboardReadsEveryMetricFamily(t *testing.T) {
	var exprs []string
	for _, p := range dashboardPanels(t) {
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	families := familyNames(t)
	if len(families) == 0 {
		t.Fatal("the collector describes no metric family")
	}
	for _, name := range families {
		if !slices.ContainsFunc(exprs, func(expr string) bool { return reads(expr, name) }) {
			t.Errorf("no panel of %s reads %s", dashboardFile, name)
		}
	}
}

// Every panel, target and query variable takes its data source from the
// dashboard's variable, so that one import serves any Prometheus.
func TestTheDashboardTakesEveryDataSourceFromTheVariable(t *testing.T) {
	fromVariable := func(ds *grafanaDatasource) bool {
		return ds != nil && ds.UID == datasourceVariable && ds.Type == "prometheus"
	}
	for _, p := range dashboardPanels(t) {
		if !fromVariable(p.Datasource) {
			t.Errorf("panel %q: data source %+v, want uid %s", p.Title, p.Datasource, datasourceVariable)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", p.Title)
		}
		for _, q := range p.Targets {
			if !fromVariable(q.Datasource) {
				t.Errorf("panel %q, target %s: data source %+v, want uid %s",
					p.Title, q.RefID, q.Datasource, datasourceVariable)
			}
		}
	}
	var names []string
	for _, v := range readDashboard(t).Templating.List {
		names = append(names, v.Name)
		if v.Type == "query" && !fromVariable(v.Datasource) {
			t.Errorf("variable %s: data source %+v, want uid %s", v.Name, v.Datasource, datasourceVariable)
		}
	}
	if want := []string{"datasource", "job", "instance"}; !slices.Equal(names, want) {
		t.Errorf("variables %q, want %q", names, want)
	}
}

// Every metric an expression reads is narrowed to the picked jobs and
// instances, and to nothing hard-coded, so that the pickers narrow every
// panel alike.
func TestEveryDashboardQuerySelectsThePickedJobsAndInstances(t *testing.T) {
	metric := regexp.MustCompile(`blocklag_\w+(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	want := []string{`instance=~"$instance"`, `job=~"$job"`}
	for _, p := range dashboardPanels(t) {
		for _, q := range p.Targets {
			for _, m := range metric.FindAllStringSubmatch(q.Expr, -1) {
				var got []string
				for _, l := range matcher.FindAllStringSubmatch(m[1], -1) {
					if l[1] == "job" || l[1] == "instance" {
						got = append(got, l[1]+l[2]+`"`+l[3]+`"`)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("panel %q, target %s: %s selects %q, want %q", p.Title, q.RefID, m[0], got, want)
				}
			}
		}
	}
}

// rated matches an expression that takes a counter's rate or increase.
var rated = regexp.MustCompile(`\b(rate|irate|increase)\(`)

// leavesOutZeros matches an expression that ends by keeping only the
// series above zero.
var leavesOutZeros = regexp.MustCompile(`>\s*0$`)

// Every expression of a rate or an increase keeps only the series above
// zero: five providers times eight reasons would otherwise draw forty flat
// lines around the few that matter.
func TestEveryRateOnTheDashboardLeavesOutZeros(t *testing.T) {
	found := false
	for _, p := range dashboardPanels(t) {
		for _, q := range p.Targets {
			if !rated.MatchString(q.Expr) {
				continue
			}
			found = true
			if !leavesOutZeros.MatchString(q.Expr) {
				t.Errorf("panel %q, target %s: %s keeps the series that are zero", p.Title, q.RefID, q.Expr)
			}
		}
	}
	if !found {
		t.Fatalf("%s has no panel of rates", dashboardFile)
	}
}

// inForce is every metric family whose value comes from the check in
// force, written out here rather than taken from the collector: only a
// published check changes them.
var inForce = []string{
	"blocklag_provider_eligible",
	"blocklag_provider_up",
	"blocklag_provider_height",
	"blocklag_provider_lag_blocks",
	"blocklag_provider_ahead_blocks",
	"blocklag_provider_advanced_timestamp_seconds",
	"blocklag_provider_last_probe_duration_seconds",
	"blocklag_provider_failure_reason",
	"blocklag_reference_height",
	"blocklag_checked_timestamp_seconds",
	"blocklag_advanced_timestamp_seconds",
}

// reads reports whether expr reads the metric family name.
func reads(expr, name string) bool {
	return regexp.MustCompile(`(^|[^\w:])` + name + `([^\w:]|$)`).MatchString(expr)
}

// Every panel that reads the check in force says so in its description,
// and that while every probe fails it stays as it was, pointing to the
// panel of the time since the last published check, which climbs then.
// That panel is the only one exempt.
func TestEveryPanelOfTheVerdictsInForceSaysWhichPanelTellsAnOutage(t *testing.T) {
	families := familyNames(t)
	for _, name := range inForce {
		if !slices.Contains(families, name) {
			t.Fatalf("the collector has no metric family %s", name)
		}
	}
	panels := dashboardPanels(t)
	var telling string
	for _, p := range panels {
		if len(p.Targets) == 1 && reads(p.Targets[0].Expr, "blocklag_checked_timestamp_seconds") {
			telling = p.Title
		}
	}
	if telling == "" {
		t.Fatalf("%s has no panel of the time since the last published check alone", dashboardFile)
	}
	wants := []string{"in force since the last publish", "while every probe fails", "the panel " + telling}
	for _, p := range panels {
		if p.Title == telling || !readsTheCheckInForce(p) {
			continue
		}
		for _, want := range wants {
			if !strings.Contains(p.Description, want) {
				t.Errorf("panel %q reads the check in force, but its description does not say %q:\n%s",
					p.Title, want, p.Description)
			}
		}
	}
}

// readsTheCheckInForce reports whether a target of p reads a family of
// inForce.
func readsTheCheckInForce(p grafanaPanel) bool {
	for _, q := range p.Targets {
		for _, name := range inForce {
			if reads(q.Expr, name) {
				return true
			}
		}
	}
	return false
}

// checkDashboard runs every expression of dashboard.json on server, with
// the variables Grafana would put in and the job and instance of the
// scrape, and fails when one is not valid PromQL, when a panel's targets
// together find no series, or when a rate comes out zero; each panel is a
// subtest named after its title. A rate needs two samples in its window, so
// each panel is asked until it shows series, as Grafana's refresh would.
func checkDashboard(t *testing.T, server prom, instance string) {
	t.Helper()
	// $__range is the default time range of the dashboard. Grafana makes
	// $__rate_interval longer as the range grows; the test takes it as
	// long as the range, since its checks ran in two quick rounds a few
	// seconds ago, and a rate over less could already be zero, which the
	// panels of rates leave out.
	grafana := strings.NewReplacer(
		"$__rate_interval", "1h",
		"$__interval", "1s",
		"$__range", "1h",
		datasourceVariable, "prometheus",
		"$job", "blocklag",
		"$instance", instance,
	)
	for _, p := range dashboardPanels(t) {
		t.Run("the panel "+p.Title+" shows series", func(t *testing.T) {
			var exprs []string
			for _, q := range p.Targets {
				expr := grafana.Replace(q.Expr)
				if strings.Contains(expr, "$") {
					t.Fatalf("target %s: %s holds a variable the test does not know", q.RefID, expr)
				}
				exprs = append(exprs, expr)
			}
			found := map[string][]string{} // each expression's samples
			waitFor(t, "the panel to show series", func() (bool, string) {
				n := 0
				for _, expr := range exprs {
					found[expr] = server.query(t, expr, time.Now(), instance)
					n += len(found[expr])
				}
				return n > 0, "no series from\n" + strings.Join(exprs, "\n")
			})
			for expr, samples := range found {
				for _, sample := range samples {
					if rated.MatchString(expr) && strings.HasSuffix(sample, " 0") {
						t.Errorf("%s gives %s, a rate of zero", expr, sample)
					}
				}
			}
		})
	}
}
