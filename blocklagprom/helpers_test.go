package blocklagprom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// The helpers that more than one test file uses: fake providers and the
// Monitors over them, reading what a registry gathers, golden files, and
// running Prometheus's programs.

// mainnet is the chain ID the Monitors in these tests require.
const mainnet = 1

// answer is how a node answers every request for as long as it is set.
type answer struct {
	cut     bool   // close the connection without an answer
	hang    bool   // answer nothing until the request ends
	status  int    // an HTTP status to answer with instead of 200; 0 for 200
	rpcCode int    // a JSON-RPC error code to answer with; 0 for a result
	height  uint64 // the result of eth_blockNumber
	chain   uint64 // the result of eth_chainId
}

// Answers the tests give. Any height and chain not set are 0.
var (
	healthy     = answer{height: 110, chain: mainnet}
	behind      = answer{height: 100, chain: mainnet}
	tooMany     = answer{status: http.StatusTooManyRequests}
	limitErr    = answer{rpcCode: -32005}
	forbidden   = answer{status: http.StatusForbidden}
	rejected    = answer{status: http.StatusUnauthorized}
	unavailable = answer{status: http.StatusServiceUnavailable}
	otherChain  = answer{height: 900, chain: 11155111}
	cut         = answer{cut: true}
	hang        = answer{hang: true}
)

// node is a fake JSON-RPC provider, healthy until a test changes its answer
// between Checks; the handler may read it at any time, hence the atomic.
type node struct {
	*httptest.Server
	answer atomic.Pointer[answer]
}

func newNode(t *testing.T) *node {
	t.Helper()
	n := &node{}
	n.answer.Store(&healthy)
	n.Server = httptest.NewServer(n)
	t.Cleanup(n.Close)
	return n
}

func (n *node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := n.answer.Load()
	var req struct{ Method string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch {
	case a.cut:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case a.hang:
		<-r.Context().Done()
	case a.status != 0:
		w.WriteHeader(a.status)
	case a.rpcCode != 0:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"limit exceeded"}}`, a.rpcCode)
	case req.Method == "eth_chainId":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":"0x%x"}`, a.chain)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":"0x%x"}`, a.height)
	}
}

// probeTimeout bounds each probe of newMonitor's Monitors, so that a node that
// hangs fails its probe as a timeout. A loopback answer takes far less,
// also under the race detector with a dozen probes at once on a busy
// machine.
const probeTimeout = 3 * time.Second

// newMonitor returns a Monitor that requires mainnet, with MaxLag 3, over n
// fake nodes whose IDs are "a", "b", "c" and so on.
func newMonitor(t *testing.T, n int) (*blocklag.Monitor, []*node) {
	t.Helper()
	return newMonitorWith(t, n, nil)
}

// newMonitorWith is newMonitor with its Config changed by tune, unless it is
// nil, before New, for a test that needs a setting the others leave at its
// default.
func newMonitorWith(t *testing.T, n int, tune func(*blocklag.Config)) (*blocklag.Monitor, []*node) {
	t.Helper()
	nodes := make([]*node, n)
	endpoints := make([]failnext.Endpoint, n)
	for i := range nodes {
		nodes[i] = newNode(t)
		endpoints[i] = failnext.Endpoint{ID: failnext.EndpointID(rune('a' + i)), URL: nodes[i].URL}
	}
	cfg := blocklag.Config{Endpoints: endpoints, MaxLag: 3, ChainID: mainnet, ProbeTimeout: probeTimeout}
	if tune != nil {
		tune(&cfg)
	}
	m, err := blocklag.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, nodes
}

// checkWith has the nodes answer as given and runs one Check. The tests
// read the gauges rather than its error, which they log to explain a
// mismatch.
func checkWith(t *testing.T, m *blocklag.Monitor, nodes []*node, answers []answer) {
	t.Helper()
	for i, a := range answers {
		nodes[i].answer.Store(&a)
	}
	if err := m.Check(context.Background()); err != nil {
		t.Log(err)
	}
}

