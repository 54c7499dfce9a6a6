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
)

// The benchmarks measure what the README's Performance section reports:
//
//	go test -run '^$' -bench . -benchmem
//
// They use loopback providers only. BenchmarkClientSide runs its providers
// in a child process, so that only the client's allocations are counted:
//
//	go test -run '^$' -bench ClientSide -benchmem -benchtime 2000x -count 10

// sink and parallelSink keep results alive so the compiler cannot drop the
// calls being measured.
var (
	sink         bool
	parallelSink atomic.Int64
)

// benchIDs are the IDs every Eligible benchmark asks about, in turn: two
// configured and one unknown, as a failnext request over a small set would.
var benchIDs = []failnext.EndpointID{"primary", "backup", "unknown"}

// benchMonitor returns a Monitor over two loopback providers, checked once
// when checked is true.
func benchMonitor(b *testing.B, checked bool) *Monitor {
	primary, backup := newProvider(b, 100), newProvider(b, 110)
	m := mustNew(b, Config{Endpoints: named("primary", primary.URL, "backup", backup.URL), MaxLag: 3})
	if checked {
		if err := check(m); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkMapLookup is the floor for Eligible: a plain map lookup of the
// same IDs.
func BenchmarkMapLookup(b *testing.B) {
	verdicts := map[failnext.EndpointID]bool{"primary": false, "backup": true}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sink = verdicts[benchIDs[i%len(benchIDs)]]
	}
}

func BenchmarkEligible(b *testing.B) {
	for _, checked := range []bool{false, true} {
		name := map[bool]string{false: "fail-open", true: "checked"}[checked]
		m := benchMonitor(b, checked)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sink = m.Eligible(benchIDs[i%len(benchIDs)])
			}
		})
		b.Run(name+"/unknown", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = m.Eligible("unknown")
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
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
}

// BenchmarkStatus measures one Status call after a Check over two
// providers: a copy of the endpoint list, one allocation.
func BenchmarkStatus(b *testing.B) {
	m := benchMonitor(b, true)
	b.ReportAllocs()
	for b.Loop() {
		if st := m.Status(); len(st.Endpoints) != 2 {
			b.Fatalf("Status has %d endpoints", len(st.Endpoints))
		}
	}
}

// benchTransport keeps one idle connection per provider however many there
// are; http.DefaultTransport keeps at most 100 in all, which would make
// every probe past the hundredth dial anew and hide the per-probe cost.
func benchTransport(b *testing.B) *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// BenchmarkCheckWall shows that a Check lasts as long as its slowest
// provider, not the sum: 16 providers each answer after D, and x-slowest is
// the Check's wall time divided by D.
func BenchmarkCheckWall(b *testing.B) {
	const delay = 20 * time.Millisecond
	var pairs []string
	for i := range 16 {
		p := newProvider(b, 100)
		p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
			<-time.After(delay) // the provider's own latency, not synchronisation
			io.WriteString(w, answer(100))
		})
		pairs = append(pairs, fmt.Sprint("p", i), p.URL)
	}
	m := mustNew(b, Config{Endpoints: named(pairs...), Base: benchTransport(b)})
	if err := m.Check(context.Background()); err != nil { // open the connections
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		if err := m.Check(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(wall)/float64(delay), "x-slowest")
}

// BenchmarkCheck measures a Check against n immediate providers, with the
// cost per probe, which should not grow with n.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprint("providers=", n), func(b *testing.B) {
			var pairs []string
			for i := range n {
				pairs = append(pairs, fmt.Sprint("p", i), newProvider(b, 100).URL)
			}
			m := mustNew(b, Config{Endpoints: named(pairs...), Base: benchTransport(b)})
			perProbe(b, n, func() error { return m.Check(context.Background()) })
		})
	}
}

// BenchmarkJudge measures judging one typical answer, the part of a probe's
// cost that is blocklag's own rather than net/http's.
func BenchmarkJudge(b *testing.B) {
	benchJudge(b, `{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}`)
}

// BenchmarkJudgeOtherForm measures judging a valid answer in a form other
// than the compact one real nodes send (here the id comes first), which the
// full parser decides.
func BenchmarkJudgeOtherForm(b *testing.B) {
	benchJudge(b, `{"id":1,"jsonrpc":"2.0","result":"0x1521a3f"}`)
}

