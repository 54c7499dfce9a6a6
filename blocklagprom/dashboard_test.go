package blocklagprom_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
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
	Type, Title string
	Datasource  *grafanaDatasource
	Targets     []struct {
		RefID      string `json:"refId"`
		Expr       string
		Datasource *grafanaDatasource
	}
	Panels []grafanaPanel
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
		used := regexp.MustCompile(`(^|[^\w:])` + name + `([^\w:]|$)`)
		if !slices.ContainsFunc(exprs, used.MatchString) {
			t.Errorf("no panel of %s reads %s", dashboardFile, name)
		}
	}
}

// familyNames returns the name of every descriptor the collector sends.
// Describe reads no Monitor, so a nil one does.
func familyNames(t *testing.T) []string {
	t.Helper()
	ch := make(chan *prometheus.Desc)
	go func() {
		blocklagprom.NewCollector(nil).Describe(ch)
		close(ch)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in the descriptor %s", d)
		}
		names = append(names, m[1])
	}
	return names
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
				t.Errorf("panel %q, target %s: data source %+v, want uid %s", p.Title, q.RefID, q.Datasource, datasourceVariable)
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

// checkDashboard runs every expression of dashboard.json on server, with
// the variables Grafana would put in and the job and instance of the
// scrape, and fails when one is not valid PromQL or a panel's targets
// together find no series; each panel is a subtest named by its title. A
// rate needs two samples in its window, so each panel is asked until it
// shows series, as Grafana's refresh would.
func checkDashboard(t *testing.T, server prom, instance string) {
	t.Helper()
	// $__rate_interval is four scrape intervals at the least in Grafana,
	// and the test's scrapes come every second; $__range is the default
	// time range of the dashboard.
	grafana := strings.NewReplacer(
		"$__rate_interval", "4s",
		"$__interval", "1s",
		"$__range", "1h",
		datasourceVariable, "prometheus",
		"$job", "blocklag",
		"$instance", instance,
	)
	for _, p := range dashboardPanels(t) {
		t.Run(p.Title, func(t *testing.T) {
			var exprs []string
			for _, q := range p.Targets {
				expr := grafana.Replace(q.Expr)
				if strings.Contains(expr, "$") {
					t.Fatalf("target %s: %s holds a variable the test does not know", q.RefID, expr)
				}
				exprs = append(exprs, expr)
			}
			waitFor(t, "the panel to show series", func() (bool, string) {
				var found []string
				for _, expr := range exprs {
					found = append(found, server.query(t, expr, time.Now(), instance)...)
				}
				return len(found) > 0, "no series from\n" + strings.Join(exprs, "\n")
			})
		})
	}
}
