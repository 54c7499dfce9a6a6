package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

func TestNewRejectsBadConfig(t *testing.T) {
	const secret = "s3cr3t"
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error
	}{
		{"no endpoints", Config{}, "no endpoints"},
		{"an empty ID", Config{Endpoints: named("a", "http://x", "", "http://y")}, "endpoint 1: empty ID"},
		{"a repeated ID", Config{Endpoints: named("a", "http://x", "a", "http://y")}, `endpoint 1 ("a")`},
		{"a URL that does not parse", Config{Endpoints: named("a", "http://%zz/"+secret)}, `endpoint 0 ("a"): URL does not parse`},
		{"a relative URL", Config{Endpoints: named("a", "/v3/"+secret)}, "not absolute"},
		{"a scheme other than http", Config{Endpoints: named("a", "ws://x/"+secret)}, "scheme"},
		{"a URL without host", Config{Endpoints: named("a", "http:///"+secret)}, "no host"},
		{"a fragment", Config{Endpoints: named("a", "http://x/?k="+secret+"#frag")}, "fragment"},
		{"an empty fragment", Config{Endpoints: named("a", "http://x/"+secret+"#")}, "fragment"},
		{"userinfo in a bad URL", Config{Endpoints: named("a", "ftp://user:"+secret+"@x/")}, "scheme"},
		{"a negative ProbeTimeout", Config{Endpoints: named("a", "http://x"), ProbeTimeout: -1}, "ProbeTimeout"},
		{"a negative Quorum", Config{Endpoints: named("a", "http://x"), Quorum: -1}, "Quorum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.cfg)
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q leaks the URL", err)
			}
		})
	}
}

func TestNewCopiesEndpoints(t *testing.T) {
	p := newProvider(t, 10)
	eps := named("a", p.URL)
	m := mustNew(t, Config{Endpoints: eps})
	eps[0] = failnext.Endpoint{ID: "z", URL: "http://127.0.0.1:1"}
	if err := check(m); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !m.Eligible("a") || m.Eligible("z") || p.hits.Load() != 1 {
		t.Errorf("changing the caller's slice changed the Monitor")
	}
}

// closeCounter is a Base that counts probes and calls to CloseIdleConnections.
type closeCounter struct {
	probes, closes atomic.Int32
}

func (c *closeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.probes.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func (c *closeCounter) CloseIdleConnections() { c.closes.Add(1) }

func TestBase(t *testing.T) {
	p := newProvider(t, 10)
	t.Run("a nil Base probes through http.DefaultTransport", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("a", p.URL)})
		if err := check(m); err != nil || !m.Eligible("a") {
			t.Fatalf("Check = %v, eligible %v", err, m.Eligible("a"))
		}
	})
	t.Run("a custom Base carries every probe and is never closed", func(t *testing.T) {
		base := &closeCounter{}
		m := mustNew(t, Config{Endpoints: named("a", p.URL, "b", p.URL), Base: base})
		for range 3 {
			if err := check(m); err != nil {
				t.Fatal(err)
			}
		}
		if base.probes.Load() != 6 || base.closes.Load() != 0 {
			t.Errorf("Base saw %d probes and %d closes, want 6 and 0", base.probes.Load(), base.closes.Load())
		}
	})
}

func TestFailOpenUntilFirstPublish(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("a", "http://127.0.0.1:1", "b", "http://127.0.0.1:1")})
	if got := verdicts(m, "a", "b", "c", ""); !slices.Equal(got, []bool{true, true, false, false}) {
		t.Errorf("before any Check: a, b, c, \"\" = %v, want configured IDs only", got)
	}
	p := newProvider(t, 5)
	m = mustNew(t, Config{Endpoints: named("a", p.URL)})
	if err := check(m); err != nil {
		t.Fatal(err)
	}
	if m.Eligible("c") {
		t.Error("an unknown ID became eligible after a Check")
	}
}

func TestMonitorNotMadeByNew(t *testing.T) {
	for name, m := range map[string]*Monitor{"a nil Monitor": nil, "a zero Monitor": {}} {
		t.Run(name, func(t *testing.T) {
			if err := m.Check(context.Background()); err == nil {
				t.Error("Check returned nil")
			}
			if m.Eligible("a") || m.Eligible("") {
				t.Error("Eligible returned true")
			}
		})
	}
}

