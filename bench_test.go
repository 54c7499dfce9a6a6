package blocklag

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// The benchmarks measure what the README's Performance section reports:
//
//	go test -run '^$' -bench . -benchmem
//
// They use loopback providers only.

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
	m, err := New(Config{Endpoints: named("primary", primary.URL, "backup", backup.URL), MaxLag: 3})
	if err != nil {
		b.Fatal(err)
	}
	if checked {
		if err := m.Check(context.Background()); err != nil {
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
		p := newServer(b, func(w http.ResponseWriter, r *http.Request) {
			<-time.After(delay) // the provider's own latency, not synchronisation
			respond(b, w, r, 100)
		})
		pairs = append(pairs, fmt.Sprint("p", i), p.URL)
	}
	m := mustNew(b, Config{Endpoints: named(pairs...), Base: benchTransport(b)})
	if err := m.Check(context.Background()); err != nil { // open the connections
		b.Fatal(err)
	}
	b.ResetTimer()
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
			if err := m.Check(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var before, after runtimeCounts
			before.read()
			for b.Loop() {
				if err := m.Check(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			after.read()
			probes := float64(b.N * n)
			b.ReportMetric(float64(after.bytes-before.bytes)/probes, "B/probe")
			b.ReportMetric(float64(after.allocs-before.allocs)/probes, "allocs/probe")
		})
	}
}

// BenchmarkJudge measures judging one typical answer, the part of a probe's
// cost that is blocklag's own rather than net/http's.
func BenchmarkJudge(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1521a3f"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := judge(200, body); err != nil {
			b.Fatal(err)
		}
	}
}

// runtimeCounts are the process's allocation totals at one moment.
type runtimeCounts struct{ bytes, allocs uint64 }

func (c *runtimeCounts) read() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	c.bytes, c.allocs = m.TotalAlloc, m.Mallocs
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
