package blocklag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// The benchmarks give the figures the README and BENCHMARKS.md quote, on loopback providers only:
//
//	go test -run '^$' -bench . -benchmem

// sink and parallelSink keep results alive so the compiler cannot drop the calls being measured.
var (
	sink         bool
	parallelSink atomic.Int64
)

// benchIDs are the IDs the Eligible benchmarks ask about in turn: two
// configured and one unknown, as a failnext request over a small set would.
var benchIDs = []failnext.EndpointID{"primary", "backup", "unknown"}

// BenchmarkMapLookup is the floor for Eligible: a plain map lookup of the same IDs.
func BenchmarkMapLookup(b *testing.B) {
	verdicts := map[failnext.EndpointID]bool{"primary": false, "backup": true}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sink = verdicts[benchIDs[i%len(benchIDs)]]
	}
}

func BenchmarkEligible(b *testing.B) {
	primary, backup := newProvider(b, 100), newProvider(b, 110)
	m := mustNew(b, Config{Endpoints: named("primary", primary.URL, "backup", backup.URL), MaxLag: 3})
	asking := func(ids ...failnext.EndpointID) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sink = m.Eligible(ids[i%len(ids)])
			}
		}
	}
	b.Run("fail-open", asking(benchIDs...))
	if err := check(m); err != nil {
		b.Fatal(err)
	}
	b.Run("checked", asking(benchIDs...))
	b.Run("checked/unknown", asking("unknown"))
	b.Run("checked/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			eligible := 0
			for i := 0; pb.Next(); i++ {
				if m.Eligible(benchIDs[i%len(benchIDs)]) {
					eligible++
				}
			}
			parallelSink.Add(int64(eligible))
		})
	})
}

// BenchmarkStatus measures one Status call after a Check over two providers: a
// copy of the endpoint list, one allocation.
func BenchmarkStatus(b *testing.B) {
	primary, backup := newProvider(b, 100), newProvider(b, 110)
	m := mustNew(b, Config{Endpoints: named("primary", primary.URL, "backup", backup.URL), MaxLag: 3})
	if err := check(m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if st := m.Status(); len(st.Endpoints) != 2 {
			b.Fatalf("Status has %d endpoints", len(st.Endpoints))
		}
	}
}

// benchTransport keeps one idle connection per provider however many there are
// (http.DefaultTransport keeps 100 in all).
func benchTransport(b *testing.B) *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// remoteProvidersEnv, set in a test binary's environment, makes TestMain
// serve remoteProviders loopback providers instead of running tests: the
// child process of BenchmarkClientSide, so that the providers' allocations
// are not counted.
const remoteProvidersEnv = "BLOCKLAG_BENCH_PROVIDERS"

// remoteProviders is how many providers the child serves.
const remoteProviders = 8

// remoteAnswer is what every remote provider sends: the compact form real
// nodes send, with a mainnet-sized height and a final newline.
const remoteAnswer = `{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}` + "\n"

// serveRemoteProviders runs in the child process: it serves the providers,
// prints their URLs one a line, and exits once its stdin closes, which
// happens when the parent ends too, so it never outlives the benchmark.
func serveRemoteProviders() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, remoteAnswer)
	})
	for range remoteProviders {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "remote providers:", err)
			os.Exit(1)
		}
		go http.Serve(ln, handler)
		fmt.Printf("http://%s\n", ln.Addr())
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// remoteURLs starts the child process that serves the remote providers and
// returns their URLs. The child ends with b.
func remoteURLs(b *testing.B) []string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), remoteProvidersEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	var urls []string
	for lines := bufio.NewScanner(stdout); len(urls) < remoteProviders && lines.Scan(); {
		urls = append(urls, lines.Text())
	}
	if len(urls) < remoteProviders {
		b.Fatalf("the child process printed %d provider URLs, want %d", len(urls), remoteProviders)
	}
	return urls
}

// BenchmarkClientSide measures a Check of the remote providers, so that only
// the client side is counted, beside its floor: the same POSTs from a bare
// http.Client, one goroutine each, each answer read whole.
//
//	go test -run '^$' -bench ClientSide -benchmem -benchtime 2000x -count 10
func BenchmarkClientSide(b *testing.B) {
	urls := remoteURLs(b)
	b.Run("Check", func(b *testing.B) {
		var pairs []string
		for i, u := range urls {
			pairs = append(pairs, fmt.Sprint("p", i), u)
		}
		m := mustNew(b, Config{Endpoints: named(pairs...), Base: benchTransport(b)})
		perProbe(b, len(urls), func() error { return m.Check(context.Background()) })
	})
	b.Run("bare-POST", func(b *testing.B) {
		client := &http.Client{Transport: benchTransport(b)}
		perProbe(b, len(urls), func() error { return barePosts(client, urls) })
	})
}

