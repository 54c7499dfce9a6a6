package blocklagprom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

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
// also under the race detector with a dozen probes at once.
const probeTimeout = time.Second

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

// checkedMonitor is newMonitor(t, n) after one Check per entry of checks,
// in which the nodes give those answers.
func checkedMonitor(t *testing.T, n int, checks [][]answer) (*blocklag.Monitor, []*node) {
	t.Helper()
	m, nodes := newMonitor(t, n)
	for _, answers := range checks {
		checkWith(t, m, nodes, answers)
	}
	return m, nodes
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

// allReasons is the oracle's list of reasons, blocklagprom.EightReasons,
// as label values.
var allReasons = func() []string {
	var out []string
	for _, r := range blocklagprom.EightReasons {
		out = append(out, string(r))
	}
	return out
}()

// seconds is t as the collector's timestamps give it, in Unix seconds.
func seconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }
