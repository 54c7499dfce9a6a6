package failnext

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestEventKindValues(t *testing.T) {
	if EventAttempt != 1 || EventCooldownSkip != 2 || EventReplayError != 3 || EventResult != 4 {
		t.Errorf("Attempt, CooldownSkip, ReplayError, Result = %d, %d, %d, %d; want 1, 2, 3, 4",
			EventAttempt, EventCooldownSkip, EventReplayError, EventResult)
	}
}

func TestEventsOfARequestThatFailsOverTwiceAndOfTheNextOne(t *testing.T) {
	rec := &recorder{}
	down := errors.New("a down")
	b503, b503Body := answer(503)
	base := perEndpoint(t, map[EndpointID]reply{"a": failWith(down), "b": respond(b503), "c": status(200)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		OnEvent:   rec.onEvent,
		Cooldown:  CooldownConfig{Threshold: 1},
	})

	t.Run("the first request reports each attempt, then the result", func(t *testing.T) {
		if err := get(t, tr, t.Context()); err != nil {
			t.Fatal(err)
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 0, down),
			attemptEvent("b", 2, 503, nil),
			attemptEvent("c", 3, 200, nil),
			resultEvent("c", 200),
		})
		if !b503Body.closed.Load() {
			t.Error("b's 503, replaced by c's 200, was not closed")
		}
	})
	t.Run("the second request reports the two cooling endpoints it skips", func(t *testing.T) {
		if err := get(t, tr, t.Context()); err != nil {
			t.Fatal(err)
		}
		checkEvents(t, rec.take(), []Event{
			skipEvent("a"),
			skipEvent("b"),
			attemptEvent("c", 1, 200, nil),
			resultEvent("c", 200),
		})
	})
}

func TestAttemptEventsForAbnormalBaseResults(t *testing.T) {
	broken := errors.New("broken")
	nilResponse := errText("failnext: upstream http://a.example/rpc?key=s3cret returned nil response")
	tests := []struct {
		name    string
		outcome reply
		want    Event
	}{
		{"a response with an error is reported as the error alone",
			func(*http.Request) (*http.Response, error) {
				resp, _ := answer(200)
				return resp, broken
			}, attemptEvent("a", 1, 0, broken)},
		{"a nil response without error is reported with the upstream's raw URL",
			func(*http.Request) (*http.Response, error) {
				return nil, nil
			}, attemptEvent("a", 1, 0, nilResponse)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			eps := []Endpoint{{ID: "a", URL: "http://a.example/rpc?key=s3cret"}}
			tr, _ := build(t, Config{Endpoints: eps, Base: inOrder(t, tt.outcome), OnEvent: rec.onEvent})
			err := get(t, tr, t.Context())
			checkEvents(t, rec.take(), []Event{tt.want, failedResultEvent(err)})
		})
	}
}

func TestOnEventRunsSynchronouslyWithTheRequestContext(t *testing.T) {
	type key struct{}
	caller := goroutineID()
	var got []string
	var attempts int
	base := perEndpoint(t, map[EndpointID]reply{
		"a": func(*http.Request) (*http.Response, error) { attempts++; return nil, errors.New("down") },
		"b": func(*http.Request) (*http.Response, error) { attempts++; r, _ := answer(200); return r, nil },
	})
	onEvent := func(ctx context.Context, ev Event) {
		if goroutineID() != caller {
			t.Errorf("event %d ran on another goroutine", ev.Kind)
		}
		if ctx.Value(key{}) != "mine" {
			t.Errorf("event %d got a context without the caller's value", ev.Kind)
		}
		if ev.Kind == EventAttempt && ev.Attempt != attempts {
			t.Errorf("the event for attempt %d arrived after %d Base calls", ev.Attempt, attempts)
		}
		got = append(got, "event")
	}
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base, OnEvent: onEvent})
	if err := get(t, tr, context.WithValue(t.Context(), key{}, "mine")); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("%d events had arrived when RoundTrip returned, want 3", len(got))
	}
}

