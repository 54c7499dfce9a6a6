package blocklag

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

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
		readRequest(t, r)
		height := uint64(100)
		if r.URL.Host == "slow.example" {
			<-goodDone
			cancel()
			height = 90
		} else {
			defer close(goodDone)
		}
		return answerResponse(r, height), nil
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

// gate is a Base that holds every probe until it is opened (or the probe's
// context ends), reports each arrival on arrived, and records the most
// probes it held at once.
type gate struct {
	arrived        chan struct{}
	opened         chan struct{}
	open           func()
	inFlight, most atomic.Int32
}

func newGate(t *testing.T) *gate {
	g := &gate{arrived: make(chan struct{}, 16), opened: make(chan struct{})}
	g.open = sync.OnceFunc(func() { close(g.opened) })
	t.Cleanup(g.open) // so that no probe outlives a failed test
	return g
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for most := g.most.Load(); n > most && !g.most.CompareAndSwap(most, n); most = g.most.Load() {
	}
	g.arrived <- struct{}{}
	select {
	case <-g.opened:
		return answerResponse(r, 1), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// waitingContext closes asked the first time its Done channel is asked for.
// A Check can only give up waiting for its turn by watching Done, so once
// asked is closed, a Check given this context is waiting or about to.
type waitingContext struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func newWaitingContext(parent context.Context) *waitingContext {
	return &waitingContext{Context: parent, asked: make(chan struct{})}
}

func (c *waitingContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// startWaiting starts a Check with ctx while another Check holds g, and
// returns once it waits for its turn; it fails t if the Check probes
// instead.
func startWaiting(t *testing.T, m *Monitor, g *gate, ctx *waitingContext) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- m.Check(ctx) }()
	select {
	case <-ctx.asked:
	case <-g.arrived:
		t.Fatal("a Check probed while another was probing")
	case <-time.After(10 * time.Second): // a guard against hanging, not a synchronisation
		t.Fatal("a Check neither watched its context nor probed")
	}
	return done
}

func TestChecksAreSerialized(t *testing.T) {
	g := newGate(t)
	m := mustNew(t, Config{Endpoints: named("a", "http://a.example"), Base: g})

	first := make(chan error, 1)
	go func() { first <- check(m) }()
	<-g.arrived // the first Check is probing, and holds the turn until g opens

	second := startWaiting(t, m, g, newWaitingContext(context.Background()))

	t.Run("a waiting Check gives up with its context, without probing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		waiting := startWaiting(t, m, g, newWaitingContext(ctx))
		cancel()
		if err := <-waiting; !errors.Is(err, context.Canceled) {
			t.Errorf("waiting Check = %v, want context.Canceled", err)
		}
		// Check returns only after its probes end, so a probe it had
		// started would have arrived by now.
		if len(g.arrived) != 0 {
			t.Error("the cancelled Check probed")
		}
	})

	g.open()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n := len(g.arrived); g.most.Load() != 1 || n != 1 {
		t.Errorf("%d probes ran at once, %d probes after the first; want 1 and 1 (the second Check's)", g.most.Load(), n)
	}
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

// No goroutine, timer or TTL outlives New or Check. The probes go through
// a Base that answers in memory, so that no connection goroutine, which
// ends on its own schedule, is counted.
func TestNoBackgroundWork(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return answerResponse(r, 1), nil })
	before := runtime.NumGoroutine()
	m := mustNew(t, Config{Endpoints: named("a", "http://a.example", "b", "http://b.example"), Base: base})
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after New, %d before", n, before)
	}
	const checks = 20
	for range checks {
		if err := check(m); err != nil {
			t.Fatal(err)
		}
	}
	// A probe's goroutine may still be returning after it has told Check it
	// is done, so one Check's worth may remain; a leak grows with every Check.
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("%d goroutines after %d Checks of two endpoints, %d before", n, checks, before)
	}
	if !m.Eligible("a") {
		t.Error("the snapshot expired")
	}
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

func TestProbeTimeout(t *testing.T) {
	good := newProvider(t, 100)
	hung, dripping := newServer(t, hang(t)), newServer(t, drip(t))
	eps := named("good", good.URL, "hung", hung.URL, "dripping", dripping.URL)

	t.Run("a hung and a dripping provider are published ineligible", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		m := mustNew(t, Config{Endpoints: eps, ProbeTimeout: timeout})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := m.Check(ctx)
		took := time.Since(start)
		t.Logf("Check against a hung and a dripping provider returned after %v (ProbeTimeout %v)", took, timeout)
		if took < timeout || ctx.Err() != nil {
			t.Errorf("Check took %v: it neither waited for the timeout nor stayed within its context", took)
		}
		errs := probeErrors(t, err)
		for _, id := range []failnext.EndpointID{"hung", "dripping"} {
			pe := errs[id]
			if pe == nil || !strings.Contains(pe.Error(), "timed out") || !errors.Is(pe, context.DeadlineExceeded) {
				t.Errorf("%s: error %v, want a timeout wrapping context.DeadlineExceeded", id, pe)
			}
		}
		if len(errs) != 2 {
			t.Errorf("Check = %v, want errors for hung and dripping only", err)
		}
		if got := verdicts(m, "good", "hung", "dripping"); !slices.Equal(got, []bool{true, false, false}) {
			t.Errorf("eligible = %v, want only good", got)
		}
	})
	t.Run("the Check's own context still wins over a longer ProbeTimeout", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: eps, ProbeTimeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if err := m.Check(ctx); !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timed out after") {
			t.Errorf("Check = %v, want the Check's deadline, not a probe timeout", err)
		}
		if !m.Eligible("hung") {
			t.Error("the snapshot changed")
		}
	})
}

