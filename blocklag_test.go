package blocklag

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// Eligible answers for configured IDs only: each is eligible until the
// first Check publishes, then as that Check judged it. It allocates nothing.
func TestEligible(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("a", newProvider(t, 5).URL, "b", "http://127.0.0.1:1")})
	wantEligible(t, m, verdicts{"a": true, "b": true, "c": false, "": false})
	check(m) // publishes, with b's probe failed
	wantEligible(t, m, verdicts{"a": true, "b": false, "c": false, "": false})
	if allocs := testing.AllocsPerRun(100, func() { m.Eligible("a"); m.Eligible("c") }); allocs != 0 {
		t.Errorf("Eligible allocates %v times per call", allocs)
	}
}

func TestMonitorNotMadeByNew(t *testing.T) {
	for name, m := range map[string]*Monitor{"a nil Monitor": nil, "a zero Monitor": {}} {
		t.Run(name, func(t *testing.T) {
			if err := m.Check(context.Background()); err == nil {
				t.Error("Check returned nil")
			}
			wantEligible(t, m, verdicts{"a": false, "": false})
			if st := m.Status(); !reflect.DeepEqual(st, Status{}) {
				t.Errorf("Status = %+v, want the zero Status", st)
			}
		})
	}
}

// While a Check's probes are in flight they all run at once, Eligible and
// Status answer from the snapshot in force without waiting for them, and
// Check returns only once every probe has finished.
func TestCheckInFlight(t *testing.T) {
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
	wantEligible(t, m, verdicts{"a": true, "b": true, "c": true})
	if st := m.Status(); len(st.Endpoints) != 3 || !st.Checked.IsZero() {
		t.Errorf("Status during the first Check = %+v, want the fail-open view", st)
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

	t.Run("all succeed: nil error and a new snapshot, in which a provider that caught up is eligible again", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("good", good.URL, "lagging", lagging.URL), MaxLag: 3})
		for _, height := range []uint64{90, 99} {
			lagging.height.Store(height)
			if err := check(m); err != nil {
				t.Fatalf("Check = %v", err)
			}
			wantEligible(t, m, verdicts{"good": true, "lagging": height == 99})
		}
	})
	t.Run("all fail: the fail-open snapshot stays", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("broken", broken.URL, "refused", "http://127.0.0.1:1")})
		if err := checkKeeping(t, m, context.Background()); len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want two ProbeErrors", err)
		}
		wantEligible(t, m, verdicts{"broken": true, "refused": true})
	})
	t.Run("all fail later: the last published snapshot stays", func(t *testing.T) {
		flaky := newProvider(t, 100)
		m := mustNew(t, Config{Endpoints: named("flaky", flaky.URL, "broken", broken.URL)})
		check(m)
		flaky.Close()
		if err := checkKeeping(t, m, context.Background()); len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want two ProbeErrors", err)
		}
		wantEligible(t, m, verdicts{"flaky": true, "broken": false})
	})
}

// checkKeeping runs a Check with ctx that must publish nothing, and fails t
// unless Status afterwards is, whole, the Status from before.
func checkKeeping(t *testing.T, m *Monitor, ctx context.Context) error {
	t.Helper()
	before := m.Status()
	err := m.Check(ctx)
	if after := m.Status(); !reflect.DeepEqual(after, before) {
		t.Errorf("Status = %+v, want the one in force before, %+v", after, before)
	}
	return err
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
	err := checkKeeping(t, m, ctx)
	if !errors.Is(err, ctx.Err()) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check = %v, want an error wrapping context.Canceled", err)
	}
	wantEligible(t, m, verdicts{"good": true, "slow": true})
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

// Eligible and Status may be called while Checks keep publishing: readers
// call both without pause while "a" and "b" take turns being 10 blocks
// behind, so that every Check publishes a snapshot different from the last,
// and each Check's verdicts are then read back. What readers see cannot be
// checked from outside beyond what -race already checks: that publication
// and reads do not race.
func TestReadsWhileChecksPublish(t *testing.T) {
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	ids := []failnext.EndpointID{"a", "b"}
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL), MaxLag: 3})
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop.Store(true) // also when a Check fails, so no reader outlives the test
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m.Eligible("a")
				m.Status()
				runtime.Gosched() // leave the Checks some processor time
			}
		}()
	}
	for i := range 50 {
		behind, ahead := i%2, 1-i%2
		providers[behind].height.Store(90)
		providers[ahead].height.Store(100)
		if err := check(m); err != nil || m.Eligible(ids[behind]) || !m.Eligible(ids[ahead]) {
			t.Fatalf("check %d: %v; published %+v", i, err, m.Status())
		}
	}
}