func TestTheResultEventIsSentOnceAndLast(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	down := errors.New("down")
	tests := []struct {
		name     string
		ctx      context.Context
		eligible func(EndpointID) bool
		replies  map[EndpointID]reply
		from     EndpointID // the endpoint whose response is returned, if any
	}{
		{"a response from the first endpoint", context.Background(), nil,
			map[EndpointID]reply{"a": status(200)}, "a"},
		{"a response after failover", context.Background(), nil,
			map[EndpointID]reply{"a": failWith(down), "b": status(404)}, "b"},
		{"a kept trigger response names the endpoint that sent it", context.Background(), nil,
			map[EndpointID]reply{"a": status(502), "b": failWith(down)}, "a"},
		{"a failover error", context.Background(), nil,
			map[EndpointID]reply{"a": failWith(down), "b": failWith(down)}, ""},
		{"a context done on entry", canceled, nil, nil, ""},
		{"an unknown preferred endpoint", WithPreferredEndpoint(context.Background(), "zz"), nil, nil, ""},
		{"no usable endpoint", context.Background(), func(EndpointID) bool { return false }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			tr, _ := build(t, Config{
				Endpoints: endpoints("a", "b"),
				Base:      perEndpoint(t, tt.replies),
				Eligible:  tt.eligible,
				OnEvent:   rec.onEvent,
			})
			resp, err := tr.RoundTrip(newRequest(t, tt.ctx, "GET", nil))
			closeResponse(resp)
			events := rec.take()
			results := 0
			for _, ev := range events {
				if ev.Kind == EventResult {
					results++
				}
			}
			if results != 1 || len(events) == 0 {
				t.Fatalf("%d result events in:%s\nwant exactly one", results, formatEvents(events))
			}
			want := failedResultEvent(err)
			if err == nil {
				want = resultEvent(tt.from, resp.StatusCode)
			}
			checkEvents(t, events[len(events)-1:], []Event{want})
		})
	}
}

func TestAReplayError(t *testing.T) {
	gone := errors.New("body gone")
	down := errors.New("a down")
	t.Run("a kept trigger response is returned", func(t *testing.T) {
		rec := &recorder{}
		kept, keptBody := answer(503)
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b"),
			Base:      inOrder(t, respond(kept)),
			OnEvent:   rec.onEvent,
		})
		req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, gone }
		resp, err := tr.RoundTrip(req)
		if err != nil || resp != kept || keptBody.closed.Load() {
			t.Fatalf("got %v, %v; want the kept 503, open", resp, err)
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 503, nil),
			replayEvent("b", gone),
			resultEvent("a", 503),
		})
	})
	t.Run("without one the failover error's cause is the GetBody error", func(t *testing.T) {
		rec := &recorder{}
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b"),
			Base:      inOrder(t, failWith(down)),
			OnEvent:   rec.onEvent,
		})
		req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, gone }
		_, err := tr.RoundTrip(req)
		var fe *FailoverError
		if !errors.As(err, &fe) || fe.Unwrap() != gone {
			t.Fatalf("err = %v, want a *FailoverError caused by the GetBody error", err)
		}
		if len(fe.Attempts) != 1 || fe.Attempts[0] != (AttemptError{Endpoint: "a", Err: down}) {
			t.Errorf("Attempts = %+v, want a's attempt alone", fe.Attempts)
		}
		want := "failnext: failover failed without HTTP response (attempts=1): body gone"
		if err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 0, down),
			replayEvent("b", gone),
			failedResultEvent(err),
		})
	})
	t.Run("a context ended by the event wins", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rec := &recorder{hook: func(_ context.Context, ev Event) {
			if ev.Kind == EventReplayError {
				cancel()
			}
		}}
		kept, keptBody := answer(503)
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b"),
			Base:      inOrder(t, respond(kept)),
			OnEvent:   rec.onEvent,
		})
		req := newRequest(t, WithFailoverAllowed(ctx), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, gone }
		resp, err := tr.RoundTrip(req)
		if resp != nil || err != context.Canceled {
			t.Fatalf("got %v, %v; want the bare context error", resp, err)
		}
		if !keptBody.closed.Load() {
			t.Error("the kept response was not closed")
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 503, nil),
			replayEvent("b", gone),
			failedResultEvent(context.Canceled),
		})
	})
	t.Run("a body GetBody returns with its error is closed", func(t *testing.T) {
		tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: inOrder(t, failWith(down))})
		stray := newBody("x")
		req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) { return stray, gone }
		if _, err := tr.RoundTrip(req); !errors.Is(err, gone) {
			t.Fatalf("err = %v, want the GetBody error", err)
		}
		if !stray.closed.Load() {
			t.Error("the body that came with the GetBody error was not closed")
		}
	})
	t.Run("GetBody is called only once the next candidate passed the cooldown check", func(t *testing.T) {
		rec := &recorder{}
		base := perEndpoint(t, map[EndpointID]reply{"a": failWith(down), "b": fail("b down")})
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b", "c"),
			Base:      base,
			OnEvent:   rec.onEvent,
			Cooldown:  CooldownConfig{Threshold: 1},
		})
		get(t, tr, WithFailoverDenied(WithPreferredEndpoint(t.Context(), "b"))) // b cools down
		rec.take()
		var eventsBeforeGetBody int
		req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) {
			eventsBeforeGetBody = rec.count()
			return nil, gone
		}
		tr.RoundTrip(req)
		events := rec.take()
		checkEvents(t, events, []Event{
			attemptEvent("a", 1, 0, down),
			skipEvent("b"),
			replayEvent("c", gone),
			failedResultEvent(events[len(events)-1].Err),
		})
		if eventsBeforeGetBody != 2 {
			t.Errorf("GetBody called after %d events, want 2 (after b was skipped)", eventsBeforeGetBody)
		}
	})
}

