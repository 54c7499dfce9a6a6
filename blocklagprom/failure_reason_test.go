package blocklagprom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// The gauges whose exposition these tests compare in full; the timestamps
// are left out, since their values change from run to run.
var untimed = []string{
	"blocklag_provider_eligible",
	"blocklag_provider_up",
	"blocklag_provider_height",
	"blocklag_provider_lag_blocks",
	"blocklag_provider_failure_reason",
	"blocklag_reference_height",
}

// The help and type lines of the exposition, as the collector writes them.
const (
	eligibleHead = `# HELP blocklag_provider_eligible Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.
# TYPE blocklag_provider_eligible gauge
`
	upHead = `# HELP blocklag_provider_up Whether the provider's probe succeeded (1) or failed (0) in the latest published check.
# TYPE blocklag_provider_up gauge
`
	heightHead = `# HELP blocklag_provider_height Block height the provider reported in the latest published check.
# TYPE blocklag_provider_height gauge
`
	lagHead = `# HELP blocklag_provider_lag_blocks Blocks the provider was behind the reference height in the latest published check.
# TYPE blocklag_provider_lag_blocks gauge
`
	reasonHead = `# HELP blocklag_provider_failure_reason Reason the provider's probe failed in the latest published check, as ProbeError.Reason names it (value always 1).
# TYPE blocklag_provider_failure_reason gauge
`
	referenceHead = `# HELP blocklag_reference_height Block height that lag was measured from in the latest published check.
# TYPE blocklag_reference_height gauge
`
)

// probeTimeout bounds each probe of the Monitors below, so that a node that
// hangs fails its probe as a timeout. A loopback answer takes far less,
// also under the race detector with a dozen probes at once.
const probeTimeout = time.Second

// newMonitor returns a Monitor that requires mainnet, with MaxLag 3, over n
// fake nodes whose IDs are "a", "b", "c" and so on.
func newMonitor(t *testing.T, n int) (*blocklag.Monitor, []*node) {
	t.Helper()
	nodes := make([]*node, n)
	endpoints := make([]failnext.Endpoint, n)
	for i := range nodes {
		nodes[i] = newNode(t)
		endpoints[i] = failnext.Endpoint{ID: failnext.EndpointID(rune('a' + i)), URL: nodes[i].URL}
	}
	m, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3, ChainID: mainnet, ProbeTimeout: probeTimeout})
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

// A failed provider carries one failure_reason series, with the reason
// its probe failed in the check in force; a provider that answered carries
// none, and neither does any provider while the Monitor is fail-open. The
// Monitors require mainnet, so that a provider on another chain fails too.
func TestFailureReasonFollowsTheCheckInForce(t *testing.T) {
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, one per node a, b, c...
		want   string     // the exposition of the untimed gauges
	}{
		{
			name:   "before any check no provider has a reason",
			checks: nil,
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 1
`,
		},
		{
			name:   "a check in which every probe fails leaves the fail-open state without reasons",
			checks: [][]answer{{cut, unavailable}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 1
`,
		},
		{
			name:   "a provider cut off has the reason transport and one that hangs has timeout",
			checks: [][]answer{{healthy, cut, hang}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
blocklag_provider_up{provider="c"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="transport"} 1
blocklag_provider_failure_reason{provider="c",reason="timeout"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider answering HTTP 429 or RPC error -32005 is rate limited",
			checks: [][]answer{{healthy, tooMany, limitErr}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
blocklag_provider_up{provider="c"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="c",reason="rate_limited"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider on another chain has the reason wrong_chain and no height",
			checks: [][]answer{{behind, otherChain}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="wrong_chain"} 1
` + referenceHead + `blocklag_reference_height 100
`,
		},
		{
			name:   "each failed provider has its own reason and those that answered have none",
			checks: [][]answer{{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
blocklag_provider_eligible{provider="d"} 0
blocklag_provider_eligible{provider="e"} 0
blocklag_provider_eligible{provider="f"} 0
blocklag_provider_eligible{provider="g"} 0
blocklag_provider_eligible{provider="h"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 1
blocklag_provider_up{provider="c"} 0
blocklag_provider_up{provider="d"} 0
blocklag_provider_up{provider="e"} 0
blocklag_provider_up{provider="f"} 0
blocklag_provider_up{provider="g"} 0
blocklag_provider_up{provider="h"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
blocklag_provider_height{provider="b"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
blocklag_provider_lag_blocks{provider="b"} 10
` + reasonHead + `blocklag_provider_failure_reason{provider="c",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="d",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="e",reason="unauthorized"} 1
blocklag_provider_failure_reason{provider="f",reason="http_status"} 1
blocklag_provider_failure_reason{provider="g",reason="wrong_chain"} 1
blocklag_provider_failure_reason{provider="h",reason="transport"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a check in which every probe fails keeps the reasons of the check in force",
			checks: [][]answer{{healthy, cut}, {unavailable, otherChain}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="transport"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider whose reason changes has only its new one",
			checks: [][]answer{{healthy, cut}, {healthy, hang}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="timeout"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider that recovers loses its reason",
			checks: [][]answer{{healthy, cut}, {healthy, behind}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 1
` + heightHead + `blocklag_provider_height{provider="a"} 110
blocklag_provider_height{provider="b"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
blocklag_provider_lag_blocks{provider="b"} 10
` + referenceHead + `blocklag_reference_height 110
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providers := 2
			for _, answers := range tt.checks {
				providers = max(providers, len(answers))
			}
			m, nodes := newMonitor(t, providers)
			for _, answers := range tt.checks {
				checkWith(t, m, nodes, answers)
			}

			c := blocklagprom.NewCollector(m)
			if err := testutil.CollectAndCompare(c, strings.NewReader(tt.want), untimed...); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}