// BenchmarkNonOKAnswer shows that reading the body of an answer that is not
// 200 costs a probe what a 200 answer of that size costs: a Base hands each
// body over, in memory, once with 200 and once with its status and the same
// headers, and every probe fails as it should.
func BenchmarkNonOKAnswer(b *testing.B) {
	const paragraph = "<p>The node behind this gateway did not answer in time. Try again later.</p>\n"
	rateLimit := rpcErrorAnswer(-32005, "daily request count exceeded") + "\n"
	html := "<!DOCTYPE html>\n<html><head><title>Bad gateway</title></head>\n<body><h1>Bad gateway</h1>\n" +
		strings.Repeat(paragraph, 6) + "</body></html>\n"
	for _, f := range []struct {
		name   string
		status int
		body   string
	}{
		{"rpc-error", http.StatusTooManyRequests, rateLimit},
		{"html", http.StatusBadGateway, html},
	} {
		for _, status := range []int{http.StatusOK, f.status} {
			b.Run(fmt.Sprintf("%s/status=%d", f.name, status), func(b *testing.B) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp := response(r, status, f.body, int64(len(f.body)))
					resp.Header.Set("Content-Type", "application/json")
					resp.Header.Set("Retry-After", "60")
					return resp, nil
				})
				m := mustNew(b, Config{Endpoints: named("a", "http://a.example"), Base: base})
				b.ReportAllocs()
				for b.Loop() {
					err := m.Check(context.Background())
					var se *StatusError
					isStatus := errors.As(err, &se)
					keptRPC := isStatus && se.RPC != nil
					wantRPC := f.name == "rpc-error"
					asItShould := isStatus && se.RetryAfter == time.Minute && keptRPC == wantRPC
					if err == nil || isStatus != (status != http.StatusOK) || isStatus && !asItShould {
						b.Fatalf("Check = %v, not the failure it should be", err)
					}
				}
			})
		}
	}
}

// barePosts makes one plain POST of the probe's body per URL, all at once, and
// reads each answer whole.
func barePosts(client *http.Client, urls []string) error {
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(u, "application/json", strings.NewReader(blockNumberRequest))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			if body, err := io.ReadAll(resp.Body); err != nil || string(body) != remoteAnswer {
				errs[i] = fmt.Errorf("answer %q, %v", body, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// perProbe runs round, which makes probes requests, once to open the
// connections and then under b.Loop, and reports its cost per probe.
func perProbe(b *testing.B, probes int, round func() error) {
	b.Helper()
	if err := round(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if err := round(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N * probes)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/probe")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/probe")
}

// keyedURL is endpoint i's URL, with keys in its user info, path and query,
// spread as real keys are.
func keyedURL(i int) string {
	key := uint64(i+1) * 0x9e3779b97f4a7c15
	return fmt.Sprintf("https://user%d:%x@rpc.example/v3/%016x%016x?chain=main;apikey=%x",
		i, key>>20, key, ^key, key>>8)
}

// BenchmarkCheckEveryProbeFailing measures a Check whose every probe fails in
// Config.Base, at 10 and 1000 endpoints, with a Base error that quotes the URL
// or nothing: ns/endpoint at 1000 stays within twice that at 10.
//
//	go test -run '^$' -bench EveryProbeFailing -benchtime 20x
func BenchmarkCheckEveryProbeFailing(b *testing.B) {
	errDown := errors.New("base is down")
	bases := []struct {
		name string
		base roundTripFunc
	}{
		{"quoting-URL", func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("cannot reach %s", r.URL)
		}},
		{"quoting-nothing", func(*http.Request) (*http.Response, error) { return nil, errDown }},
	}
	for _, base := range bases {
		for _, n := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/endpoints=%d", base.name, n), func(b *testing.B) {
				var pairs []string
				for i := range n {
					pairs = append(pairs, fmt.Sprint("p", i), keyedURL(i))
				}
				m := mustNew(b, Config{Endpoints: named(pairs...), Base: base.base})
				b.ReportAllocs()
				for b.Loop() {
					if err := m.Check(context.Background()); err == nil {
						b.Fatal("a Check whose probes all fail returned nil")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/endpoint")
			})
		}
	}
}

// BenchmarkTransportText measures turning a transport error's text into what a
// message shows, beside the secrets of 10 endpoints: a text of 1 KB, 9 MB of x,
// and the key repeated to 9 MB cost the same, as only what the message can show
// is read.
func BenchmarkTransportText(b *testing.B) {
	var urls []string
	for i := range 10 {
		urls = append(urls, keyedURL(i))
	}
	r := redact.New(urls)
	url := keyedURL(3)
	head := fmt.Sprintf("Post %q: net/http: malformed MIME header line: ", url)
	key := url[strings.Index(url, "/v3/")+4 : strings.Index(url, "?")]
	for _, tt := range []struct{ name, text string }{
		{"1KB", head + strings.Repeat("x", 1<<10)},
		{"9MB-of-x", head + strings.Repeat("x", 9<<20)},
		{"9MB-of-the-key", head + strings.Repeat(key, 9<<20/len(key))},
	} {
		err := errors.New(tt.text)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if msg := transportError(err, r).Error(); len(msg) > 2*redact.ErrorLimit {
					b.Fatalf("a message of %d bytes", len(msg))
				}
			}
		})
	}
}

// BenchmarkNew measures New, which builds the matcher of every secret, for one
// endpoint with a 1 MB key and for 1,000 with 4 KB keys: the cost follows the
// secrets' bytes, with no limit of the matcher's own.
func BenchmarkNew(b *testing.B) {
	key := func(i, size int) string {
		var k strings.Builder
		const multiplier = 6364136223846793005
		const increment = 1442695040888963407
		for x := uint64(i+1) * 0x9e3779b97f4a7c15; k.Len() < size; x = x*multiplier + increment {
			fmt.Fprintf(&k, "%016x", x)
		}
		return k.String()[:size]
	}
	for _, tt := range []struct{ endpoints, size int }{{1, 1 << 20}, {1000, 4 << 10}} {
		var pairs []string
		for i := range tt.endpoints {
			pairs = append(pairs, fmt.Sprint("p", i), "https://rpc.example/v3/"+key(i, tt.size))
		}
		b.Run(fmt.Sprintf("endpoints=%d/key=%dKB", tt.endpoints, tt.size>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mustNew(b, Config{Endpoints: named(pairs...)})
			}
		})
	}
}
