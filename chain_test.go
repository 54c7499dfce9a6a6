package blocklag

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// chainNode is a provider that answers eth_blockNumber with its height and
// eth_chainId with a result the test sets, and counts the requests of each
// method.
type chainNode struct {
	*httptest.Server

	mu         sync.Mutex
	result     string // eth_chainId's result as JSON text; "" answers 503
	heightDown bool   // eth_blockNumber answers 502
	calls      map[string]int
}

func newChainNode(t *testing.T, height uint64, result string) *chainNode {
	t.Helper()
	n := &chainNode{result: result, calls: map[string]int{}}
	n.Server = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		method := readRequest(t, r).Method
		n.mu.Lock()
		n.calls[method]++
		result, heightDown := n.result, n.heightDown
		n.mu.Unlock()
		switch {
		case method == "eth_blockNumber" && heightDown:
			w.WriteHeader(http.StatusBadGateway)
		case method == "eth_blockNumber":
			io.WriteString(w, answer(json.RawMessage("1"), height))
		case method != "eth_chainId":
			t.Errorf("provider got method %q", method)
		case result == "":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":`+result+`}`)
		}
	})
	return n
}

// set changes how the node answers from its next request on.
func (n *chainNode) set(result string, heightDown bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.result, n.heightDown = result, heightDown
}

// count returns how many requests for method the node has received.
func (n *chainNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

func TestProviderOnAnotherChainIsNeverEligible(t *testing.T) {
	tests := []struct {
		name    string
		height  uint64 // of the provider on another chain
		wantRef uint64
	}{
		{"when it is far ahead, and the reference stays the honest maximum", 1_000_000, 100},
		{"when its height is plausible", 100, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newChainNode(t, 100, `"0x1"`), newChainNode(t, 98, `"0x1"`)
			other := newChainNode(t, tt.height, `"0xaa36a7"`)
			m := mustNew(t, Config{Endpoints: named("a", a.URL, "b", b.URL, "other", other.URL), MaxLag: 3, ChainID: 1})
			err := check(m)
			if got, want := verdicts(m, "a", "b", "other"), []bool{true, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("verdicts %v, want %v", got, want)
			}
			const want = `blocklag: endpoint "other": chain ID 11155111 (0xaa36a7), want 1`
			if err == nil || err.Error() != want {
				t.Errorf("Check error %v, want %q", err, want)
			}
			st := m.Status()
			if st.Reference != tt.wantRef {
				t.Errorf("reference %d, want %d", st.Reference, tt.wantRef)
			}
			if e := st.Endpoints[2]; e.Height != 0 || e.Err == nil || e.Err.Error() != want {
				t.Errorf("Status of the other chain's provider = %+v, want height 0 and error %q", e, want)
			}
		})
	}
}

func TestChainIDRequestFailures(t *testing.T) {
	tests := []struct {
		name, result, want string
	}{
		{"an HTTP error status fails the probe", "", `chain ID request: HTTP status 503`},
		{"a non-canonical quantity fails the probe", `"0x01"`, `chain ID request: result "0x01" is not a canonical hex quantity`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good, bad := newChainNode(t, 100, `"0x1"`), newChainNode(t, 100, tt.result)
			m := mustNew(t, Config{Endpoints: named("good", good.URL, "bad", bad.URL), ChainID: 1})
			pe := probeErrors(t, check(m))["bad"]
			if pe == nil || pe.Err.Error() != tt.want {
				t.Fatalf("bad's probe error %v, want %q", pe, tt.want)
			}
			if got := verdicts(m, "good", "bad"); !got[0] || got[1] {
				t.Errorf("verdicts %v, want the confirmed provider only", got)
			}
		})
	}
}

// An endpoint is asked its chain ID in every Check until it answers right,
// and never again after that; until then it is not eligible. Its chain ID
// and height answers are judged apart.
func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	tests := []struct {
		name       string
		result     string // the chain ID answer in the first two Checks
		heightDown bool   // the height probe fails in the first two Checks
		want       string // the probe's error in those Checks
		confirms   bool   // the first Check already confirms
	}{
		{"a failed chain ID request", "", false, "chain ID request: HTTP status 503", false},
		{"another chain", `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", false},
		{"both requests failing, reported as the chain ID failure", "", true, "chain ID request: HTTP status 503", false},
		{"a failed height probe beside the right chain", `"0x1"`, true, "HTTP status 502", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, good := newChainNode(t, 100, tt.result), newChainNode(t, 100, `"0x1"`)
			n.set(tt.result, tt.heightDown)
			m := mustNew(t, Config{Endpoints: named("n", n.URL, "good", good.URL), ChainID: 1})
			for i := 1; i <= 2; i++ {
				if pe := probeErrors(t, check(m))["n"]; pe == nil || pe.Err.Error() != tt.want {
					t.Fatalf("Check %d: error %v, want %q", i, pe, tt.want)
				}
				if m.Eligible("n") {
					t.Errorf("Check %d: the failed provider is eligible", i)
				}
			}
			n.set(`"0x1"`, false)
			for i := 3; i <= 4; i++ {
				if err := check(m); err != nil || !m.Eligible("n") {
					t.Fatalf("Check %d: %v, eligible %v; want nil and true", i, err, m.Eligible("n"))
				}
			}
			want := 3 // two refused, one confirming
			if tt.confirms {
				want = 1
			}
			if got := n.count("eth_chainId"); got != want {
				t.Errorf("%d chain ID requests over four Checks, want %d", got, want)
			}
			if got := n.count("eth_blockNumber"); got != 4 {
				t.Errorf("%d height probes over four Checks, want 4", got)
			}
		})
	}
}

// Each handler holds its answer until the other request of the same probe
// has arrived, so a Check that sent them one after the other would never
// finish; the deadline only turns that hang into a failure.
func TestChainIDRequestRunsAlongsideHeightProbe(t *testing.T) {
	arrived := map[string]chan struct{}{"eth_blockNumber": make(chan struct{}), "eth_chainId": make(chan struct{})}
	other := map[string]string{"eth_blockNumber": "eth_chainId", "eth_chainId": "eth_blockNumber"}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		method := readRequest(t, r).Method
		close(arrived[method])
		select {
		case <-arrived[other[method]]:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, answer(json.RawMessage("1"), 1)) // height 1, and chain ID 1
	})
	m := mustNew(t, Config{Endpoints: named("n", srv.URL), ChainID: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Check(ctx); err != nil {
		t.Fatalf("Check: %v (were the two requests sent one after the other?)", err)
	}
}
