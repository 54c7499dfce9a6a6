package blocklag_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// fakeNode starts a JSON-RPC server that answers eth_blockNumber with
// height, and each method named in answers (method, result, method,
// result...) with the result that follows it. Like many simple providers,
// it answers every request with id 1. Real code points at real providers
// instead.
func fakeNode(height string, answers ...string) *httptest.Server {
	results := map[string]string{"eth_blockNumber": height}
	for i := 0; i+1 < len(answers); i += 2 {
		results[answers[i]] = answers[i+1]
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Method string }
		json.NewDecoder(r.Body).Decode(&req)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%q}`, results[req.Method])
	}))
}

// A Monitor marks the lagging primary ineligible, and a failnext
// transport using monitor.Eligible sends a request meant for the primary to
// the backup instead.
func ExampleMonitor() {
	primary := fakeNode("0x64", "eth_getBalance", "0x0") // block 100
	defer primary.Close()
	backup := fakeNode("0x6e", "eth_getBalance", "0x2a") // block 110
	defer backup.Close()

	endpoints := []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "backup", URL: backup.URL},
	}
	monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3})
	if err != nil {
		panic(err)
	}
	if err := monitor.Check(context.Background()); err != nil {
		fmt.Println("check:", err)
	}
	fmt.Println("primary eligible:", monitor.Eligible("primary"))
	fmt.Println("backup eligible:", monitor.Eligible("backup"))

	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}
	ctx := failnext.WithFailoverAllowed(context.Background())
	const zero = "0x0000000000000000000000000000000000000000"
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + zero + `","latest"]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, primary.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var answer struct{ Result string }
	json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println("balance:", answer.Result)

	// Output:
	// primary eligible: false
	// backup eligible: true
	// balance: 0x2a
}

// With Quorum above one, the reference is the Quorum-th highest height, so
// a provider far ahead of the others (buggy, say) no longer makes them all
// look behind. Each provider is named by its height.
func ExampleConfig_quorum() {
	var endpoints []failnext.Endpoint
	for _, height := range []uint64{1000000000, 100, 99, 90} {
		node := fakeNode(fmt.Sprintf("0x%x", height))
		defer node.Close()
		id := failnext.EndpointID(fmt.Sprint(height))
		endpoints = append(endpoints, failnext.Endpoint{ID: id, URL: node.URL})
	}
	for _, quorum := range []int{0, 2, 3, 5} {
		monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3, Quorum: quorum})
		if err != nil {
			panic(err)
		}
		if err := monitor.Check(context.Background()); err != nil {
			panic(err)
		}
		st := monitor.Status()
		var kept []failnext.EndpointID
		for _, e := range st.Endpoints {
			if e.Eligible {
				kept = append(kept, e.ID)
			}
		}
		fmt.Printf("Quorum %d: reference %d, eligible %v\n", quorum, st.Reference, kept)
	}

	// Output:
	// Quorum 0: reference 1000000000, eligible [1000000000]
	// Quorum 2: reference 100, eligible [1000000000 100 99]
	// Quorum 3: reference 99, eligible [1000000000 100 99]
	// Quorum 5: reference 90, eligible [1000000000 100 99 90]
}

// Quorum keeps a provider far ahead from making the others ineligible,
// but not from being read: it stays eligible with lag 0. MaxAhead leaves
// out a provider more than that many blocks above the reference.
func ExampleConfig_maxAhead() {
	var endpoints []failnext.Endpoint
	for i, height := range []string{"0x64", "0x64", "0x10000000000"} { // 100, 100, 2^40
		node := fakeNode(height)
		defer node.Close()
		id := failnext.EndpointID("abc"[i : i+1])
		endpoints = append(endpoints, failnext.Endpoint{ID: id, URL: node.URL})
	}
	for _, maxAhead := range []uint64{0, 10} {
		monitor, err := blocklag.New(blocklag.Config{
			Endpoints: endpoints,
			MaxLag:    3,
			Quorum:    2,
			MaxAhead:  maxAhead,
		})
		if err != nil {
			panic(err)
		}
		if err := monitor.Check(context.Background()); err != nil {
			panic(err)
		}
		c := monitor.Status().Endpoints[2]
		fmt.Printf("MaxAhead %d: c eligible %v, lag %d, %d blocks ahead\n",
			maxAhead, c.Eligible, c.Lag, c.Ahead)
	}

	// Output:
	// MaxAhead 0: c eligible true, lag 0, 1099511627676 blocks ahead
	// MaxAhead 10: c eligible false, lag 0, 1099511627676 blocks ahead
}

// With ChainID set, a provider serving another chain fails its probe, and
// its height counts toward nothing. Code tells this failure from others by
// its Reason and type, without reading any text.
func ExampleConfig_chainID() {
	mainnet := fakeNode("0x64", "eth_chainId", "0x1")
	defer mainnet.Close()
	sepolia := fakeNode("0x7a1200", "eth_chainId", "0xaa36a7") // far higher, on another chain
	defer sepolia.Close()

	monitor, err := blocklag.New(blocklag.Config{
		Endpoints: []failnext.Endpoint{{ID: "mainnet", URL: mainnet.URL}, {ID: "sepolia", URL: sepolia.URL}},
		ChainID:   1,
	})
	if err != nil {
		panic(err)
	}
	err = monitor.Check(context.Background())
	var pe *blocklag.ProbeError
	var chain *blocklag.ChainIDError
	if errors.As(err, &pe) && errors.As(pe, &chain) {
		fmt.Println(pe)
		fmt.Printf("%s: %s, chain %d instead of %d\n", pe.Endpoint, pe.Reason(), chain.Got, chain.Want)
	}
	fmt.Println("mainnet eligible:", monitor.Eligible("mainnet"), "at", monitor.Status().Reference)

	// Output:
	// blocklag: endpoint "sepolia": chain ID 11155111 (0xaa36a7), want 1
	// sepolia: wrong_chain, chain 11155111 instead of 1
	// mainnet eligible: true at 100
}