func TestProbeRequest(t *testing.T) {
	const want = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	var mu sync.Mutex
	var bodies []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodPost:
			t.Errorf("method %s, want POST", r.Method)
		case r.URL.RequestURI() != "/v3/key?apikey=k&x=1":
			t.Errorf("request URI %s, want the configured one", r.URL.RequestURI())
		case r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json":
			t.Errorf("headers %v lack the JSON content type or accept", r.Header)
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		io.WriteString(w, answer(json.RawMessage("1"), 1))
	})
	m := mustNew(t, Config{Endpoints: named("a", srv.URL+"/v3/key?apikey=k&x=1", "b", srv.URL+"/v3/key?apikey=k&x=1")})
	for range 3 {
		if err := check(m); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 6 {
		t.Fatalf("%d probes over three Checks of two endpoints, want 6", len(bodies))
	}
	for i, body := range bodies {
		if body != want {
			t.Errorf("probe %d sent %s, want exactly %s", i, body, want)
		}
	}
}

// A provider that answers every request with id 1, whatever the request
// carried, is judged on its height; any other id fails the probe.
func TestAnswerIDMustBeTheNumberOne(t *testing.T) {
	tests := []struct {
		name string
		id   string // the id member's JSON text; "" leaves it out
		want string // "" means accepted, else part of the error
	}{
		{"the number 1", "1", ""},
		{"the string \"1\"", `"1"`, `answer id is "\"1\""`},
		{"the number 2", "2", `answer id is "2"`},
		{"the number 1.0", "1.0", `answer id is "1.0"`},
		{"the number 1e0", "1e0", `answer id is "1e0"`},
		{"null", "null", `answer id is "null"`},
		{"no id", "", "answer id is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := ""
			if tt.id != "" {
				id = `"id":` + tt.id + `,`
			}
			// This provider ignores the request, as the documentation's
			// example does, and always reports height 100.
			fixed := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"jsonrpc":"2.0",`+id+`"result":"0x64"}`)
			})
			ahead := newProvider(t, 101)
			m := mustNew(t, Config{Endpoints: named("fixed", fixed.URL, "ahead", ahead.URL), MaxLag: 1})
			err := check(m)
			if tt.want == "" {
				if err != nil || !m.Eligible("fixed") {
					t.Fatalf("Check = %v, eligible %v; want height 100 read and judged within MaxLag", err, m.Eligible("fixed"))
				}
				ahead.height.Store(102)
				if err := check(m); err != nil || m.Eligible("fixed") {
					t.Fatalf("Check = %v, eligible %v; want height 100 judged two blocks behind", err, m.Eligible("fixed"))
				}
				return
			}
			pe := probeErrors(t, err)["fixed"]
			if pe == nil || !strings.Contains(pe.Error(), tt.want) {
				t.Fatalf("Check = %v, want a ProbeError saying %q", err, tt.want)
			}
			if m.Eligible("fixed") {
				t.Error("a provider with the wrong id is eligible")
			}
		})
	}
}

// The response rules, each through a real Check.
func TestProbeJudgesAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string // %s is replaced by the request's id
		want   string // "" means accepted, else part of the error
	}{
		{"a canonical answer", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x64"}`, ""},
		{"zero", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x0"}`, ""},
		{"white space around the object", 200, " \n{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"0x1\"}\n\t ", ""},
		{"a null error member", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x1","error":null}`, ""},
		{"status 500", 500, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, "status 500"},
		{"an array", 200, `[{"jsonrpc":"2.0","id":%s,"result":"0x1"}]`, "not a JSON object"},
		{"null", 200, `null`, "not a JSON object"},
		{"a string", 200, `"0x1"`, "not a JSON object"},
		{"trailing bytes", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}x`, "after the JSON object"},
		{"jsonrpc 1.0", 200, `{"jsonrpc":"1.0","id":%s,"result":"0x1"}`, "jsonrpc"},
		{"a string id", 200, `{"jsonrpc":"2.0","id":"%s","result":"0x1"}`, "answer id"},
		{"an RPC error", 200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, `-32601: "no such method"`},
		{"an uppercase digit", 200, `{"jsonrpc":"2.0","id":%s,"result":"0xA"}`, "canonical"},
		{"a leading zero", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x01"}`, "canonical"},
		{"17 digits", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x10000000000000000"}`, "canonical"},
		{"a number result", 200, `{"jsonrpc":"2.0","id":%s,"result":1}`, "not a string"},
		{"too large", 200, `{"jsonrpc":"2.0","id":%s,"result":"0x1","pad":"` + strings.Repeat("x", maxBody) + `"}`, "larger than 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				req := readRequest(t, r)
				w.WriteHeader(tt.status)
				io.WriteString(w, strings.ReplaceAll(tt.body, "%s", string(req.ID)))
			})
			m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
			err := check(m)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want the answer accepted", err)
				}
				return
			}
			pe := probeErrors(t, err)["a"]
			if pe == nil || !strings.Contains(pe.Error(), tt.want) {
				t.Fatalf("Check = %v, want a ProbeError saying %q", err, tt.want)
			}
		})
	}
}

