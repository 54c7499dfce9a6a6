package blocklag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// chainNode is a provider that answers eth_blockNumber with its height and
// eth_chainId with a result the test sets, and counts the requests of each
// method.
type chainNode struct {
	*httptest.Server

	mu     sync.Mutex
	result string // eth_chainId's result as JSON text; "" answers 503
	calls  map[string]int
}

func newChainNode(t *testing.T, height uint64, result string) *chainNode {
	t.Helper()
	n := &chainNode{result: result, calls: map[string]int{}}
	n.Server = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		method := readRequest(t, r).Method
		n.mu.Lock()
		n.calls[method]++
		result := n.result
		n.mu.Unlock()
		switch {
		case method == "eth_blockNumber":
			io.WriteString(w, answer([]byte("1"), height))
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

func (n *chainNode) setResult(result string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.result = result
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
			const want = `blocklag: endpoint "other": chain ID 0xaa36a7, want 0x1`
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

func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	n, good := newChainNode(t, 100, ""), newChainNode(t, 100, `"0x1"`)
	m := mustNew(t, Config{Endpoints: named("n", n.URL, "good", good.URL), ChainID: 1})

	if err := check(m); err == nil {
		t.Fatal("a failed chain ID request passed")
	}
	if m.Eligible("n") {
		t.Error("a provider whose chain ID request failed is eligible")
	}
	n.setResult(`"0x1"`)
	for i := 2; i <= 4; i++ {
		if err := check(m); err != nil {
			t.Fatalf("Check %d: %v", i, err)
		}
		if !m.Eligible("n") {
			t.Errorf("after Check %d the confirmed provider is not eligible", i)
		}
	}
	if got := n.count("eth_chainId"); got != 2 {
		t.Errorf("%d chain ID requests, want 2: one that failed and one that confirmed", got)
	}
	if got := n.count("eth_blockNumber"); got != 4 {
		t.Errorf("%d height probes over four Checks, want 4", got)
	}
}

// A right chain ID confirms the provider even in a Check whose height probe
// failed: the two answers are judged apart.
func TestChainIDConfirmedWhileHeightFails(t *testing.T) {
	var heightFails sync.Once
	var chainCalls int
	var mu sync.Mutex
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch readRequest(t, r).Method {
		case "eth_chainId":
			mu.Lock()
			chainCalls++
			mu.Unlock()
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
		default:
			failed := false
			heightFails.Do(func() { failed = true })
			if failed {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			io.WriteString(w, answer([]byte("1"), 7))
		}
	})
	m := mustNew(t, Config{Endpoints: named("n", srv.URL), ChainID: 1})
	pe := probeErrors(t, check(m))["n"]
	if pe == nil || pe.Err.Error() != "HTTP status 502" {
		t.Fatalf("first Check's error %v, want the height probe's HTTP status 502", pe)
	}
	if err := check(m); err != nil || !m.Eligible("n") {
		t.Fatalf("second Check: %v, eligible %v; want nil and true", err, m.Eligible("n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if chainCalls != 1 {
		t.Errorf("%d chain ID requests, want 1", chainCalls)
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
		if method == "eth_chainId" {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
			return
		}
		io.WriteString(w, answer([]byte("1"), 5))
	})
	m := mustNew(t, Config{Endpoints: named("n", srv.URL), ChainID: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Check(ctx); err != nil {
		t.Fatalf("Check: %v (were the two requests sent one after the other?)", err)
	}
}

func TestChainIDRequestUnderProbeTimeout(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if readRequest(t, r).Method == "eth_chainId" {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, answer([]byte("1"), 5))
	})
	fine := newChainNode(t, 5, `"0x1"`)
	m := mustNew(t, Config{Endpoints: named("hung", srv.URL, "fine", fine.URL), ChainID: 1, ProbeTimeout: 50 * time.Millisecond})
	pe := probeErrors(t, check(m))["hung"]
	if pe == nil || !errors.Is(pe, context.DeadlineExceeded) || !strings.HasPrefix(pe.Err.Error(), "chain ID request: timed out after 50ms") {
		t.Fatalf("hung provider's error %v, want a chain ID request timeout", pe)
	}
	if got := verdicts(m, "hung", "fine"); got[0] || !got[1] {
		t.Errorf("verdicts %v, want only the confirmed provider eligible", got)
	}
}
