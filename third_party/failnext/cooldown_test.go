package failnext

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

func TestTheDefaultCooldown(t *testing.T) {
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": status(200)})
	tr, clock := build(t, Config{Endpoints: endpoints("a", "b"), Base: base, OnEvent: rec.onEvent})

	request := func(t *testing.T, want string) {
		t.Helper()
		if err := get(t, tr, t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := base.take(); got != want {
			t.Errorf("tried %s, want %s", got, want)
		}
	}
	t.Run("the first three failures in a row are all tried", func(t *testing.T) {
		for range 3 {
			request(t, "a,b")
		}
		rec.take()
	})
	t.Run("after the third the endpoint is skipped", func(t *testing.T) {
		request(t, "b")
		checkEvents(t, rec.take(), []Event{
			skipEvent("a"),
			attemptEvent("b", 1, 200, nil),
			resultEvent("b", 200),
		})
	})
	t.Run("it is still skipped just before 30 seconds have passed", func(t *testing.T) {
		clock.advance(30*time.Second - time.Nanosecond)
		request(t, "b")
	})
	t.Run("it is tried again once 30 seconds have passed", func(t *testing.T) {
		clock.advance(time.Nanosecond)
		request(t, "a,b")
	})
	t.Run("it comes back with a fresh streak of three", func(t *testing.T) {
		request(t, "a,b")
		request(t, "a,b")
		request(t, "b")
	})
}

func TestTheThresholdTwoExample(t *testing.T) {
	rec := &recorder{}
	base := inOrder(t, status(503), status(429), status(503), status(503))
	tr, _ := build(t, Config{
		Endpoints: endpoints("a"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 2},
	})
	for i := range 4 {
		if err := get(t, tr, t.Context()); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if got := base.take(); got != "a,a,a,a" {
		t.Errorf("tried %s, want a four times", got)
	}
	rec.take()
	if err := get(t, tr, t.Context()); err != ErrNoUsableEndpoint {
		t.Errorf("fifth request: err = %v, want ErrNoUsableEndpoint", err)
	}
	checkEvents(t, rec.take(), []Event{skipEvent("a"), failedResultEvent(ErrNoUsableEndpoint)})
}

// coolsDown reports whether the single endpoint of a Transport with
// threshold 2 is cooling after one request per outcome.
func coolsDown(t *testing.T, outcomes ...reply) bool {
	t.Helper()
	probe := status(200) // used only if the endpoint is not cooling
	tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: inOrder(t, append(outcomes, probe)...),
		Cooldown: CooldownConfig{Threshold: 2}, AdditionalTriggerStatusCodes: []int{418}})
	for range outcomes {
		get(t, tr, t.Context())
	}
	return get(t, tr, t.Context()) == ErrNoUsableEndpoint
}

func TestWhatCountsAsACooldownFailure(t *testing.T) {
	withError := func(*http.Request) (*http.Response, error) {
		resp, _ := answer(200)
		return resp, errors.New("broken")
	}
	neither := func(*http.Request) (*http.Response, error) { return nil, nil }
	tests := []struct {
		name    string
		outcome reply
		counts  bool
	}{
		{"a transport error counts", fail("refused"), true},
		{"a nil response without error counts", neither, true},
		{"a response together with an error counts", withError, true},
		{"a context error from Base while the context is live counts", failWith(context.Canceled), true},
		{"502 counts", status(502), true},
		{"503 counts", status(503), true},
		{"504 counts", status(504), true},
		{"500 resets the streak", status(500), false},
		{"429 resets the streak", status(429), false},
		{"404 resets the streak", status(404), false},
		{"200 resets the streak", status(200), false},
		{"an additional trigger code resets the streak", status(418), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Two of the outcome in a row reach the threshold only if it counts.
			if got := coolsDown(t, tt.outcome, tt.outcome); got != tt.counts {
				t.Errorf("after two in a row cooling = %v, want %v", got, tt.counts)
			}
			// Between two failures it breaks the streak only if it does not count.
			if got := coolsDown(t, fail("x"), tt.outcome, fail("y")); got != tt.counts {
				t.Errorf("after failure, outcome, failure cooling = %v, want %v", got, tt.counts)
			}
		})
	}
}