// A Base carries the probes, here adding the header in which a provider
// takes its key. It starts from a clone of http.DefaultTransport, whose
// dial and TLS timeouts it keeps.
func ExampleConfig_base() {
	node := fakeNode("0x64")
	defer node.Close()
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k3y" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		node.Config.Handler.ServeHTTP(w, r)
	}))
	defer guarded.Close()

	base := withKey{next: http.DefaultTransport.(*http.Transport).Clone(), key: "k3y"}
	monitor, err := blocklag.New(blocklag.Config{
		Endpoints: []failnext.Endpoint{{ID: "guarded", URL: guarded.URL}},
		Base:      base,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("check:", monitor.Check(context.Background()))
	fmt.Println("guarded eligible:", monitor.Eligible("guarded"))

	// Output:
	// check: <nil>
	// guarded eligible: true
}

// withKey sends each request with an X-Api-Key header. A RoundTripper must
// not change the request it is given, so it changes a clone.
type withKey struct {
	next http.RoundTripper
	key  string
}

func (b withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", b.key)
	return b.next.RoundTrip(r)
}

// With ProbeTimeout set, a provider that never answers fails its probe when
// the timeout runs out, and the Check publishes with it ineligible.
func ExampleConfig_probeTimeout() {
	fast := fakeNode("0x64")
	defer fast.Close()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hung.Close()
	defer close(release) // before hung.Close, which waits for its handler

	monitor, err := blocklag.New(blocklag.Config{
		Endpoints:    []failnext.Endpoint{{ID: "fast", URL: fast.URL}, {ID: "hung", URL: hung.URL}},
		ProbeTimeout: time.Second,
	})
	if err != nil {
		panic(err)
	}
	err = monitor.Check(context.Background())
	fmt.Println("timed out:", errors.Is(err, context.DeadlineExceeded))
	fmt.Println("fast eligible:", monitor.Eligible("fast"))
	fmt.Println("hung eligible:", monitor.Eligible("hung"))

	// Output:
	// timed out: true
	// fast eligible: true
	// hung eligible: false
}

// Check's error is one line, fit for a log, that holds the text of each of
// its ProbeErrors; code reads each failure from its Errors, in configured
// order, by Reason and by type. Infura puts its
// JSON-RPC error in the body of its 429, beside a Retry-After header: the
// *StatusError keeps both, and errors.As finds the RPC error through it.
func ExampleCheckError() {
	primary := fakeNode("0x64")
	defer primary.Close()
	infura := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		const limit = `{"code":-32005,"message":"rate limited"}`
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":`+limit+`}`)
	}))
	defer infura.Close()

	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "infura", URL: infura.URL},
	}})
	if err != nil {
		panic(err)
	}
	err = monitor.Check(context.Background())
	var ce *blocklag.CheckError
	if errors.As(err, &ce) {
		fmt.Printf("%d failed, published: %v\n", len(ce.Errors), ce.Published)
		for _, pe := range ce.Errors {
			fmt.Println(pe)
			var se *blocklag.StatusError
			var rpc *blocklag.RPCError
			if errors.As(pe, &se) && errors.As(pe, &rpc) {
				fmt.Printf("%s: %s, status %d, RPC code %d, retry after %v\n",
					pe.Endpoint, pe.Reason(), se.StatusCode, rpc.Code, se.RetryAfter)
			}
		}
	}
	fmt.Println("infura eligible:", monitor.Eligible("infura"))

	// Output:
	// 1 failed, published: true
	// blocklag: endpoint "infura": HTTP status 429: RPC error -32005: "rate limited", retry after 1m0s
	// infura: rate_limited, status 429, RPC code -32005, retry after 1m0s
	// infura eligible: false
}

// Status logs through log/slog as one group, with a group per provider
// under endpoints. Before the first Check it shows only the fail-open
// verdicts; after it, the reference and each provider's height and lag (a
// provider whose probe failed would show its reason and error instead).
// Each record is one line; this example breaks it before each key.
func ExampleMonitor_Status() {
	primary := fakeNode("0x64") // block 100
	defer primary.Close()
	backup := fakeNode("0x6e") // block 110
	defer backup.Close()

	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "backup", URL: backup.URL},
	}, MaxLag: 3})
	if err != nil {
		panic(err)
	}
	var line strings.Builder
	logger := slog.New(slog.NewTextHandler(&line, &slog.HandlerOptions{
		// Times and latencies differ from run to run, so this example
		// leaves them out.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindTime || a.Key == "latency_seconds" {
				return slog.Attr{}
			}
			return a
		},
	}))
	logger.Info("before the first check", "status", monitor.Status())
	if err := monitor.Check(context.Background()); err != nil {
		fmt.Println("check:", err)
	}
	logger.Info("lag check", "status", monitor.Status())
	fmt.Print(strings.ReplaceAll(line.String(), " status.", "\n  status."))

	// Output:
	// level=INFO msg="before the first check"
	//   status.max_lag=3
	//   status.endpoints.primary.eligible=true
	//   status.endpoints.backup.eligible=true
	// level=INFO msg="lag check"
	//   status.reference=110
	//   status.max_lag=3
	//   status.endpoints.primary.eligible=false
	//   status.endpoints.primary.height=100
	//   status.endpoints.primary.lag=10
	//   status.endpoints.backup.eligible=true
	//   status.endpoints.backup.height=110
	//   status.endpoints.backup.lag=0
}