// trackingBody records whether the probe closed it.
type trackingBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackingBody) Close() error { b.closed.Store(true); return nil }

func TestNoRedirectNoRetryBodiesClosed(t *testing.T) {
	target := newProvider(t, 10)
	t.Run("a redirect fails the probe and is not followed", func(t *testing.T) {
		for _, code := range []int{301, 302, 307, 308} {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL, code)
			})
			m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
			if pe := probeErrors(t, check(m))["a"]; pe == nil || !strings.Contains(pe.Error(), strconv.Itoa(code)) {
				t.Errorf("%d: error %v does not name the status", code, pe)
			}
		}
		if target.hits.Load() != 0 {
			t.Errorf("the redirect target got %d probes", target.hits.Load())
		}
	})
	t.Run("a failure is not retried", func(t *testing.T) {
		var hits atomic.Int32
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
		check(m)
		if hits.Load() != 1 {
			t.Errorf("provider got %d requests, want 1", hits.Load())
		}
	})
	t.Run("every response body is closed", func(t *testing.T) {
		for _, tt := range []struct {
			status int
			body   string
		}{{200, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`}, {500, "oops"}, {200, "garbage"}, {200, strings.Repeat("x", 1<<20)}} {
			body := &trackingBody{Reader: strings.NewReader(tt.body)}
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.status, Body: body, Header: http.Header{}, Request: r}, nil
			})
			m := mustNew(t, Config{Endpoints: named("a", "http://node.example"), Base: base})
			check(m)
			if !body.closed.Load() {
				t.Errorf("status %d, body %.10q: the body was not closed", tt.status, tt.body)
			}
		}
	})
}

// Probes run concurrently, and Check waits for every one of them.
func TestCheckWaitsForEveryProbe(t *testing.T) {
	var finished atomic.Int32
	started := make(chan struct{}, 3)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		started <- struct{}{}
		defer finished.Add(1)
		<-r.Context().Done() // hangs until the Check's context ends
		return nil, r.Context().Err()
	})
	m := mustNew(t, Config{Endpoints: named("a", "http://a.example", "b", "http://b.example", "c", "http://c.example"), Base: base})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Check(ctx) }()
	// Each probe blocks until the context ends, so the three can all start
	// only if they are in flight at once.
	for range 3 {
		<-started
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Check = %v, want context.Canceled", err)
	}
	if finished.Load() != 3 {
		t.Errorf("Check returned with %d of 3 probes still running", 3-finished.Load())
	}
}

func TestProbeErrorNamesEndpointAndReason(t *testing.T) {
	const secret = "k3y"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	m := mustNew(t, Config{Endpoints: named(
		"limited", strings.Replace(srv.URL, "http://", "http://u:"+secret+"@", 1)+"/v3/"+secret+"?apikey="+secret,
		"refused", "http://u:"+secret+"@127.0.0.1:1/v3/"+secret+"?apikey="+secret,
	)})
	errs := probeErrors(t, check(m))
	for id, reason := range map[failnext.EndpointID]string{"limited": "status 429", "refused": "connection refused"} {
		pe := errs[id]
		if pe == nil || !strings.Contains(pe.Error(), `"`+string(id)+`"`) || !strings.Contains(pe.Error(), reason) {
			t.Errorf("%s: error %v does not name the endpoint and %q", id, pe, reason)
			continue
		}
		if strings.Contains(pe.Error(), secret) {
			t.Errorf("%s: error %q leaks the URL", id, pe)
		}
	}
}

func TestEligibilityFormula(t *testing.T) {
	tests := []struct {
		name    string
		heights []int64 // -1 is a failing provider
		maxLag  uint64
		want    []bool
	}{
		{"the lag equals MaxLag: eligible", []int64{110, 107}, 3, []bool{true, true}},
		{"one block more: ineligible", []int64{110, 106}, 3, []bool{true, false}},
		{"MaxLag 0 keeps only the reference", []int64{110, 109, 110}, 0, []bool{true, false, true}},
		{"a failed provider is ineligible", []int64{110, -1, 108}, 5, []bool{true, false, true}},
		{"the reference is the highest success", []int64{5, 20, 17, -1}, 3, []bool{false, true, true, false}},
		{"height zero counts", []int64{0, 2}, 1, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pairs []string
			var ids []failnext.EndpointID
			for i, h := range tt.heights {
				url := "http://127.0.0.1:1"
				if h >= 0 {
					url = newProvider(t, uint64(h)).URL
				}
				id := fmt.Sprint("p", i)
				pairs = append(pairs, id, url)
				ids = append(ids, failnext.EndpointID(id))
			}
			m := mustNew(t, Config{Endpoints: named(pairs...), MaxLag: tt.maxLag})
			check(m)
			if got := verdicts(m, ids...); !slices.Equal(got, tt.want) {
				t.Errorf("eligible = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPublication(t *testing.T) {
	good, lagging := newProvider(t, 100), newProvider(t, 90)
	broken := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })

	t.Run("all succeed: nil error and a new snapshot", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("good", good.URL, "lagging", lagging.URL), MaxLag: 3})
		if err := check(m); err != nil {
			t.Fatalf("Check = %v", err)
		}
		if got := verdicts(m, "good", "lagging"); !slices.Equal(got, []bool{true, false}) {
			t.Errorf("eligible = %v", got)
		}
	})
	t.Run("some fail: published, and one ProbeError per failure", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("good", good.URL, "broken", broken.URL, "refused", "http://127.0.0.1:1"), MaxLag: 3})
		err := check(m)
		errs := probeErrors(t, err)
		if len(errs) != 2 || errs["broken"] == nil || errs["refused"] == nil {
			t.Fatalf("Check = %v, want ProbeErrors for broken and refused", err)
		}
		if got := verdicts(m, "good", "broken", "refused"); !slices.Equal(got, []bool{true, false, false}) {
			t.Errorf("eligible = %v, want only good", got)
		}
	})
	t.Run("all fail: the fail-open snapshot stays", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("broken", broken.URL, "refused", "http://127.0.0.1:1")})
		err := check(m)
		if len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want two ProbeErrors", err)
		}
		if got := verdicts(m, "broken", "refused"); !slices.Equal(got, []bool{true, true}) {
			t.Errorf("eligible = %v, want the fail-open snapshot kept", got)
		}
	})
	t.Run("all fail later: the last published snapshot stays", func(t *testing.T) {
		flaky, down := newFlaky(t, 100)
		m := mustNew(t, Config{Endpoints: named("flaky", flaky.URL, "broken", broken.URL)})
		check(m)
		down.Store(true)
		if err := check(m); len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want two ProbeErrors", err)
		}
		if got := verdicts(m, "flaky", "broken"); !slices.Equal(got, []bool{true, false}) {
			t.Errorf("eligible = %v, want the first Check's verdict kept", got)
		}
	})
	t.Run("a recovered provider becomes eligible again", func(t *testing.T) {
		p := newProvider(t, 50)
		m := mustNew(t, Config{Endpoints: named("good", good.URL, "p", p.URL), MaxLag: 3})
		check(m)
		if m.Eligible("p") {
			t.Fatal("a provider 50 blocks behind is eligible")
		}
		p.height.Store(99)
		check(m)
		if !m.Eligible("p") {
			t.Error("a provider that caught up stays ineligible")
		}
	})
}

func TestCancelledCheckKeepsSnapshot(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Both probes succeed, but the slow one cancels the Check's context just
	// before it answers, so the cancellation is there when the probes end.
	goodDone := make(chan struct{})
	var probes atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		probes.Add(1)
		id := readRequest(t, r).ID
		height := uint64(100)
		if r.URL.Host == "slow.example" {
			<-goodDone
			cancel()
			height = 90
		} else {
			defer close(goodDone)
		}
		body := io.NopCloser(strings.NewReader(answer(id, height)))
		return &http.Response{StatusCode: 200, Body: body, Header: http.Header{}, Request: r}, nil
	})
	m := mustNew(t, Config{Endpoints: named("good", "http://good.example", "slow", "http://slow.example"), MaxLag: 3, Base: base})
	err := m.Check(ctx)
	if !errors.Is(err, ctx.Err()) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check = %v, want an error wrapping context.Canceled", err)
	}
	if got := verdicts(m, "good", "slow"); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("eligible = %v, want the fail-open snapshot kept", got)
	}
	t.Run("a context done before Check starts probes nothing", func(t *testing.T) {
		before := probes.Load()
		err := m.Check(ctx)
		if !errors.Is(err, context.Canceled) || probes.Load() != before {
			t.Errorf("Check = %v after %d probes, want context.Canceled and none", err, probes.Load()-before)
		}
	})
}

func TestChecksAreSerialized(t *testing.T) {
	var inFlight, most atomic.Int32
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for old := most.Load(); n > old && !most.CompareAndSwap(old, n); old = most.Load() {
		}
		entered <- struct{}{}
		<-release
		respond(t, w, r, 1)
	})
	m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // registered after the server's Close, so it runs first

	first := make(chan error)
	go func() { first <- check(m) }()
	<-entered // the first Check is probing and holds the turn

	second := make(chan error)
	go func() { second <- check(m) }()
	if !waitForParkedChecks(1) {
		t.Fatal("a second Check did not wait for the first")
	}

	t.Run("a waiting Check gives up with its context, without probing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		waiting := make(chan error)
		go func() { waiting <- m.Check(ctx) }()
		if !waitForParkedChecks(2) {
			t.Fatal("a third Check did not wait for the first")
		}
		cancel()
		if err := <-waiting; !errors.Is(err, context.Canceled) {
			t.Errorf("waiting Check = %v, want context.Canceled", err)
		}
	})

	unblock()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if most.Load() != 1 || len(entered) != 1 {
		t.Errorf("%d probes ran at once, %d probes after the first; want 1 and 1 (the second Check's)", most.Load(), len(entered))
	}
}

// waitForParkedChecks reports whether, within a few seconds, n goroutines
// are blocked in Check waiting for their turn. Reading goroutine states is
// the only way to see that a Check is waiting rather than still on its way.
func waitForParkedChecks(n int) bool {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		parked := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, " [select") && strings.Contains(g, "blocklag.(*Monitor).Check(") {
				parked++
			}
		}
		if parked >= n {
			return true
		}
	}
	return false
}

// Eligible and Status answer from the snapshot in force while a Check is
// blocked in network I/O, and Eligible allocates nothing.
func TestEligibleAndStatusDuringCheck(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		respond(t, w, r, 1)
	})
	m := mustNew(t, Config{Endpoints: named("a", srv.URL)})
	done := make(chan error)
	go func() { done <- check(m) }()
	<-entered
	if !m.Eligible("a") {
		t.Error("Eligible did not answer from the fail-open snapshot during a Check")
	}
	if st := m.Status(); len(st.Endpoints) != 1 || !st.Checked.IsZero() {
		t.Errorf("Status during the first Check = %+v, want the fail-open view", st)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := m.Status(); st.Checked.IsZero() || st.Endpoints[0].Height != 1 {
		t.Errorf("Status after the Check = %+v, want height 1", st)
	}
	allocs := testing.AllocsPerRun(100, func() { m.Eligible("a"); m.Eligible("unknown") })
	if allocs != 0 {
		t.Errorf("Eligible allocates %v times per call", allocs)
	}
}

// No goroutine, timer or TTL outlives New or Check.
func TestNoBackgroundWork(t *testing.T) {
	before := runtime.NumGoroutine()
	p := newProvider(t, 1)
	base := &http.Transport{}
	m := mustNew(t, Config{Endpoints: named("a", p.URL, "b", p.URL), Base: base})
	for range 3 {
		if err := check(m); err != nil {
			t.Fatal(err)
		}
	}
	base.CloseIdleConnections()
	p.Close() // returns once the server's connections are closed
	if !waitForGoroutines(before) {
		t.Errorf("%d goroutines after Checks, %d before", runtime.NumGoroutine(), before)
	}
	if !m.Eligible("a") {
		t.Error("the snapshot expired")
	}
}

// waitForGoroutines reports whether the goroutine count falls to at most n
// within a few seconds. Goroutines of closed connections end asynchronously,
// so a count taken at once could include some that are already on their way
// out; a leaked goroutine never ends and still fails the test.
func waitForGoroutines(n int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if runtime.NumGoroutine() <= n {
			return true
		}
		runtime.Gosched()
	}
	return false
}

func TestSharedURLJudgedPerEndpoint(t *testing.T) {
	var calls atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			respond(t, w, r, 1)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	m := mustNew(t, Config{Endpoints: named("x", srv.URL, "y", srv.URL)})
	errs := probeErrors(t, check(m))
	if calls.Load() != 2 || len(errs) != 1 {
		t.Fatalf("%d probes and %d errors, want 2 and 1", calls.Load(), len(errs))
	}
	for _, id := range []failnext.EndpointID{"x", "y"} {
		if m.Eligible(id) != (errs[id] == nil) {
			t.Errorf("%s: eligible %v but error %v", id, m.Eligible(id), errs[id])
		}
	}
}
