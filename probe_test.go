package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// Every request goes through Config.Base, which is never closed, and is a
// POST to the URL as configured, with JSON headers and one of two exact
// bodies; the chain ID request goes out only with ChainID set, and only
// until the provider has confirmed.
func TestProbeRequest(t *testing.T) {
	const (
		height = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
		chain  = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
	)
	tests := []struct {
		name    string
		chainID uint64
		want    map[string]int // how many times each body is sent over three Checks of two endpoints
	}{
		{"without ChainID only height probes are sent", 0, map[string]int{height: 6}},
		{"with ChainID each endpoint is asked its chain once, in the first Check", 1, map[string]int{height: 6, chain: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			sent := map[string]int{}
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method != http.MethodPost:
					t.Errorf("method %s, want POST", r.Method)
				case r.URL.RequestURI() != "/v3/key?apikey=k&x=1":
					t.Errorf("request URI %s, want the configured one", r.URL.RequestURI())
				case r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json":
					t.Errorf("headers %v lack the JSON content type or accept", r.Header)
				case r.Header.Get("Accept-Encoding") != "identity":
					t.Errorf("Accept-Encoding %q, want identity, so that the size limit counts the bytes sent", r.Header.Get("Accept-Encoding"))
				}
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				sent[string(body)]++
				mu.Unlock()
				io.WriteString(w, answer(json.RawMessage("1"), 1)) // height 1, and chain ID 1
			})
			url := srv.URL + "/v3/key?apikey=k&x=1"
			base := &closeCounter{}
			m := mustNew(t, Config{Endpoints: named("a", url, "b", url), ChainID: tt.chainID, Base: base})
			for range 3 {
				if err := check(m); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(sent, tt.want) {
				t.Errorf("sent %v, want exactly %v", sent, tt.want)
			}
			if n := int(base.probes.Load()); n != tt.want[height]+tt.want[chain] || base.closes.Load() != 0 {
				t.Errorf("Base saw %d requests and %d closes, want all requests and no close", n, base.closes.Load())
			}
		})
	}
}

// closeCounter is a Base that counts requests and calls to
// CloseIdleConnections.
type closeCounter struct {
	probes, closes atomic.Int32
}

func (c *closeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.probes.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func (c *closeCounter) CloseIdleConnections() { c.closes.Add(1) }

// Any status but 200 fails the probe, whatever the body holds, and the
// provider is asked once: a failed probe is not retried.
func TestStatusOtherThanOKFailsProbeOnce(t *testing.T) {
	for _, status := range []int{201, 204, 404, 429, 500, 503} {
		t.Run(fmt.Sprintf("status %d fails after one request", status), func(t *testing.T) {
			var hits atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(status)
				io.WriteString(w, valid) // not sent with 204, which has no body
			})
			m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
			want := fmt.Sprintf("HTTP status %d", status)
			if pe := probeErrors(t, check(m))["a"]; pe == nil || pe.Err.Error() != want || hits.Load() != 1 {
				t.Errorf("probe error %v after %d requests, want %q after 1", pe, hits.Load(), want)
			}
		})
	}
}

