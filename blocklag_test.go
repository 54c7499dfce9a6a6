package blocklag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
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
func TestEligibleAnswersForConfiguredIDsOnly(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("a", newProvider(t, 5).URL, "b", "http://127.0.0.1:1")})
	wantEligible(t, m, verdicts{"a": true, "b": true, "c": false, "": false})
	check(m) // publishes, with b's probe failed
	wantEligible(t, m, verdicts{"a": true, "b": false, "c": false, "": false})
	allocs := testing.AllocsPerRun(100, func() {
		m.Eligible("a")
		m.Eligible("c")
	})
	if allocs != 0 {
		t.Errorf("Eligible allocates %v times per call", allocs)
	}
}

func TestMonitorNotMadeByNewDoesNotPanic(t *testing.T) {
	monitors := map[string]*Monitor{"a nil Monitor": nil, "a zero Monitor": {}}
	for name, m := range monitors {
		t.Run(name+" checks nothing and answers with zero values", func(t *testing.T) {
			if err := m.Check(context.Background()); err == nil {
				t.Error("Check returned nil")
			}
			wantEligible(t, m, verdicts{"a": false, "": false})
			if st := m.Status(); !reflect.DeepEqual(st, Status{}) {
				t.Errorf("Status = %+v, want the zero Status", st)
			}
			if st := m.Stats(); !reflect.DeepEqual(st, Stats{}) {
				t.Errorf("Stats = %+v, want the zero Stats", st)
			}
		})
	}
}

// While a Check's probes are in flight they all run at once, Eligible and
// Status answer from the snapshot in force without waiting for them, and
// Check returns only once every probe has finished. Cancelling the Check's
// context ends them and abandons the Check, deadline or not: it publishes
// nothing, and its error is the context's, not a *CheckError.
func TestProbesRunAtOnceWhileReadsAnswerFromTheSnapshotInForce(t *testing.T) {
	timeouts := map[string]time.Duration{
		"under a context without a deadline": 0,
		"under a context with a deadline":    time.Hour,
	}
	for name, timeout := range timeouts {
		t.Run(name, func(t *testing.T) {
			var finished atomic.Int32
			started := make(chan struct{}, 3)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				started <- struct{}{}
				defer finished.Add(1)
				<-r.Context().Done() // hangs until the Check's context ends
				return nil, r.Context().Err()
			})
			eps := named("a", "http://a.example", "b", "http://b.example", "c", "http://c.example")
			m := mustNew(t, Config{Endpoints: eps, Base: base})
			ctx, cancel := context.WithCancel(context.Background())
			if timeout > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), timeout)
			}
			defer cancel()
			done := make(chan error)
			go func() { done <- m.Check(ctx) }()
			// Each probe blocks until the context ends, so the three can all
			// start only if they are in flight at once.
			for range 3 {
				<-started
			}
			wantEligible(t, m, verdicts{"a": true, "b": true, "c": true})
			if st := m.Status(); len(st.Endpoints) != 3 || !st.Checked.IsZero() {
				t.Errorf("Status during the first Check = %+v, want the fail-open view", st)
			}
			cancel()
			err := <-done
			if !errors.Is(err, context.Canceled) || errors.As(err, new(*CheckError)) {
				t.Errorf("Check = %v, want context.Canceled and no *CheckError", err)
			}
			if finished.Load() != 3 {
				t.Errorf("Check returned with %d of 3 probes still running", 3-finished.Load())
			}
			if st := m.Status(); !st.Checked.IsZero() {
				t.Errorf("the abandoned Check published %+v", st)
			}
		})
	}
}

// The margin that ends the probes before the Check's deadline is a tenth of
// the time left when they start, at most one second, whatever ProbeTimeout
// adds; a Base sees it in each request's context. A context without a
// deadline gives the requests none. The test does not know the time left
// when the probes started, only that they started after the context was
// made (with want as its margin) and before the Base was called, so the
// margin lies between the two.
func TestProbeMarginIsATenthOfTheTimeLeftAtMostOneSecond(t *testing.T) {
	tests := []struct {
		name         string
		timeout      time.Duration // the Check's context's; 0 sets no deadline
		probeTimeout time.Duration
		want         time.Duration // the margin, had the probes started at once
	}{
		{"a 5 s context ends the probes at 4.5 s", 5 * time.Second, 0, 500 * time.Millisecond},
		{"a 2 s context ends them at 1.8 s", 2 * time.Second, 0, 200 * time.Millisecond},
		{"a 30 s context ends them a second before its deadline, not three",
			30 * time.Second, 0, time.Second},
		{"an hour's context ends them one second before its deadline", time.Hour, 0, time.Second},
		{"a longer ProbeTimeout changes nothing", 30 * time.Second, time.Hour, time.Second},
		{"a context without a deadline gives the probes none", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type call struct {
				deadline time.Time // the request's
				at       time.Time // when the Base was called
			}
			calls := make(chan call, 1)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				deadline, _ := r.Context().Deadline()
				calls <- call{deadline: deadline, at: time.Now()}
				return response(r, http.StatusOK, answer(100), -1), nil
			})
			m := mustNew(t, Config{
				Endpoints:    named("a", "http://a.example"),
				Base:         base,
				ProbeTimeout: tt.probeTimeout,
			})
			ctx, cancel := context.WithCancel(context.Background())
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tt.timeout)
			}
			defer cancel()
			if err := m.Check(ctx); err != nil {
				t.Fatal(err)
			}
			probe := <-calls
			deadline, hasDeadline := ctx.Deadline()
			if !hasDeadline {
				if !probe.deadline.IsZero() {
					t.Errorf("the probe has the deadline %v, want none", probe.deadline)
				}
				return
			}
			least := min(deadline.Sub(probe.at)/10, time.Second)
			margin := deadline.Sub(probe.deadline)
			if probe.deadline.IsZero() || margin > tt.want || margin < least {
				t.Errorf("the probe ends %v before the Check's deadline, want from %v to %v",
					margin, least, tt.want)
			}
		})
	}
}