// registry is a pedantic registry holding c, which checks each Collect
// against Describe.
func registry(c prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	return reg
}

// assertLintClean fails t when testutil.CollectAndLint finds a problem in
// what c collects.
func assertLintClean(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// allReasons is every reason a probe can fail for, in sorted order,
// written out here as the oracle, apart from the Stats that the collector
// reads them from. The tests take the eight from here alone.
var allReasons = []string{
	"bad_answer",
	"http_status",
	"rate_limited",
	"rpc_error",
	"timeout",
	"transport",
	"unauthorized",
	"wrong_chain",
}

// reasonStates is what a test expects of provider's failure reason state
// set: every one of allReasons, 1 for failedWith and 0 for the others, all
// 0 when failedWith is "".
func reasonStates(provider, failedWith string) []string {
	var out []string
	for _, r := range allReasons {
		series := fmt.Sprintf("blocklag_provider_failure_reason{provider=%q,reason=%q}", provider, r)
		out = append(out, fmt.Sprintf("%s %v", series, oneIf(r == failedWith)))
	}
	return out
}

// failureCounts is what a test expects of provider's failure counters:
// every one of allReasons, at its count in counts, else 0.
func failureCounts(provider string, counts map[string]int) []string {
	var out []string
	for _, r := range allReasons {
		series := fmt.Sprintf("blocklag_provider_probe_failures_total{provider=%q,reason=%q}", provider, r)
		out = append(out, fmt.Sprintf("%s %d", series, counts[r]))
	}
	return out
}

// oneIf is 1 for true and 0 for false, a yes-or-no gauge's value.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// assertExports fails t unless the series that g gathers of the metric
// families that want names are exactly want, in any order. Each line of
// want is name{label="value",...} value; the families that want does not
// name are not compared, so that a case states only what it is about.
func assertExports(t *testing.T, g prometheus.Gatherer, want []string) {
	t.Helper()
	var families []string
	for _, line := range want {
		name, _, ok := strings.Cut(line, "{")
		if !ok {
			t.Fatalf("%q is not a series of the form name{labels} value", line)
		}
		families = append(families, name)
	}
	got := exported(t, g, families...)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("the collector exports\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// exported is every series that g gathers of the named metric families,
// or of all of them when none are named, as name{label="value",...} value
// lines, sorted.
func exported(t *testing.T, g prometheus.Gatherer, families ...string) []string {
	t.Helper()
	var out []string
	series := seriesOf(gatherAll(t, g), dto.MetricType_GAUGE, dto.MetricType_COUNTER)
	for s, v := range series {
		name, _, _ := strings.Cut(s, "{")
		if len(families) == 0 || slices.Contains(families, name) {
			out = append(out, fmt.Sprintf("%s %v", s, v))
		}
	}
	slices.Sort(out)
	return out
}

// assertEveryFamily fails t unless g gathers every metric family that the
// collector describes, so that the golden file of a whole exposition
// shows each one.
func assertEveryFamily(t *testing.T, g prometheus.Gatherer) {
	t.Helper()
	var gathered []string
	for _, f := range gatherAll(t, g) {
		gathered = append(gathered, f.GetName())
	}
	for _, name := range familyNames(t) {
		if !slices.Contains(gathered, name) {
			t.Errorf("the case exports no %s, which a whole exposition shows", name)
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

// update makes the tests that compare with golden files write those files
// instead: go test -update, then read the diff.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests gather")

// assertGolden compares what g gathers, every family with its help text
// and type, with the exposition in the golden file testdata/name.prom, or
// writes it there when -update is set.
func assertGolden(t *testing.T, g prometheus.Gatherer, name string) {
	t.Helper()
	path := filepath.Join("testdata", name+".prom")
	if *update {
		writeGolden(t, g, path)
	}
	want, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	defer want.Close()
	err = testutil.GatherAndCompare(g, want)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// writeGolden writes what g gathers to the golden file at path.
func writeGolden(t *testing.T, g prometheus.Gatherer, path string) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for _, f := range families {
		_, err := expfmt.MetricFamilyToText(&text, f)
		if err != nil {
			t.Fatal(err)
		}
	}
	err = os.WriteFile(path, text.Bytes(), 0o644)
	if err != nil {
		t.Fatal(err)
	}
}

// statusMembers and endpointMembers name the gauges that come with each
// member of Status's JSON form. A gauge comes where the JSON shows its
// member, with two differences: ahead comes with the lag, also at 0,
// where the JSON leaves it out; and up and the failure reasons come with
// the latency, which the JSON shows for every provider once a check has
// published. endpoints, id, reason and error carry no gauge of their own,
// and neither does max_ahead: no alert or panel reads it.
var (
	statusMembers = map[string][]string{
		"checked":   {"blocklag_checked_timestamp_seconds"},
		"reference": {"blocklag_reference_height"},
		"max_lag":   {"blocklag_max_lag_blocks"},
		"max_ahead": nil,
		"advanced":  {"blocklag_advanced_timestamp_seconds"},
		"endpoints": nil,
	}
	endpointMembers = map[string][]string{
		"id":       nil,
		"eligible": {"blocklag_provider_eligible"},
		"height":   {"blocklag_provider_height"},
		"lag":      {"blocklag_provider_lag_blocks", "blocklag_provider_ahead_blocks"},
		"ahead":    {"blocklag_provider_ahead_blocks"},
		"latency_seconds": {
			"blocklag_provider_last_probe_duration_seconds",
			"blocklag_provider_up",
			"blocklag_provider_failure_reason",
		},
		"advanced": {"blocklag_provider_advanced_timestamp_seconds"},
		"reason":   nil,
		"error":    nil,
	}
)

// assertGaugesFollowTheJSON fails t unless the gauges that g gathers are
// the ones that the members of st's JSON form call for, as statusMembers
// and endpointMembers map them, and each provider's failure reason is 1
// for the reason its JSON shows and 0 for the others of reasons.
func assertGaugesFollowTheJSON(t *testing.T, g prometheus.Gatherer, st blocklag.Status, reasons []string) {
	t.Helper()
	text, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]json.RawMessage
	decode(t, text, &status)
	var endpoints []map[string]json.RawMessage
	decode(t, status["endpoints"], &endpoints)

	want := map[string]float64{} // each series, with the failure reasons' values
	for member := range status {
		families, ok := statusMembers[member]
		if !ok {
			t.Fatalf("the JSON shows %q, which statusMembers does not map to gauges", member)
		}
		for _, f := range families {
			want[f+"{}"] = 0
		}
	}
	for _, e := range endpoints {
		var id string
		decode(t, e["id"], &id)
		var reason string
		if e["reason"] != nil {
			decode(t, e["reason"], &reason)
		}
		for member := range e {
			families, ok := endpointMembers[member]
			if !ok {
				t.Fatalf("the JSON shows %q for %s, which endpointMembers does not map to gauges", member, id)
			}
			for _, f := range families {
				if f != "blocklag_provider_failure_reason" {
					want[fmt.Sprintf("%s{provider=%q}", f, id)] = 0
					continue
				}
				for _, r := range reasons {
					want[fmt.Sprintf("%s{provider=%q,reason=%q}", f, id, r)] = oneIf(r == reason)
				}
			}
		}
	}

	got := gauges(t, g)
	gotSeries := slices.Sorted(maps.Keys(got))
	wantSeries := slices.Sorted(maps.Keys(want))
	if !slices.Equal(gotSeries, wantSeries) {
		t.Errorf("the collector exports\n%s\nwant, from the JSON %s:\n%s",
			strings.Join(gotSeries, "\n"), text, strings.Join(wantSeries, "\n"))
	}
	for series, v := range want {
		if strings.HasPrefix(series, "blocklag_provider_failure_reason{") && got[series] != v {
			t.Errorf("%s = %v, want %v: the JSON %s", series, got[series], v, text)
		}
	}
}

// decode unmarshals the JSON text into v, failing t when it cannot.
func decode(t *testing.T, text []byte, v any) {
	t.Helper()
	err := json.Unmarshal(text, v)
	if err != nil {
		t.Fatal(err)
	}
}

// reasonsOf is every reason that ss counts for its first endpoint, as the
// collector takes them from the Stats.
func reasonsOf(ss blocklag.Stats) []string {
	var out []string
	for r := range ss.Endpoints[0].Failures {
		out = append(out, string(r))
	}
	return out
}

// gauges gathers g and returns every gauge series, as
// name{label="value",...}, with its value.
func gauges(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return seriesOf(gatherAll(t, g), dto.MetricType_GAUGE)
}

// gatherAll is what g gathers, reporting a failed Gather with t.Error.
func gatherAll(t *testing.T, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Errorf("gather: %v", err)
	}
	return families
}

// seriesOf returns every series of families whose type is one of kinds,
// gauges or counters, as name{label="value",...} with its value.
func seriesOf(families []*dto.MetricFamily, kinds ...dto.MetricType) map[string]float64 {
	out := map[string]float64{}
	for _, f := range families {
		if !slices.Contains(kinds, f.GetType()) {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue()
			if f.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

// requirePrometheus names the variable that makes the tests needing
// Prometheus's programs fail rather than skip without them. This
// repository's CI sets it. It is a variable of our own, not CI=true:
// users whose CI runs "go test all" run these tests too, and need not
// install Prometheus for them.
const requirePrometheus = "BLOCKLAGPROM_REQUIRE_PROMETHEUS"

// tool returns the path of the named program of Debian's prometheus
// package.
func tool(t *testing.T, name string) string {
	t.Helper()
	return toolOf(t, "prometheus", name)
}

// toolOf returns the path of the first of names on the PATH, the names a
// program of the Debian package pkg goes by. Without any the test skips
// and says how to get it, unless requirePrometheus is true, so that our CI
// never passes without the rules tested.
func toolOf(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	var err error
	for _, name := range names {
		path, lookErr := exec.LookPath(name)
		if lookErr == nil {
			return path
		}
		err = lookErr
	}
	name := strings.Join(names, " or ")
	required, _ := strconv.ParseBool(os.Getenv(requirePrometheus))
	if required {
		t.Fatalf("%s is needed when %s is set: %v (on Debian: apt-get install %s)",
			name, requirePrometheus, err, pkg)
	}
	t.Skipf("%s not found (%v): on Debian, apt-get install %s to run this test", name, err, pkg)
	return ""
}

// startServer runs the server that command makes to listen on addr with
// its data in data, a fresh folder under dir, and returns both once it is
// ready. Prometheus and Alertmanager tell the port they took for port 0
// only in their logs, so the test picks a free port and hands it over
// instead. Another program may take that port first, and the server then
// exits at once: that is retried on a new port, a few times.
func startServer(t *testing.T, name, dir string,
	command func(addr, data string) *exec.Cmd) (addr, data string) {
	t.Helper()
	const attempts = 3
	for attempt := 1; attempt <= attempts; attempt++ {
		data := filepath.Join(dir, fmt.Sprint(attempt))
		addr, portTaken := runServer(t, name, data, func(addr string) *exec.Cmd {
			return command(addr, data)
		})
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
func runServer(t *testing.T, name, dir string,
	command func(addr string) *exec.Cmd) (addr string, portTaken bool) {
	t.Helper()
	logFile, err := os.Create(dir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	addr = freeAddr(t)
	cmd := command(addr)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once Wait has returned waitErr, so that any number
	// of readers see it.
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
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
	status := getJSON(t, string(p), path, params, &answer)
	if answer.Status != "success" {
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
	params := url.Values{
		"query": {expr},
		"time":  {fmt.Sprint(float64(at.UnixMilli()) / 1000)},
	}
	p.get(t, "/api/v1/query", params, &data)
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