func TestAFailureIsRecordedEvenWhenFailoverIsDenied(t *testing.T) {
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": status(200)})
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base, OnEvent: rec.onEvent})
	for range 3 {
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "POST", nil))
		var fe *FailoverError
		if resp != nil || !errors.As(err, &fe) {
			t.Fatalf("got %v, %v; want a *FailoverError", resp, err)
		}
	}
	if got := base.take(); got != "a,a,a" {
		t.Errorf("tried %s, want a three times", got)
	}
	rec.take()
	resp, err := tr.RoundTrip(newRequest(t, t.Context(), "POST", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	checkEvents(t, rec.take(), []Event{skipEvent("a"), attemptEvent("b", 1, 200, nil), resultEvent("b", 200)})
}

func TestAnAttemptIsNotRecordedWhenTheContextEndsWithIt(t *testing.T) {
	for _, cancelFirst := range []bool{false, true} {
		name := "a failure counts while the context is live"
		if cancelFirst {
			name = "a failure does not count when the context ends before it is checked"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			base := inOrder(t, func(*http.Request) (*http.Response, error) {
				if cancelFirst {
					cancel()
				}
				return nil, errors.New("down")
			}, status(200))
			tr, _ := build(t, Config{
				Endpoints: endpoints("a"),
				Base:      base,
				Cooldown:  CooldownConfig{Threshold: 1},
			})
			get(t, tr, ctx)
			cooling := get(t, tr, context.Background()) == ErrNoUsableEndpoint
			if cooling == cancelFirst {
				t.Errorf("cooling = %v after the failure, want %v", cooling, !cancelFirst)
			}
		})
	}
}

func TestCooldownLastsFromTheMomentTheFailureIsRecorded(t *testing.T) {
	var clock *fakeClock
	base := perEndpoint(t, map[EndpointID]reply{"a": func(*http.Request) (*http.Response, error) {
		clock.advance(10 * time.Second) // the attempt takes 10 s
		return nil, errors.New("down")
	}})
	tr, clock := build(t, Config{
		Endpoints: endpoints("a"),
		Base:      base,
		Cooldown:  CooldownConfig{Threshold: 1, Duration: 30 * time.Second},
	})
	get(t, tr, t.Context())
	clock.advance(30*time.Second - time.Nanosecond)
	if err := get(t, tr, t.Context()); err != ErrNoUsableEndpoint {
		t.Errorf("30 s after recording less 1 ns: err = %v, want ErrNoUsableEndpoint", err)
	}
	clock.advance(time.Nanosecond)
	if got := base.take(); got != "a" {
		t.Fatalf("tried %s before the cooldown ended, want a once", got)
	}
	get(t, tr, t.Context())
	if got := base.take(); got != "a" {
		t.Errorf("tried %q 30 s after recording, want a", got)
	}
}

func TestOutcomesDuringCooldownAreIgnored(t *testing.T) {
	type held struct {
		entered chan struct{}
		release chan reply
		done    chan error
	}
	holds := map[string]*held{}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if h := holds[r.Header.Get("Hold")]; h != nil {
			close(h.entered)
			return (<-h.release)(r)
		}
		return nil, errors.New("down")
	})
	tr, clock := build(t, Config{
		Endpoints: endpoints("a"),
		Base:      base,
		Cooldown:  CooldownConfig{Threshold: 2, Duration: 30 * time.Second},
	})
	start := func(name string) *held {
		h := &held{entered: make(chan struct{}), release: make(chan reply), done: make(chan error, 1)}
		holds[name] = h
		req := newRequest(t, t.Context(), "GET", nil)
		req.Header.Set("Hold", name)
		go func() {
			resp, err := tr.RoundTrip(req)
			closeResponse(resp)
			h.done <- err
		}()
		<-h.entered
		return h
	}
	cooling := func() bool { return get(t, tr, t.Context()) == ErrNoUsableEndpoint }

	// Two requests reach Base before the endpoint cools down.
	success, failure := start("success"), start("failure")
	get(t, tr, t.Context())
	get(t, tr, t.Context())
	if !cooling() {
		t.Fatal("two failures did not start the cooldown")
	}
	// They finish during the cooldown: a success, then a failure.
	clock.advance(10 * time.Second)
	success.release <- status(200)
	if err := <-success.done; err != nil {
		t.Fatal(err)
	}
	failure.release <- fail("late")
	if err := <-failure.done; err == nil {
		t.Fatal("the held failure returned no error")
	}

	clock.advance(20*time.Second - time.Nanosecond)
	if !cooling() {
		t.Error("a success during the cooldown ended it early")
	}
	clock.advance(time.Nanosecond)
	if cooling() {
		t.Error("a failure during the cooldown extended it")
	}
	// That probe failed once; had the late failure counted, this is the second.
	if cooling() {
		t.Error("the failure during the cooldown was counted after it")
	}
	if !cooling() {
		t.Error("two failures after the cooldown did not start another")
	}
}