func TestCheckPublishesWhenAnyProbeSucceeds(t *testing.T) {
	good := newProvider(t, 100)
	lagging := newProvider(t, 90)
	broken := newProvider(t, 100)
	broken.on("eth_blockNumber", reply(http.StatusInternalServerError, ""))

	t.Run("all succeed: nil error, and one that caught up is eligible again", func(t *testing.T) {
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

// A Check whose context ends while it probes publishes nothing, whatever
// its probes found, and its error wraps the context's. Stats counts it as
// sent and its failures as they were decided, each under the Reason of its
// failure: good succeeds and rejecting fails with a 401 before slow cancels
// the Check, and slow's answer, handed back after the cancel, fails as the
// cancel.
func TestCancelledCheckKeepsSnapshotAndCountsItsFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var decided sync.WaitGroup // a probe is decided once its body is closed
	decided.Add(2)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		readRequest(t, r)
		switch r.URL.Host {
		case "slow.example":
			decided.Wait()
			cancel()
			return response(r, http.StatusOK, answer(90), -1), nil
		case "rejecting.example":
			return onceClosed(response(r, http.StatusUnauthorized, "", -1), decided.Done), nil
		}
		return onceClosed(response(r, http.StatusOK, answer(100), -1), decided.Done), nil
	})
	eps := named(
		"good", "http://good.example",
		"rejecting", "http://rejecting.example",
		"slow", "http://slow.example",
	)
	m := mustNew(t, Config{Endpoints: eps, MaxLag: 3, Base: base})
	if err := checkKeeping(t, m, ctx); !errors.Is(err, ctx.Err()) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Check = %v, want an error wrapping context.Canceled", err)
	}
	wantEligible(t, m, verdicts{"good": true, "rejecting": true, "slow": true})
	rejected := reasonOf(&StatusError{StatusCode: http.StatusUnauthorized})
	cancelled := reasonOf(context.Canceled)
	want := Stats{Checks: 1, Endpoints: []EndpointStats{
		{ID: "good", Failures: counted(nil)},
		{ID: "rejecting", Failures: counted(map[Reason]uint64{rejected: 1})},
		{ID: "slow", Failures: counted(map[Reason]uint64{cancelled: 1})},
	}}
	if got := m.Stats(); !reflect.DeepEqual(got, want) {
		t.Errorf("Stats =\n%+v\nwant\n%+v", got, want)
	}
}

// gate is a Base that holds every probe until it is opened (or the probe's
// context ends), reports each arrival on arrived, and records the most
// probes it held at once.
type gate struct {
	arrived  chan struct{}
	opened   chan struct{}
	open     func()
	inFlight atomic.Int32
	most     atomic.Int32
}

// newGate returns a closed gate, which opens at the latest when the test
// ends.
func newGate(t *testing.T) *gate {
	g := &gate{arrived: make(chan struct{}, 16), opened: make(chan struct{})}
	g.open = sync.OnceFunc(func() { close(g.opened) })
	t.Cleanup(g.open) // so that no probe outlives a failed test
	return g
}

// RoundTrip holds r until g opens or r's context ends.
func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	most := g.most.Load()
	for n > most && !g.most.CompareAndSwap(most, n) {
		most = g.most.Load()
	}
	g.arrived <- struct{}{}
	select {
	case <-g.opened:
		return response(r, http.StatusOK, answer(1), -1), nil
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

// newWaitingContext returns a waitingContext over parent.
func newWaitingContext(parent context.Context) *waitingContext {
	return &waitingContext{Context: parent, asked: make(chan struct{})}
}

// Done closes asked the first time, and returns the parent's Done.
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
		// Before its probes began, ctx's error comes back as it is.
		if err := <-waiting; err != context.Canceled {
			t.Errorf("waiting Check = %v, want context.Canceled itself", err)
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
		t.Errorf("%d probes ran at once, %d probes after the first; want 1 and 1 (the second Check's)",
			g.most.Load(), n)
	}
}

