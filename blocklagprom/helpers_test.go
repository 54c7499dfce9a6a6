package blocklagprom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
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
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
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
	return newMonitorWith(t, n, func(*blocklag.Config) {})
}

// newMonitorWith is newMonitor with its Config changed by tune before New,
// for a test that needs a setting the others leave at its default.
func newMonitorWith(t *testing.T, n int, tune func(*blocklag.Config)) (*blocklag.Monitor, []*node) {
	t.Helper()
	nodes := make([]*node, n)
	endpoints := make([]failnext.Endpoint, n)
	for i := range nodes {
		nodes[i] = newNode(t)
		endpoints[i] = failnext.Endpoint{ID: failnext.EndpointID(rune('a' + i)), URL: nodes[i].URL}
	}
	cfg := blocklag.Config{Endpoints: endpoints, MaxLag: 3, ChainID: mainnet, ProbeTimeout: probeTimeout}
	tune(&cfg)
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

// assertSeries fails t for each series of want that got lacks or holds
// with another value; series of got that want does not name are not
// checked.
func assertSeries(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if v, ok := got[series]; !ok || v != w {
			t.Errorf("%s = %v (present: %v), want %v", series, v, ok, w)
		}
	}
}

// assertLintClean fails t when testutil.CollectAndLint finds a problem in
// what c collects.
func assertLintClean(t *testing.T, c prometheus.Collector) {
	t.Helper()
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// allReasons is every reason a probe can fail for, in sorted order,
// written out here as the oracle, apart from the Stats that the collector
// reads them from.
var allReasons = []string{
	"bad_answer", "http_status", "rate_limited", "rpc_error", "timeout", "transport", "unauthorized", "wrong_chain",
}

// update makes the tests that compare with golden files write those files
// instead: go test -run TestCollectorExports -update, then read the diff.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests gather")

// assertGolden compares what g gathers with the exposition in the golden
// file testdata/name.prom, or writes it there when -update is set.
func assertGolden(t *testing.T, g prometheus.Gatherer, name string) {
	t.Helper()
	path := filepath.Join("testdata", name+".prom")
	if *update {
		families, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		for _, f := range families {
			if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, text.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	defer want.Close()
	if err := testutil.GatherAndCompare(g, want); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// gauges gathers g and returns every gauge series, as
// name{label="value",...}, with its value; counters does the same for the
// counters. They report a failed Gather with t.Error, so that scraping
// goroutines may call them too.
func gauges(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return seriesOf(gatherAll(t, g), dto.MetricType_GAUGE)
}

func counters(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	return seriesOf(gatherAll(t, g), dto.MetricType_COUNTER)
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
		var path string
		if path, err = exec.LookPath(name); err == nil {
			return path
		}
	}
	name := strings.Join(names, " or ")
	if required, _ := strconv.ParseBool(os.Getenv(requirePrometheus)); required {
		t.Fatalf("%s is needed when %s is set: %v (on Debian: apt-get install %s)", name, requirePrometheus, err, pkg)
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