func TestEveryCandidateCoolingAtTheStart(t *testing.T) {
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": status(503), "c": status(502)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 1},
	})
	get(t, tr, t.Context())
	base.take()
	rec.take()
	body := newBody("x")
	resp, err := tr.RoundTrip(newRequest(t, WithFailoverAllowed(t.Context()), "POST", body))
	if resp != nil || err != ErrNoUsableEndpoint {
		t.Fatalf("got %v, %v; want ErrNoUsableEndpoint", resp, err)
	}
	if got := base.take(); got != "" {
		t.Errorf("tried %s, want nothing", got)
	}
	if !body.closed.Load() {
		t.Error("the request body was not closed")
	}
	checkEvents(t, rec.take(), []Event{
		skipEvent("a"),
		skipEvent("b"),
		skipEvent("c"),
		failedResultEvent(ErrNoUsableEndpoint),
	})
}

func TestEveryRemainingCandidateCoolingAtFailover(t *testing.T) {
	// setup puts b and c into cooldown and returns a Transport whose
	// endpoint a answers with first.
	setup := func(t *testing.T, first reply) (*Transport, *recorder, *scripted) {
		t.Helper()
		rec := &recorder{}
		base := perEndpoint(t, map[EndpointID]reply{"a": first, "b": fail("b down"), "c": fail("c down")})
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b", "c"),
			Base:      base,
			OnEvent:   rec.onEvent,
			Cooldown:  CooldownConfig{Threshold: 1},
		})
		for _, id := range []EndpointID{"b", "c"} {
			get(t, tr, WithFailoverDenied(WithPreferredEndpoint(t.Context(), id)))
		}
		base.take()
		rec.take()
		return tr, rec, base
	}
	t.Run("the kept trigger response is returned", func(t *testing.T) {
		kept, keptBody := answer(503)
		tr, rec, base := setup(t, respond(kept))
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		if err != nil || resp != kept {
			t.Fatalf("got %v, %v; want the kept 503", resp, err)
		}
		if keptBody.closed.Load() {
			t.Error("the returned response was closed")
		}
		if got := base.take(); got != "a" {
			t.Errorf("tried %s, want a alone", got)
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 503, nil),
			skipEvent("b"),
			skipEvent("c"),
			resultEvent("a", 503),
		})
	})
	t.Run("without a kept response the last attempt's cause is returned", func(t *testing.T) {
		down := errors.New("a down")
		tr, rec, _ := setup(t, failWith(down))
		_, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		var fe *FailoverError
		if !errors.As(err, &fe) || fe.Unwrap() != down || len(fe.Attempts) != 1 ||
			fe.Attempts[0] != (AttemptError{Endpoint: "a", Err: down}) {
			t.Fatalf("err = %v, want a *FailoverError with a's attempt alone", err)
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 0, down),
			skipEvent("b"),
			skipEvent("c"),
			failedResultEvent(err),
		})
	})
}