// No goroutine, timer or TTL outlives New or Check. The probes go through
// a Base that answers in memory, so that no connection goroutine, which
// ends on its own schedule, is counted.
func TestNothingRunsOnAfterNewOrCheckReturns(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return response(r, http.StatusOK, answer(1), -1), nil
	})
	before := runtime.NumGoroutine()
	eps := named("a", "http://a.example", "b", "http://b.example")
	m := mustNew(t, Config{Endpoints: eps, Base: base})
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

// Two endpoints with one URL are each probed and judged on their own: the
// provider answers the first probe it gets and fails the second.
func TestEndpointsSharingAURLAreJudgedApart(t *testing.T) {
	p := newProvider(t, 1)
	var answered atomic.Bool
	p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
		if answered.CompareAndSwap(false, true) {
			io.WriteString(w, answer(1))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	m := mustNew(t, Config{Endpoints: named("x", p.URL, "y", p.URL)})
	errs := probeErrors(t, check(m))
	if p.total() != 2 || len(errs) != 1 {
		t.Fatalf("%d probes and %d errors, want 2 and 1", p.total(), len(errs))
	}
	for _, id := range []failnext.EndpointID{"x", "y"} {
		if m.Eligible(id) != (errs[id] == nil) {
			t.Errorf("%s: eligible %v but error %v", id, m.Eligible(id), errs[id])
		}
	}
}

// Eligible and Status may be called while Checks keep publishing. "a" and
// "b" take turns being 10 blocks behind, so that every Check publishes a
// snapshot unlike the last, and Check i is stamped i seconds after the
// first, so that each snapshot tells which Check made it. Two readers read
// without pause, and every Status they read must be one snapshot whole:
// the fail-open one, or one Check's, in which the endpoint that was behind
// in that Check has lag 10 and is ineligible and the other has lag 0 and is
// eligible. Eligible, called between two reads of one snapshot, must
// answer from that snapshot, and no reader may see an older snapshot after
// a newer one. Each reader goes on until it has read the last Check's
// snapshot.
func TestReadsWhileChecksPublishSeeOneSnapshotWhole(t *testing.T) {
	const checks = 500
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	ids := []failnext.EndpointID{"a", "b"}
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL), MaxLag: 3})
	first := clockAt("10:00:00")
	last := first.Add((checks - 1) * time.Second)
	turn := 0 // the Check in progress; Check reads the clock on the goroutine that calls it
	m.now = func() time.Time { return first.Add(time.Duration(turn) * time.Second) }

	// wrong says how st is not one snapshot whole, or "" when it is.
	wrong := func(st Status) string {
		if len(st.Endpoints) != 2 {
			return "a Status without both endpoints"
		}
		if st.Checked.IsZero() {
			for _, e := range st.Endpoints {
				if !e.Eligible || e.Height != 0 || e.Lag != 0 || e.Err != nil {
					return "a fail-open Status with " + string(e.ID) + " measured"
				}
			}
			return ""
		}
		i := int(st.Checked.Sub(first) / time.Second)
		if i < 0 || i >= checks || st.Reference != 100 {
			return "a Status that no Check published"
		}
		for j, e := range st.Endpoints {
			behind := j == i%2
			lagging := e.Height == 90 && e.Lag == 10
			leading := e.Height == 100 && e.Lag == 0
			asJudged := behind && lagging || !behind && leading
			if e.ID != ids[j] || e.Eligible == behind || e.Err != nil || !asJudged {
				return fmt.Sprintf("%s is not as Check %d left it", e.ID, i)
			}
		}
		return ""
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop.Store(true) // when a Check fails, so that no reader outlives the test
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Gosched leaves the Checks some processor time.
			for newest := (time.Time{}); !newest.Equal(last) && !stop.Load(); runtime.Gosched() {
				before := m.Status()
				a := m.Eligible("a")
				b := m.Eligible("b")
				after := m.Status()
				if msg := cmp.Or(wrong(before), wrong(after)); msg != "" {
					t.Errorf("a reader read %s: %+v, then %+v", msg, before, after)
					return
				}
				if before.Checked.Before(newest) || after.Checked.Before(before.Checked) {
					t.Errorf("a reader read the Check of %s after that of %s",
						hms(after.Checked), hms(newest))
					return
				}
				newest = after.Checked
				sameSnapshot := before.Checked.Equal(after.Checked)
				if sameSnapshot && (a != before.Endpoints[0].Eligible || b != before.Endpoints[1].Eligible) {
					t.Errorf("Eligible answered a %v, b %v within the snapshot %+v", a, b, before)
					return
				}
			}
		}()
	}
	for i := range checks {
		turn = i
		behind := i % 2
		ahead := 1 - behind
		providers[behind].height.Store(90)
		providers[ahead].height.Store(100)
		if err := check(m); err != nil || m.Eligible(ids[behind]) || !m.Eligible(ids[ahead]) {
			t.Fatalf("check %d: %v; published %+v", i, err, m.Status())
		}
	}
	wg.Wait() // each reader ends once it has read the last Check's snapshot
}