// One absurd height among honest ones, judged under several Quorum values
// through real Checks.
func TestQuorum(t *testing.T) {
	var pairs []string
	for i, h := range []uint64{1000000000, 100, 99, 90} {
		pairs = append(pairs, string(idOf(i)), newProvider(t, h).URL)
	}
	tests := []struct {
		quorum int
		want   []bool
	}{
		{0, []bool{true, false, false, false}},
		{2, []bool{true, true, true, false}},
		{3, []bool{true, true, true, false}},
		{5, []bool{true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("quorum %d", tt.quorum), func(t *testing.T) {
			m := mustNew(t, Config{Endpoints: named(pairs...), MaxLag: 3, Quorum: tt.quorum})
			if err := check(m); err != nil {
				t.Fatal(err)
			}
			if got := verdicts(m, idOf(0), idOf(1), idOf(2), idOf(3)); !slices.Equal(got, tt.want) {
				t.Errorf("eligible = %v, want %v", got, tt.want)
			}
		})
	}
}

// Readers calling Eligible while Checks keep publishing alternating
// snapshots only ever see verdicts that some snapshot gives: "steady" is at
// the reference in the initial and every published snapshot, and "unknown"
// is in none. Meanwhile "a" and "b" take turns being behind, so every Check
// publishes a snapshot different from the last. Under -race this also shows
// that publication and reads do not race.
func TestEligibleWhileChecksPublish(t *testing.T) {
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	steady := newProvider(t, 100)
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL, "steady", steady.URL)})

	const checks, readers = 50, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done) // also when a Check fails, so no reader outlives the test
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				m.Eligible("a")
				m.Eligible("b")
				if !m.Eligible("steady") || m.Eligible("unknown") {
					t.Error("a reader saw a verdict that no snapshot gives")
					return
				}
				runtime.Gosched() // leave the Checks some processor time
			}
		}()
	}
	publishAlternating(t, m, providers, checks)
}

// publishAlternating runs Checks in which providers[0] ("a", the first
// endpoint) and providers[1] ("b", the second) take turns being 10 blocks
// behind 100, so that every Check publishes a snapshot different from the
// last, and fails t when one is not published as expected.
func publishAlternating(t *testing.T, m *Monitor, providers []*provider, checks int) {
	t.Helper()
	ids := []failnext.EndpointID{"a", "b"}
	for i := range checks {
		behind, ahead := i%2, 1-i%2
		providers[behind].height.Store(90)
		providers[ahead].height.Store(100)
		if err := check(m); err != nil {
			t.Fatal(err)
		}
		st := m.Status()
		if m.Eligible(ids[behind]) || !m.Eligible(ids[ahead]) || st.Endpoints[behind].Lag != 10 || st.Endpoints[ahead].Lag != 0 {
			t.Fatalf("check %d published %+v", i, st)
		}
	}
}

// Readers calling Status while Checks publish snapshots in which "a" and "b"
// take turns being 10 blocks behind must each time see one whole snapshot:
// the reference, exactly one provider behind with its lag and verdict, and
// Checked never going back.
func TestStatusWhileChecksPublish(t *testing.T) {
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	ids := []failnext.EndpointID{"a", "b"}
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL), MaxLag: 3})
	consistent := func(st Status) bool {
		if st.Checked.IsZero() { // fail-open, before the first Check publishes
			return st.Reference == 0 && len(st.Endpoints) == 2 && st.Endpoints[0].Eligible && st.Endpoints[1].Eligible
		}
		if st.Reference != 100 || len(st.Endpoints) != 2 {
			return false
		}
		behind := 0
		for i, e := range st.Endpoints {
			switch {
			case e.ID != ids[i] || e.Err != nil:
				return false
			case e.Height == 100 && e.Lag == 0 && e.Eligible:
			case e.Height == 90 && e.Lag == 10 && !e.Eligible:
				behind++
			default:
				return false
			}
		}
		return behind == 1
	}

	const checks, readers = 50, 2
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done) // also when the loop below fails, so no reader outlives the test
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last time.Time
			for {
				select {
				case <-done:
					return
				default:
				}
				st := m.Status()
				if !consistent(st) {
					t.Errorf("a reader saw a Status that no snapshot gives: %+v", st)
					return
				}
				if st.Checked.Before(last) {
					t.Errorf("Checked went back from %v to %v", last, st.Checked)
					return
				}
				last = st.Checked
				runtime.Gosched() // leave the Checks some processor time
			}
		}()
	}
	publishAlternating(t, m, providers, checks)
}