func TestAPanicInOnEvent(t *testing.T) {
	type boom struct{}
	// run sends a GET through a Transport whose OnEvent panics at the
	// event panicAt accepts, and returns what the panic carried.
	run := func(t *testing.T, cfg Config, body io.ReadCloser, panicAt func(Event) bool) (recovered any) {
		t.Helper()
		cfg.OnEvent = func(_ context.Context, ev Event) {
			if panicAt(ev) {
				panic(boom{})
			}
		}
		tr, _ := build(t, cfg)
		req := newRequest(t, t.Context(), "GET", nil)
		req.Body = body
		defer func() { recovered = recover() }()
		resp, _ := tr.RoundTrip(req)
		closeResponse(resp)
		return nil
	}
	kind := func(k EventKind, n int) func(Event) bool {
		return func(ev Event) bool { return ev.Kind == k && ev.Attempt == n }
	}

	t.Run("it propagates and the unsent body is closed", func(t *testing.T) {
		body := newBody("x")
		cfg := Config{
			Endpoints: endpoints("a"),
			Base:      inOrder(t),
			Eligible:  func(EndpointID) bool { return false },
		}
		got := run(t, cfg, body, kind(EventResult, 0))
		if got != (boom{}) {
			t.Fatalf("recovered %v, want the panic value", got)
		}
		if !body.closed.Load() {
			t.Error("the body, never handed to Base, was not closed")
		}
	})
	t.Run("the attempt's response is closed", func(t *testing.T) {
		resp, body := answer(200)
		cfg := Config{Endpoints: endpoints("a"), Base: inOrder(t, respond(resp))}
		if run(t, cfg, nil, kind(EventAttempt, 1)) == nil {
			t.Fatal("the panic did not propagate")
		}
		if !body.closed.Load() {
			t.Error("the attempt's response was not closed")
		}
	})
	t.Run("the kept response is closed", func(t *testing.T) {
		kept, body := answer(503)
		cfg := Config{Endpoints: endpoints("a", "b"), Base: inOrder(t, respond(kept), fail("down"))}
		if run(t, cfg, nil, kind(EventAttempt, 2)) == nil {
			t.Fatal("the panic did not propagate")
		}
		if !body.closed.Load() {
			t.Error("the kept response was not closed")
		}
	})
	t.Run("the response about to be returned is closed", func(t *testing.T) {
		resp, body := answer(200)
		cfg := Config{Endpoints: endpoints("a"), Base: inOrder(t, respond(resp))}
		if run(t, cfg, nil, kind(EventResult, 0)) == nil {
			t.Fatal("the panic did not propagate")
		}
		if !body.closed.Load() {
			t.Error("the final response was not closed")
		}
	})
	t.Run("the attempt it interrupts is not recorded for the cooldown", func(t *testing.T) {
		base := inOrder(t, fail("down"), status(200))
		cfg := Config{Endpoints: endpoints("a"), Base: base, Cooldown: CooldownConfig{Threshold: 1}}
		cfg.OnEvent = func(_ context.Context, ev Event) {
			if ev.Kind == EventAttempt && ev.Err != nil {
				panic(boom{})
			}
		}
		tr, _ := build(t, cfg)
		func() {
			defer func() { recover() }()
			get(t, tr, t.Context())
		}()
		if err := get(t, tr, t.Context()); err != nil {
			t.Errorf("err = %v; the endpoint should not be cooling", err)
		}
		if got := base.take(); got != "a,a" {
			t.Errorf("tried %s, want a twice", got)
		}
	})
}
