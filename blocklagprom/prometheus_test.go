package blocklagprom_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
		prometheus.WrapRegistererWith(prometheus.Labels{"chain": chain}, reg).MustRegister(blocklagprom.NewCollector(m))
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
		want := fmt.Sprintf(`blocklag_checks_total{chain="mainnet"} %[1]d, blocklag_checks_total{chain="sepolia"} %[1]d`, round)
		waitFor(t, "a scrape of the checks of round "+fmt.Sprint(round), func() (bool, string) {
			got := strings.Join(server.query(t, `blocklag_checks_total`, time.Now(), instance), ", ")
			return got == want, got
		})
	}
	// Prometheus holds the samples of the last round from here on.
	scraped := time.Now()

	// The series: every one the collector exports, with its value, and the
	// target's own labels on each.
	want := []string{
		`blocklag_checks_published_total{chain="mainnet"} 2`,
		`blocklag_checks_published_total{chain="sepolia"} 0`,
		`blocklag_checks_total{chain="mainnet"} 2`,
		`blocklag_checks_total{chain="sepolia"} 2`,
		`blocklag_max_lag_blocks{chain="mainnet"} 3`,
		`blocklag_max_lag_blocks{chain="sepolia"} 3`,
		`blocklag_provider_ahead_blocks{chain="mainnet",provider="a"} 0`,
		`blocklag_provider_ahead_blocks{chain="mainnet",provider="b"} 0`,
		`blocklag_provider_eligible{chain="mainnet",provider="a"} 1`,
		`blocklag_provider_eligible{chain="mainnet",provider="b"} 0`,
		`blocklag_provider_eligible{chain="mainnet",provider="c"} 0`,
		`blocklag_provider_eligible{chain="sepolia",provider="a"} 1`,
		`blocklag_provider_eligible{chain="sepolia",provider="b"} 1`,
		`blocklag_provider_height{chain="mainnet",provider="a"} 110`,
		`blocklag_provider_height{chain="mainnet",provider="b"} 100`,
		`blocklag_provider_lag_blocks{chain="mainnet",provider="a"} 0`,
		`blocklag_provider_lag_blocks{chain="mainnet",provider="b"} 10`,
		`blocklag_provider_up{chain="mainnet",provider="a"} 1`,
		`blocklag_provider_up{chain="mainnet",provider="b"} 1`,
		`blocklag_provider_up{chain="mainnet",provider="c"} 0`,
		`blocklag_reference_height{chain="mainnet"} 110`,
	}
	for chain, probes := range map[string]map[string]string{
		"mainnet": {"a": "", "b": "", "c": "unauthorized"},
		"sepolia": {"a": "unauthorized", "b": "rate_limited"},
	} {
		for provider, failedWith := range probes {
			for _, r := range allReasons {
				n := 0
				if r == failedWith {
					n = 1
				}
				want = append(want, fmt.Sprintf(`blocklag_provider_probe_failures_total{chain=%q,provider=%q,reason=%q} %d`, chain, provider, r, 2*n))
				if chain == "mainnet" { // only its checks publish
					want = append(want, fmt.Sprintf(`blocklag_provider_failure_reason{chain=%q,provider=%q,reason=%q} %d`, chain, provider, r, n))
				}
			}
		}
	}
	st := mainnet.Status()
	want = append(want,
		fmt.Sprintf(`blocklag_checked_timestamp_seconds{chain="mainnet"} %v`, seconds(st.Checked)),
		fmt.Sprintf(`blocklag_advanced_timestamp_seconds{chain="mainnet"} %v`, seconds(st.Advanced)))
	for _, e := range st.Endpoints {
		want = append(want, fmt.Sprintf(`blocklag_provider_last_probe_duration_seconds{chain="mainnet",provider=%q} %v`, e.ID, e.Latency.Seconds()))
		if !e.Advanced.IsZero() {
			want = append(want, fmt.Sprintf(`blocklag_provider_advanced_timestamp_seconds{chain="mainnet",provider=%q} %v`, e.ID, seconds(e.Advanced)))
		}
	}
	sort.Strings(want)
	if got := server.query(t, `{__name__=~"blocklag_.+"}`, time.Now(), instance); !slices.Equal(got, want) {
		t.Errorf("Prometheus stored the series\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
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
		`pending BlocklagProviderMisconfigured{chain="mainnet",provider="c",reason="unauthorized",severity="warning"}`,
		`pending BlocklagProviderMisconfigured{chain="sepolia",provider="a",reason="unauthorized",severity="warning"}`,
		`pending BlocklagProviderRateLimited{chain="sepolia",provider="b",reason="rate_limited",severity="warning"}`,
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
		{"BlocklagVerdictsStale", 30 * time.Second, nil},
		{"BlocklagVerdictsStale", 2 * time.Minute, []string{`{chain="mainnet"}`}},
		{"BlocklagChainStalled", 3 * time.Minute, nil},
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
		t.Fatalf("the server at %s keeps its data in %q, not in %q: another program's", addr, flags["storage.tsdb.path"], data)
	}
	return server
}

