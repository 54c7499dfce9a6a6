package blocklagprom_test

import (
	"fmt"
	"maps"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// A real Prometheus server, scraping real Monitors' collectors with the
// shipped rules file loaded, stores the series the collector exports and
// raises the alerts they call for. Two Monitors share the registry, told
// apart by a chain label: on mainnet a is fresh, b lags and c rejects its
// key, so its checks publish; on sepolia a rejects its key and b rate
// limits, so no check ever publishes. The scrapes and rule evaluations run
// every second; the alerts with a for: clause are seen pending (their
// timing is for promtool's unit tests), and the staleness alerts are
// evaluated as of a few minutes later, as Prometheus would see them if the
// checks stopped now.
func TestPrometheusScrapingMonitorsSeesTheSeriesAndTheAlerts(t *testing.T) {
	bin := tool(t, "prometheus")
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}

	mainnet, mainnetNodes := newMonitor(t, 3)
	sepolia, sepoliaNodes := newMonitor(t, 2)
	reg := prometheus.NewPedanticRegistry()
	for chain, m := range map[string]*blocklag.Monitor{"mainnet": mainnet, "sepolia": sepolia} {
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"chain": chain}, reg)
		wrapped.MustRegister(blocklagprom.NewCollector(m))
	}
	target := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(target.Close)
	instance := target.Listener.Addr().String()
	server := startPrometheus(t, bin, rules, instance)

	// Two rounds of checks, each seen by a scrape before the next, so that
	// Prometheus sees the counters climb.
	for round := 1; round <= 2; round++ {
		checkWith(t, mainnet, mainnetNodes, []answer{healthy, behind, forbidden})
		checkWith(t, sepolia, sepoliaNodes, []answer{rejected, tooMany})
		want := fmt.Sprintf(`blocklag_checks_total{chain="mainnet"} %[1]d, `+
			`blocklag_checks_total{chain="sepolia"} %[1]d`, round)
		waitFor(t, "a scrape of the checks of round "+fmt.Sprint(round), func() (bool, string) {
			got := strings.Join(server.query(t, `blocklag_checks_total`, time.Now(), instance), ", ")
			return got == want, got
		})
	}
	// Prometheus holds the samples of the last round from here on.
	scraped := time.Now()

	// The series: every one the collector exports, with its value and the
	// target's own labels, as the registry gathers it now that no check
	// runs. The checks above give every family a series, so that each
	// panel of the dashboard has one to show.
	st := mainnet.Status()
	assertEveryFamily(t, reg)
	want := exported(t, reg)
	got := server.query(t, `{__name__=~"blocklag_.+"}`, time.Now(), instance)
	if !slices.Equal(got, want) {
		t.Errorf("Prometheus stored the series\n%s\nwant, as the collector exports them:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Run("every dashboard panel shows series", func(t *testing.T) { checkDashboard(t, server, instance) })

	// The alerts, each waiting out its for: clause: a rejected key whether
	// or not its checks publish; a provider that lags, and one that fails
	// with its reason; mainnet with one provider of three eligible.
	wantAlerts := []string{
		`pending BlocklagFewEligible{chain="mainnet",severity="warning"}`,
		`pending BlocklagNeverPublished{chain="sepolia",severity="critical"}`,
		`pending BlocklagProviderIneligible{chain="mainnet",provider="b",severity="warning"}`,
		`pending BlocklagProviderIneligible{chain="mainnet",provider="c",severity="warning"}`,
		`pending BlocklagProviderMisconfigured{chain="mainnet",provider="c",` +
			`reason="unauthorized",severity="warning"}`,
		`pending BlocklagProviderMisconfigured{chain="sepolia",provider="a",` +
			`reason="unauthorized",severity="warning"}`,
		`pending BlocklagProviderRateLimited{chain="sepolia",provider="b",` +
			`reason="rate_limited",severity="warning"}`,
	}
	waitFor(t, "the alerts", func() (bool, string) {
		got := server.alerts(t, instance)
		return slices.Equal(got, wantAlerts), strings.Join(got, "\n")
	})

	// The staleness alerts, as of a while after the last check with no
	// check in between: the verdicts of mainnet have gone stale, and the
	// chain-stall alert stays quiet, since stale verdicts say nothing of the
	// chain. sepolia has no verdicts to go stale: BlocklagNeverPublished
	// covers it. Each is evaluated at a time counted from the last check,
	// not from now, so that a slow machine does not age the verdicts; never
	// before Prometheus held the last round's samples, though.
	exprs := server.ruleQueries(t)
	for _, tt := range []struct {
		alert string
		after time.Duration
		want  []string
	}{
		{alert: "BlocklagVerdictsStale", after: 30 * time.Second},
		{alert: "BlocklagVerdictsStale", after: 2 * time.Minute, want: []string{`{chain="mainnet"}`}},
		{alert: "BlocklagChainStalled", after: 3 * time.Minute},
	} {
		var got []string
		at := st.Checked.Add(tt.after)
		if at.Before(scraped) {
			at = scraped
		}
		for _, s := range server.query(t, exprs[tt.alert], at, instance) {
			got = append(got, strings.Fields(s)[0])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s, %v on: %q, want %q", tt.alert, tt.after, got, tt.want)
		}
	}
}

// startPrometheus starts a Prometheus server that scrapes target and
// evaluates rules every second, keeping its data in a temporary
// directory, and returns its API once it is ready. The server stops when
// the test ends; its log is shown when the test failed.
func startPrometheus(t *testing.T, bin, rules, target string) prom {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: blocklag
    static_configs:
      - targets: [%q]
`, rules, target), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	addr, data := startServer(t, "Prometheus", dir, func(addr, data string) *exec.Cmd {
		return exec.Command(bin,
			"--config.file="+config,
			"--storage.tsdb.path="+data,
			"--web.listen-address="+addr)
	})
	// What answered is this Prometheus, not another server that took the
	// port while this one was starting.
	server := prom("http://" + addr)
	var flags map[string]string
	server.get(t, "/api/v1/status/flags", nil, &flags)
	if flags["storage.tsdb.path"] != data {
		t.Fatalf("the server at %s keeps its data in %q, not in %q: another program's",
			addr, flags["storage.tsdb.path"], data)
	}
	return server
}

// alerts returns every active alert as "state name{labels}", sorted, with
// the labels job and instance left out after checking that they are the
// scrape's own.
func (p prom) alerts(t *testing.T, instance string) []string {
	t.Helper()
	var data struct {
		Alerts []struct {
			Labels map[string]string
			State  string
		}
	}
	p.get(t, "/api/v1/alerts", nil, &data)
	var out []string
	for _, a := range data.Alerts {
		labels := maps.Clone(a.Labels)
		labels["__name__"] = labels["alertname"]
		delete(labels, "alertname")
		out = append(out, a.State+" "+withoutTarget(t, labels, instance))
	}
	sort.Strings(out)
	return out
}

// ruleQueries returns the expression of every alert that the server
// loaded, by the alert's name.
func (p prom) ruleQueries(t *testing.T) map[string]string {
	t.Helper()
	var data struct {
		Groups []struct {
			Rules []struct{ Name, Query, Type string }
		}
	}
	p.get(t, "/api/v1/rules", url.Values{"type": {"alert"}}, &data)
	out := map[string]string{}
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			out[r.Name] = r.Query
		}
	}
	return out
}