func TestCooldownIsCheckedOnlyForCandidatesAboutToBeTried(t *testing.T) {
	tests := []struct {
		name   string
		method string
		first  reply
		want   []Event
	}{
		{"a request answered by the first candidate checks no other", "GET", status(200),
			[]Event{attemptEvent("a", 1, 200, nil), resultEvent("a", 200)}},
		{"a request that may not fail over checks no other", "POST", status(503),
			[]Event{attemptEvent("a", 1, 503, nil), resultEvent("a", 503)}},
		{"a request that fails over checks the next", "GET", status(503),
			[]Event{attemptEvent("a", 1, 503, nil), skipEvent("b"),
				attemptEvent("c", 2, 200, nil), resultEvent("c", 200)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			base := perEndpoint(t, map[EndpointID]reply{"a": tt.first, "b": fail("b down"), "c": status(200)})
			tr, _ := build(t, Config{
				Endpoints: endpoints("a", "b", "c"),
				Base:      base,
				OnEvent:   rec.onEvent,
				Cooldown:  CooldownConfig{Threshold: 1},
			})
			get(t, tr, WithFailoverDenied(WithPreferredEndpoint(t.Context(), "b")))
			rec.take()
			resp, err := tr.RoundTrip(newRequest(t, t.Context(), tt.method, nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			checkEvents(t, rec.take(), tt.want)
		})
	}
}

func TestEndpointsEligibleRejectsAreNotCheckedForCooldown(t *testing.T) {
	rec := &recorder{}
	rejectB := false
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": fail("b down"), "c": status(200)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 1},
		Eligible:  func(id EndpointID) bool { return !(rejectB && id == "b") },
	})
	get(t, tr, WithFailoverDenied(WithPreferredEndpoint(t.Context(), "b")))
	rec.take()
	rejectB = true
	if err := get(t, tr, t.Context()); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, rec.take(), []Event{
		attemptEvent("a", 1, 0, errText("a down")),
		attemptEvent("c", 2, 200, nil),
		resultEvent("c", 200),
	})
}

func TestDisabledCooldownTracksNothing(t *testing.T) {
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": status(503)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Disabled: true},
	})
	for range 5 {
		get(t, tr, t.Context())
	}
	if got := base.take(); got != "a,b,a,b,a,b,a,b,a,b" {
		t.Errorf("tried %s, want a,b five times", got)
	}
	for _, ev := range rec.take() {
		if ev.Kind == EventCooldownSkip {
			t.Errorf("skip event %+v with cooldown disabled", ev)
		}
	}
}

func TestTransportsDoNotShareCooldownState(t *testing.T) {
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": status(200)})
	cfg := Config{Endpoints: endpoints("a", "b"), Base: base}
	first, _ := build(t, cfg)
	second, _ := build(t, cfg)
	for range 3 {
		get(t, first, t.Context())
	}
	base.take()
	get(t, first, t.Context())
	get(t, second, t.Context())
	if got := base.take(); got != "b,a,b" {
		t.Errorf("tried %s, want b on the first Transport, then a,b on the second", got)
	}
}

func TestACandidateThatPassedTheCheckIsTriedEvenIfItCoolsMeanwhile(t *testing.T) {
	var tr *Transport
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			r.Body.Close()
		}
		if r.URL.Hostname() == "b.example" && r.Header.Get("Role") == "main" {
			resp, _ := answer(200)
			return resp, nil
		}
		return nil, errors.New("down")
	})
	rec := &recorder{}
	tr, _ = build(t, Config{
		Endpoints: endpoints("a", "b"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 1},
	})
	req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", newBody("x"))
	req.Header.Set("Role", "main")
	req.GetBody = func() (io.ReadCloser, error) {
		// b has passed the check; another request puts it into cooldown.
		if err := get(t, tr, WithFailoverDenied(WithPreferredEndpoint(t.Context(), "b"))); err == nil {
			t.Error("the side request to b did not fail")
		}
		return newBody("x"), nil
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("err = %v, want b's 200", err)
	}
	resp.Body.Close()
	checkEvents(t, rec.take(), []Event{
		attemptEvent("a", 1, 0, errText("down")),
		attemptEvent("b", 1, 0, errText("down")),
		failedResultEvent(errText("failnext: failover failed without HTTP response (attempts=1): down")),
		attemptEvent("b", 2, 200, nil), resultEvent("b", 200),
	})
}

func TestAContextEndingAtASkipStopsTheScan(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": fail("a down"), "b": fail("b down"), "c": status(200)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 1},
	})
	get(t, tr, WithFailoverDenied(t.Context())) // a cools down
	base.take()
	rec.take()
	rec.hook = func(_ context.Context, ev Event) {
		if ev.Kind == EventCooldownSkip {
			cancel()
		}
	}
	body := newBody("x")
	resp, err := tr.RoundTrip(newRequest(t, ctx, "GET", body))
	if resp != nil || err != context.Canceled {
		t.Fatalf("got %v, %v; want the bare context error", resp, err)
	}
	if got := base.take(); got != "" {
		t.Errorf("tried %s, want nothing", got)
	}
	if !body.closed.Load() {
		t.Error("the request body was not closed")
	}
	checkEvents(t, rec.take(), []Event{skipEvent("a"), failedResultEvent(context.Canceled)})
}