// startServer runs the server that command makes to listen on addr with
// its data in data, a fresh folder under dir, and returns both once it is
// ready. Prometheus and Alertmanager tell the port they took for port 0
// only in their logs, so the test picks a free port and hands it over
// instead. Another program may take that port first, and the server then
// exits at once: that is retried on a new port, a few times.
func startServer(t *testing.T, name, dir string, command func(addr, data string) *exec.Cmd) (addr, data string) {
	t.Helper()
	const attempts = 3
	for attempt := 1; attempt <= attempts; attempt++ {
		data := filepath.Join(dir, fmt.Sprint(attempt))
		addr, portTaken := runServer(t, name, data, func(addr string) *exec.Cmd { return command(addr, data) })
		if !portTaken {
			return addr, data
		}
	}
	t.Fatalf("%s found its port taken %d times", name, attempts)
	return "", ""
}

// runServer runs the server that command makes to listen on addr, a free
// loopback address, with its log in dir+".log", and waits until it answers
// /-/ready. It reports portTaken when the server exited because another
// program had taken that port; any other exit fails the test. The server
// stops when the test ends; its log is shown when the test failed.
func runServer(t *testing.T, name, dir string, command func(addr string) *exec.Cmd) (addr string, portTaken bool) {
	t.Helper()
	logFile, err := os.Create(dir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	addr = freeAddr(t)
	cmd := command(addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once Wait has returned waitErr, so that any number
	// of readers see it.
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(10 * time.Second): // its own shutdown is not ours to wait on forever
				cmd.Process.Kill()
				<-exited
			}
		}
		logFile.Close()
		if t.Failed() {
			text, _ := os.ReadFile(logFile.Name())
			t.Logf("%s's log:\n%s", name, text)
		}
	})

	waitFor(t, name+" to be ready", func() (bool, string) {
		select {
		case <-exited:
			return true, ""
		default:
		}
		resp, err := apiClient.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	select {
	case <-exited:
		text, _ := os.ReadFile(logFile.Name())
		if strings.Contains(string(text), "address already in use") {
			t.Logf("%s found %s taken; trying another port", name, addr)
			return "", true
		}
		t.Fatalf("%s exited: %v", name, waitErr)
	default:
	}
	return addr, false
}

// apiClient is the client of every request to the servers the tests
// start: a server that stops answering fails the test instead of hanging
// it.
var apiClient = &http.Client{Timeout: 10 * time.Second}

// freeAddr returns a loopback address with a port that was free a moment
// ago, for a server that takes no port 0.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitFor asks done until it says yes, polling the server it asks about,
// and fails the test with done's last answer if that takes too long.
func waitFor(t *testing.T, what string, done func() (bool, string)) {
	t.Helper()
	const patience = 30 * time.Second
	deadline := time.Now().Add(patience)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the last answer was:\n%s", patience, what, last)
		}
		<-tick.C
	}
}

// prom is a Prometheus server's HTTP API, at its base URL.
type prom string

// getJSON decodes the answer of the server at base to path with params
// into v.
func getJSON(t *testing.T, base, path string, params url.Values, v any) (status string) {
	t.Helper()
	resp, err := apiClient.Get(base + path + "?" + params.Encode())
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %s: %v", path, resp.Status, err)
	}
	return resp.Status
}

// get decodes the data of the API's answer to path with params into data.
func (p prom) get(t *testing.T, path string, params url.Values, data any) {
	t.Helper()
	var answer struct {
		Status string
		Error  string
		Data   json.RawMessage
	}
	if status := getJSON(t, string(p), path, params, &answer); answer.Status != "success" {
		t.Fatalf("GET %s: %s: %s", path, status, answer.Error)
	}
	if err := json.Unmarshal(answer.Data, data); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// query evaluates expr at time at, and returns each sample of the vector
// it gives as name{labels} value, sorted, with the labels job and instance
// left out after checking that they are the scrape's own.
func (p prom) query(t *testing.T, expr string, at time.Time, instance string) []string {
	t.Helper()
	var data struct {
		ResultType string
		Result     []struct {
			Metric map[string]string
			Value  [2]any // the time, and the value as a string
		}
	}
	p.get(t, "/api/v1/query", url.Values{"query": {expr}, "time": {fmt.Sprint(float64(at.UnixMilli()) / 1000)}}, &data)
	if data.ResultType != "vector" {
		t.Fatalf("query %s gave a %s, want a vector", expr, data.ResultType)
	}
	var out []string
	for _, r := range data.Result {
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", expr, r.Value[1], err)
		}
		out = append(out, fmt.Sprintf("%s %v", withoutTarget(t, r.Metric, instance), v))
	}
	sort.Strings(out)
	return out
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

// withoutTarget checks that labels holds the scrape's job and instance,
// and returns the others as name{label="value",...}, the name being the
// label __name__.
func withoutTarget(t *testing.T, labels map[string]string, instance string) string {
	t.Helper()
	if labels["job"] != "blocklag" || labels["instance"] != instance {
		t.Errorf("%v lacks the scrape's labels job=\"blocklag\" and instance=%q", labels, instance)
	}
	var pairs []string
	for k, v := range labels {
		if k != "job" && k != "instance" && k != "__name__" {
			pairs = append(pairs, fmt.Sprintf("%s=%q", k, v))
		}
	}
	sort.Strings(pairs)
	return labels["__name__"] + "{" + strings.Join(pairs, ",") + "}"
}