func benchJudge(b *testing.B, answer string) {
	body := []byte(answer)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := judge(body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckHugeAnswer measures a Check against a provider that streams
// 64 MiB: B/op stays far below 1 MiB because a probe reads at most 4097
// bytes.
func BenchmarkCheckHugeAnswer(b *testing.B) {
	srv := newServer(b, huge(false))
	m := mustNew(b, Config{Endpoints: named("huge", srv.URL), Base: benchTransport(b)})
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Check(context.Background()); err == nil {
			b.Fatal("a 64 MiB answer was accepted")
		}
	}
}

// remoteProvidersEnv, when set in a test binary's environment, turns the
// binary into the child process of BenchmarkClientSide: TestMain then serves
// remoteProviders loopback providers instead of running tests.
const remoteProvidersEnv = "BLOCKLAG_BENCH_PROVIDERS"

// remoteProviders is how many providers the child serves: the provider
// count that the client-side figures are quoted at.
const remoteProviders = 8

// remoteAnswer is what every remote provider sends: the compact form real
// nodes send, with a mainnet-sized height and a final newline.
const remoteAnswer = `{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}` + "\n"

// remoteFailures are the failed answers that the remote providers also
// serve, each at its own path, for BenchmarkNonOKAnswer: each body once with
// a status other than 200 and once with 200, both with the same headers, so
// that the two answers are the same size.
var remoteFailures = []struct {
	name   string
	status int
	body   string
}{
	{"rpc-error", http.StatusTooManyRequests, `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"daily request count exceeded"}}` + "\n"},
	{"html", http.StatusBadGateway, "<!DOCTYPE html>\n<html><head><title>Bad gateway</title></head>\n<body><h1>Bad gateway</h1>\n" +
		strings.Repeat("<p>The node behind this gateway did not answer in time. Try again later.</p>\n", 6) + "</body></html>\n"},
}

// remoteFailurePath is where the remote providers serve a remoteFailures
// body with status: /429/rpc-error, /200/rpc-error and so on.
func remoteFailurePath(status int, name string) string { return fmt.Sprintf("/%d/%s", status, name) }

// serveRemoteProviders runs in the child process. It serves the providers,
// prints their URLs one per line on stdout, and exits once its stdin closes:
// the parent closes it when done, and the system closes it when the parent
// dies, so the child never outlives the benchmark. Each provider sends
// remoteAnswer at any path but those of remoteFailures.
func serveRemoteProviders() {
	answer := []byte(remoteAnswer)
	type failure struct {
		status int
		body   []byte
	}
	failures := map[string]failure{}
	for _, f := range remoteFailures {
		for _, status := range []int{f.status, http.StatusOK} {
			failures[remoteFailurePath(status, f.name)] = failure{status, []byte(f.body)}
		}
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		f, ok := failures[r.URL.Path]
		if !ok {
			w.Write(answer)
			return
		}
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(f.status)
		w.Write(f.body)
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

// remoteURLs starts the child process of this test binary that serves the
// remote providers and returns their URLs. The child ends with b: its
// stdin is closed, and it is killed if it has not exited soon after.
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
	lines := bufio.NewScanner(stdout)
	for len(urls) < remoteProviders && lines.Scan() {
		urls = append(urls, lines.Text())
	}
	if len(urls) < remoteProviders {
		b.Fatalf("the child process printed %d provider URLs, want %d", len(urls), remoteProviders)
	}
	return urls
}

// BenchmarkClientSide measures one Check over remoteProviders providers in
// a child process, so that only blocklag's side and net/http's client are
// counted, and beside it the floor: the same POSTs made with a bare
// http.Client, one goroutine per provider, each reading the answer.
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

// BenchmarkNonOKAnswer shows that reading the body of an answer whose
// status is not 200 costs a probe no more than a 200 answer of the same
// size: each remoteFailures body is served with its own status and with
// 200, by the providers of BenchmarkClientSide, and every probe fails. The
// JSON-RPC error becomes a StatusError holding an RPCError, or with 200 an
// RPCError; the HTML page a plain StatusError, or with 200 a bad answer.
//
//	go test -run '^$' -bench NonOKAnswer -benchmem -benchtime 2000x -count 10
func BenchmarkNonOKAnswer(b *testing.B) {
	urls := remoteURLs(b)
	for _, f := range remoteFailures {
		for _, status := range []int{http.StatusOK, f.status} {
			b.Run(fmt.Sprintf("%s/status=%d", f.name, status), func(b *testing.B) {
				var pairs []string
				for i, u := range urls {
					pairs = append(pairs, fmt.Sprint("p", i), u+remoteFailurePath(status, f.name))
				}
				m := mustNew(b, Config{Endpoints: named(pairs...), Base: benchTransport(b)})
				perProbe(b, len(urls), func() error {
					err := m.Check(context.Background())
					var ce *CheckError
					if !errors.As(err, &ce) || len(ce.Errors) != len(urls) {
						return fmt.Errorf("Check = %v, want every probe failed", err)
					}
					var se *StatusError
					if isStatus := errors.As(err, &se); isStatus != (status != http.StatusOK) || isStatus && (se.RetryAfter != time.Minute || (se.RPC != nil) != (f.name == "rpc-error")) {
						return fmt.Errorf("Check = %v, not the failure it should be", err)
					}
					return nil
				})
			})
		}
	}
}

// barePosts is what net/http costs on its own: one plain POST of the probe's
// body per URL, all at once, each answer read whole.
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
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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

// BenchmarkCheckEveryProbeFailing measures a Check in which every probe
// fails through Config.Base, at 10 and at 1000 endpoints, each with an API
// key in its user info, path and query. With quoting-URL the Base's error
// quotes the request's URL, so every message has secrets to mask; with
// quoting-nothing it quotes nothing, so the search finds none. Every
// endpoint's secrets are looked for in every message, in one pass over it
// whatever their number, so ns/endpoint at 1000 endpoints stays within
// twice what it is at 10:
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
					key := uint64(i+1) * 0x9e3779b97f4a7c15 // spreads the keys as real ones are
					pairs = append(pairs, fmt.Sprint("p", i),
						fmt.Sprintf("https://user%d:%x@rpc.example/v3/%016x%016x?chain=main;apikey=%x", i, key>>20, key, ^key, key>>8))
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

// BenchmarkMask measures masking one transport error's text that quotes a
// URL, with the secret forms of 10 and of 1000 endpoints: the time should
// not grow with their number.
func BenchmarkMask(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint("endpoints=", n), func(b *testing.B) {
			eps := make([]endpoint, n)
			for i := range eps {
				key := uint64(i+1) * 0x9e3779b97f4a7c15
				eps[i].url = fmt.Sprintf("https://rpc.example/v3/%016x?apikey=%x", key, ^key)
			}
			s := newSecrets(eps)
			text := fmt.Sprintf("Post %q: dial tcp 192.0.2.1:443: connect: connection refused", eps[n/2].url)
			b.ReportAllocs()
			for b.Loop() {
				if s.mask(text) == text {
					b.Fatal("nothing was masked")
				}
			}
		})
	}
}

// BenchmarkTransportText measures turning a transport error into the text
// a message shows, for a text of 1 KB and for one of 38 MB, as net/http
// writes for a header line of 9 MiB of control bytes, each quoting a URL
// beside the secrets of 10 endpoints: only as much of a text is read as
// the message can show, so both cost the same.
func BenchmarkTransportText(b *testing.B) {
	eps := make([]endpoint, 10)
	for i := range eps {
		key := uint64(i+1) * 0x9e3779b97f4a7c15
		eps[i].url = fmt.Sprintf("https://rpc.example/v3/%016x%016x?apikey=%x", key, ^key, key>>8)
	}
	s := newSecrets(eps)
	head := fmt.Sprintf("Post %q: net/http: malformed MIME header line: ", eps[3].url)
	for _, tt := range []struct {
		name string
		text string
	}{
		{"1KB", head + `"` + strings.Repeat(`\x01`, 1<<10/4) + `"`},
		{"38MB", head + `"` + strings.Repeat(`\x01`, 38<<20/4) + `"`},
	} {
		err := errors.New(tt.text)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if msg := transportError(err, s).Error(); len(msg) > 2*maxTransportText {
					b.Fatalf("a message of %d bytes", len(msg))
				}
			}
		})
	}
}