// An answer is read as long as its Content-Length says, and a Base that
// hands over a body of another length fails the probe, as one without a
// length is read up to the limit.
func TestAnswerLength(t *testing.T) {
	const broken = "<a read error>" // at the end of a body, where reading it fails
	tests := []struct {
		name   string
		length int64 // the Content-Length the Base reports
		body   string
		want   string // "" means height 100 is read; else part of the error
		kind   error  // what the error matches with errors.Is
	}{
		{"a body as long as it says", int64(len(valid)), valid, "", nil},
		{"a body without a length", -1, valid, "", nil},
		{"a body longer than it says", int64(len(valid)), valid + " trailing", "longer than its Content-Length", ErrBadAnswer},
		{"a body one byte longer than it says", int64(len(valid)) - 1, valid, "longer than its Content-Length", ErrBadAnswer},
		{"a body one byte shorter than it says", int64(len(valid)) + 1, valid, "unexpected EOF", io.ErrUnexpectedEOF},
		{"a body far shorter than a length above the limit", 5000, valid, "unexpected EOF", io.ErrUnexpectedEOF},
		{"a body far shorter than a length of 1 GiB", 1 << 30, valid, "unexpected EOF", io.ErrUnexpectedEOF},
		{"an empty body with a length", int64(len(valid)), "", "unexpected EOF", io.ErrUnexpectedEOF},
		{"a read error after as much as it says", int64(len(valid)), valid + broken, "connection reset", nil},
		{"a length above the limit", maxBody + 1, valid + strings.Repeat(" ", maxBody), "larger than 4096", ErrBadAnswer},
		{"a body above the limit with a length of 1 GiB", 1 << 30, valid + strings.Repeat(" ", maxBody), "larger than 4096", ErrBadAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				text, failing := strings.CutSuffix(tt.body, broken)
				var body io.Reader = strings.NewReader(text)
				if failing {
					body = io.MultiReader(body, iotest.ErrReader(errors.New("connection reset")))
				}
				return &http.Response{StatusCode: http.StatusOK, ContentLength: tt.length, Body: io.NopCloser(body), Header: http.Header{}, Request: r}, nil
			})
			m := mustNew(t, Config{Endpoints: named("a", "http://a.example"), Base: base})
			err := check(m)
			if tt.want == "" {
				if st := m.Status(); err != nil || st.Reference != 100 {
					t.Errorf("Check = %v, reference %d; want height 100 read", err, st.Reference)
				}
				return
			}
			pe := probeErrors(t, err)["a"]
			if pe == nil || !strings.Contains(pe.Error(), tt.want) {
				t.Fatalf("Check = %v, want a ProbeError saying %q", err, tt.want)
			}
			if tt.kind != nil && !errors.Is(pe, tt.kind) {
				t.Errorf("%v does not match %v", pe, tt.kind)
			}
		})
	}
}

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

func newChainNode(t *testing.T, height uint64, result string, heightDown bool) *chainNode {
	t.Helper()
	n := &chainNode{result: result, heightDown: heightDown, calls: map[string]int{}}
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

// confirm makes the node answer both requests right from now on.
func (n *chainNode) confirm() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.result, n.heightDown = `"0x1"`, false
}

// count returns how many requests for method the node has received.
func (n *chainNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

// An endpoint is asked its chain ID in every Check until it answers right,
// and never again after that. Until then it fails its probe, with an error
// that says why, and its height counts for nothing: it is not eligible, and
// the reference stays the confirmed provider's even when the other is far
// ahead. Its chain ID and height answers are judged apart.
func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	tests := []struct {
		name       string
		height     uint64 // the endpoint's; the confirmed one is at 100
		result     string // the chain ID answer in the first two Checks
		heightDown bool   // the height probe fails in the first two Checks
		want       string // the probe's error in those Checks
		confirms   bool   // the first Check already confirms
	}{
		{"after a failed chain ID request", 100, "", false, "chain ID request: HTTP status 503", false},
		{"after a chain ID that is not canonical", 100, `"0x01"`, false, `chain ID request: result "0x01" is not a canonical hex quantity`, false},
		{"after naming another chain at a plausible height", 100, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", false},
		{"after naming another chain far ahead", 1_000_000, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", false},
		{"after both requests failed, reported as the chain ID failure", 100, "", true, "chain ID request: HTTP status 503", false},
		{"after a failed height probe beside the right chain", 100, `"0x1"`, true, "HTTP status 502", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, good := newChainNode(t, tt.height, tt.result, tt.heightDown), newChainNode(t, 100, `"0x1"`, false)
			m := mustNew(t, Config{Endpoints: named("n", n.URL, "good", good.URL), ChainID: 1})
			for i := 1; i <= 2; i++ {
				errs := probeErrors(t, check(m))
				if pe := errs["n"]; len(errs) != 1 || pe == nil || pe.Err.Error() != tt.want {
					t.Fatalf("Check %d: errors %v, want only n's, saying %q", i, errs, tt.want)
				}
				wantEligible(t, m, verdicts{"n": false, "good": true})
				if st := m.Status(); st.Reference != 100 || st.Endpoints[0].Height != 0 || st.Endpoints[0].Err != errs["n"] {
					t.Errorf("Check %d: Status %+v, want reference 100, and n with its error and no height", i, st)
				}
			}
			n.confirm()
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
