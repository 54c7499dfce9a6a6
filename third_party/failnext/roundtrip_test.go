package failnext

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestANilRequestIsAnError(t *testing.T) {
	rec := &recorder{}
	calls := 0
	tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: inOrder(t), OnEvent: rec.onEvent,
		PermissionPolicy: func(*http.Request) Permission { calls++; return PermissionAllow }})
	resp, err := tr.RoundTrip(nil)
	if resp != nil || err == nil || err.Error() != "failnext: nil request" {
		t.Fatalf("got %v, %v; want the error failnext: nil request", resp, err)
	}
	if events := rec.take(); len(events) != 0 {
		t.Errorf("events for a nil request:%s", formatEvents(events))
	}
	if calls != 0 {
		t.Errorf("policy called %d times", calls)
	}
}

func TestAContextDoneOnEntry(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &recorder{}
	var calls []string
	tr, _ := build(t, Config{
		Endpoints: endpoints("a"),
		Base:      inOrder(t),
		OnEvent:   rec.onEvent,
		PermissionPolicy: func(*http.Request) Permission {
			calls = append(calls, "policy")
			return PermissionAllow
		},
		Eligible: func(EndpointID) bool {
			calls = append(calls, "eligible")
			return true
		},
	})
	body := newBody("x")
	resp, err := tr.RoundTrip(newRequest(t, ctx, "POST", body))
	if resp != nil || err != context.Canceled {
		t.Fatalf("got %v, %v; want the bare context error", resp, err)
	}
	if !body.closed.Load() {
		t.Error("the request body was not closed")
	}
	if len(calls) != 0 {
		t.Errorf("called %v, want neither the policy nor Eligible", calls)
	}
	checkEvents(t, rec.take(), []Event{failedResultEvent(context.Canceled)})
}

func TestTheRequestIsSentToTheEndpointURL(t *testing.T) {
	tests := []struct {
		name     string
		host     string // Request.Host before RoundTrip
		wantHost string
	}{
		{"a Host equal to the URL's host follows the endpoint", "orig.example:8080", "dest.example:9000"},
		{"an empty Host stays empty", "", ""},
		{"a different Host is kept", "virtual.example", "virtual.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *http.Request
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r
				resp, _ := answer(200)
				return resp, nil
			})
			tr, _ := build(t, Config{
				Base:      base,
				Endpoints: []Endpoint{{ID: "a", URL: "https://dest.example:9000/v3/key?x=1"}},
			})
			req, _ := http.NewRequest("GET", "http://orig.example:8080/other/path?y=2", nil)
			req.Host = tt.host
			req.RequestURI = "/other/path?y=2"
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got == req {
				t.Fatal("Base got the caller's request, not a clone")
			}
			if got.URL.String() != "https://dest.example:9000/v3/key?x=1" {
				t.Errorf("URL = %s, want the endpoint's URL as it is", got.URL)
			}
			if got.Host != tt.wantHost {
				t.Errorf("Host = %q, want %q", got.Host, tt.wantHost)
			}
			if got.RequestURI != "" {
				t.Errorf("RequestURI = %q, want it cleared", got.RequestURI)
			}
			if req.URL.String() != "http://orig.example:8080/other/path?y=2" || req.Host != tt.host {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestWhichOutcomesFailOver(t *testing.T) {
	tests := []struct {
		name      string
		extra     []int
		first     reply
		failsOver bool
	}{
		{"a transport error fails over", nil, fail("refused"), true},
		{"a nil response without error fails over",
			nil, func(*http.Request) (*http.Response, error) { return nil, nil }, true},
		{"502 fails over", nil, status(502), true},
		{"503 fails over", nil, status(503), true},
		{"504 fails over", nil, status(504), true},
		{"500 is returned", nil, status(500), false},
		{"429 is returned", nil, status(429), false},
		{"404 is returned", nil, status(404), false},
		{"200 is returned", nil, status(200), false},
		{"an additional code fails over", []int{429}, status(429), true},
		{"an additional 200 makes a 200 fail over", []int{200}, status(200), true},
		{"the built-in codes still fail over when others are added", []int{429}, status(503), true},
		{"a code that was not added is still returned", []int{429}, status(500), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := inOrder(t, tt.first, status(201))
			tr, _ := build(t, Config{
				Endpoints:                    endpoints("a", "b"),
				Base:                         base,
				AdditionalTriggerStatusCodes: tt.extra,
			})
			resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := "a"
			if tt.failsOver {
				want = "a,b"
			}
			if got := base.take(); got != want {
				t.Errorf("tried %s, want %s", got, want)
			}
		})
	}
}

func TestAnyOtherResponseIsReturnedUnread(t *testing.T) {
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}`
	resp := &http.Response{StatusCode: 200, Body: newBody(rpcError), Header: http.Header{}}
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: inOrder(t, respond(resp))})
	got, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
	if err != nil || got != resp {
		t.Fatalf("got %v, %v; want Base's response itself", got, err)
	}
	b, _ := io.ReadAll(got.Body)
	if string(b) != rpcError {
		t.Errorf("body = %q, want it unread", b)
	}
}

func TestAResponseThatCameWithAnErrorIsClosedAndIgnored(t *testing.T) {
	stray, strayBody := answer(200)
	base := inOrder(t, func(*http.Request) (*http.Response, error) {
		return stray, errors.New("broken")
	}, status(200))
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base})
	resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp == stray || !strayBody.closed.Load() {
		t.Error("the response that came with an error was returned or left open")
	}
	if got := base.take(); got != "a,b" {
		t.Errorf("tried %s, want a,b", got)
	}
}

func TestANilResponseWithoutErrorNamesTheUpstream(t *testing.T) {
	raw := "http://a.example/rpc?key=s3cret"
	tr, _ := build(t, Config{Endpoints: []Endpoint{{ID: "a", URL: raw}},
		Base: inOrder(t, func(*http.Request) (*http.Response, error) { return nil, nil })})
	_, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
	var fe *FailoverError
	if !errors.As(err, &fe) || len(fe.Attempts) != 1 {
		t.Fatalf("err = %v, want a *FailoverError with one attempt", err)
	}
	if want := "failnext: upstream " + raw + " returned nil response"; fe.Attempts[0].Err.Error() != want {
		t.Errorf("attempt error = %q, want %q", fe.Attempts[0].Err, want)
	}
}

func TestTriggerResponsesAreKept(t *testing.T) {
	t.Run("a 503 is returned when the next attempt fails", func(t *testing.T) {
		first, firstBody := answer(503)
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b", "c"),
			Base:      inOrder(t, respond(first), fail("refused"), fail("refused")),
		})
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		if err != nil || resp != first || firstBody.closed.Load() {
			t.Fatalf("got %v, %v; want the kept 503, open", resp, err)
		}
	})
	t.Run("a newer trigger response replaces the kept one", func(t *testing.T) {
		first, firstBody := answer(503)
		second, _ := answer(502)
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b", "c"),
			Base:      inOrder(t, respond(first), respond(second), fail("refused")),
		})
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		if err != nil || resp != second {
			t.Fatalf("got %v, %v; want the 502", resp, err)
		}
		if !firstBody.closed.Load() {
			t.Error("the replaced 503 was not closed")
		}
	})
	t.Run("a final answer closes the kept one", func(t *testing.T) {
		first, firstBody := answer(504)
		tr, _ := build(t, Config{
			Endpoints: endpoints("a", "b"),
			Base:      inOrder(t, respond(first), status(200)),
		})
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("got %v, %v; want the 200", resp, err)
		}
		resp.Body.Close()
		if !firstBody.closed.Load() {
			t.Error("the kept 504 was not closed")
		}
	})
	t.Run("an additional code is kept and returned like 503", func(t *testing.T) {
		first, firstBody := answer(429)
		tr, _ := build(t, Config{
			Endpoints:                    endpoints("a", "b"),
			Base:                         inOrder(t, respond(first), fail("refused")),
			AdditionalTriggerStatusCodes: []int{429},
		})
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		if err != nil || resp != first || firstBody.closed.Load() {
			t.Fatalf("got %v, %v; want the kept 429, open", resp, err)
		}
	})
	t.Run("a trigger response is returned when failover is denied", func(t *testing.T) {
		first, _ := answer(418)
		base := inOrder(t, respond(first))
		tr, _ := build(t, Config{
			Endpoints:                    endpoints("a", "b"),
			Base:                         base,
			AdditionalTriggerStatusCodes: []int{418},
		})
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "POST", nil))
		if err != nil || resp != first {
			t.Fatalf("got %v, %v; want the 418", resp, err)
		}
		if got := base.take(); got != "a" {
			t.Errorf("tried %s, want a alone", got)
		}
	})
}

func TestTheFailoverError(t *testing.T) {
	t.Run("it lists every failed attempt in order and unwraps to the last cause", func(t *testing.T) {
		first, second, last := errors.New("first down"), errors.New("second down"), errors.New("third down")
		base := inOrder(t, failWith(first), failWith(second), failWith(last))
		tr, _ := build(t, Config{Endpoints: endpoints("a", "b", "c"), Base: base})
		_, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
		var fe *FailoverError
		if !errors.As(err, &fe) {
			t.Fatalf("err = %v, want a *FailoverError", err)
		}
		want := []AttemptError{{"a", first}, {"b", second}, {"c", last}}
		if len(fe.Attempts) != 3 ||
			fe.Attempts[0] != want[0] ||
			fe.Attempts[1] != want[1] ||
			fe.Attempts[2] != want[2] {
			t.Errorf("Attempts = %+v, want %+v", fe.Attempts, want)
		}
		if fe.Unwrap() != last || !errors.Is(err, last) {
			t.Error("Unwrap does not give the last cause")
		}
		wantText := "failnext: failover failed without HTTP response (attempts=3): third down"
		if err.Error() != wantText {
			t.Errorf("error = %q, want %q", err, wantText)
		}
	})
	t.Run("it comes up after a single attempt", func(t *testing.T) {
		for _, tc := range []struct {
			eps    []Endpoint
			method string
		}{{endpoints("a"), "GET"}, {endpoints("a", "b"), "POST"}} {
			down := errors.New("down")
			tr, _ := build(t, Config{Endpoints: tc.eps, Base: inOrder(t, failWith(down))})
			_, err := tr.RoundTrip(newRequest(t, t.Context(), tc.method, nil))
			var fe *FailoverError
			if !errors.As(err, &fe) || len(fe.Attempts) != 1 || fe.Unwrap() != down {
				t.Errorf("%s over %d endpoints: err = %v, want a *FailoverError with one attempt",
					tc.method, len(tc.eps), err)
			}
		}
	})
	t.Run("its text has three forms", func(t *testing.T) {
		var nilErr *FailoverError
		tests := []struct {
			err  *FailoverError
			want string
		}{
			{&FailoverError{Attempts: make([]AttemptError, 2), cause: errors.New("x")},
				"failnext: failover failed without HTTP response (attempts=2): x"},
			{&FailoverError{Attempts: make([]AttemptError, 1)},
				"failnext: failover failed without HTTP response (attempts=1)"},
			{nilErr, "failnext: failover failed without HTTP response"},
		}
		for _, tt := range tests {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		}
		if nilErr.Unwrap() != nil {
			t.Error("Unwrap on a nil *FailoverError is not nil")
		}
	})
}

func TestTheBodyIsSentAgainOnlyWhenItCanBe(t *testing.T) {
	down := errors.New("down")
	tests := []struct {
		name    string
		body    io.ReadCloser
		getBody func() (io.ReadCloser, error)
		want    string
	}{
		{"no body is sent again", nil, nil, "a,b"},
		{"NoBody is sent again", http.NoBody, nil, "a,b"},
		{"a body with GetBody is sent again as a fresh copy",
			newBody("x"), func() (io.ReadCloser, error) { return newBody("x"), nil }, "a,b"},
		{"a body without GetBody ends the request with the last cause", newBody("x"), nil, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := perEndpoint(t, map[EndpointID]reply{"a": failWith(down), "b": status(200)})
			tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base})
			req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", nil)
			req.Body, req.GetBody = tt.body, tt.getBody
			resp, err := tr.RoundTrip(req)
			closeResponse(resp)
			bodies := base.sentBodies()
			if got := base.take(); got != tt.want {
				t.Fatalf("tried %s, want %s", got, tt.want)
			}
			if tt.want == "a" {
				var fe *FailoverError
				if !errors.As(err, &fe) || fe.Unwrap() != down || len(fe.Attempts) != 1 {
					t.Errorf("err = %v, want a *FailoverError caused by a's error", err)
				}
			}
			for i, b := range bodies {
				if tt.body != nil && tt.body != http.NoBody && b != "x" {
					t.Errorf("attempt %d carried body %q, want x", i+1, b)
				}
			}
		})
	}
}

func TestAContextThatEndsAfterAnAttempt(t *testing.T) {
	t.Run("a 200 from a Base that ended the context is closed", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ok, okBody := answer(200)
		base := inOrder(t, func(*http.Request) (*http.Response, error) {
			cancel()
			return ok, nil
		})
		tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: base})
		resp, err := tr.RoundTrip(newRequest(t, ctx, "GET", nil))
		if resp != nil || err != context.Canceled {
			t.Fatalf("got %v, %v; want the bare context error", resp, err)
		}
		if !okBody.closed.Load() {
			t.Error("the 200 was not closed")
		}
	})
	t.Run("the context is checked after the attempt event", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ok, okBody := answer(200)
		rec := &recorder{hook: func(_ context.Context, ev Event) {
			if ev.Kind == EventAttempt {
				cancel()
			}
		}}
		tr, _ := build(t, Config{
			Endpoints: endpoints("a"),
			Base:      inOrder(t, respond(ok)),
			OnEvent:   rec.onEvent,
		})
		resp, err := tr.RoundTrip(newRequest(t, ctx, "GET", nil))
		if resp != nil || err != context.Canceled || !okBody.closed.Load() {
			t.Fatalf("got %v, %v (200 closed: %v); want the bare context error and the 200 closed",
				resp, err, okBody.closed.Load())
		}
		checkEvents(t, rec.take(), []Event{
			attemptEvent("a", 1, 200, nil),
			failedResultEvent(context.Canceled),
		})
	})
	t.Run("the kept response is closed and no further attempt made", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		kept, keptBody := answer(503)
		base := inOrder(t, respond(kept), func(*http.Request) (*http.Response, error) {
			cancel()
			return nil, errors.New("down")
		})
		tr, _ := build(t, Config{Endpoints: endpoints("a", "b", "c"), Base: base})
		resp, err := tr.RoundTrip(newRequest(t, ctx, "GET", nil))
		if resp != nil || err != context.Canceled {
			t.Fatalf("got %v, %v; want the bare context error", resp, err)
		}
		if !keptBody.closed.Load() {
			t.Error("the kept response was not closed")
		}
		if got := base.take(); got != "a,b" {
			t.Errorf("tried %s, want a,b", got)
		}
	})
	t.Run("a replayed body obtained before the context ended is closed", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		base := inOrder(t, fail("down"))
		tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base})
		replayed := newBody("x")
		req := newRequest(t, WithFailoverAllowed(ctx), "POST", newBody("x"))
		req.GetBody = func() (io.ReadCloser, error) { cancel(); return replayed, nil }
		resp, err := tr.RoundTrip(req)
		if resp != nil || err != context.Canceled {
			t.Fatalf("got %v, %v; want the bare context error", resp, err)
		}
		if !replayed.closed.Load() {
			t.Error("the replayed body, never sent, was not closed")
		}
		if got := base.take(); got != "a" {
			t.Errorf("tried %s, want a alone", got)
		}
	})
}

func TestBodyOwnership(t *testing.T) {
	t.Run("a body handed to Base is left for Base to close", func(t *testing.T) {
		var sent io.ReadCloser
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = r.Body // this Base never closes it
			resp, _ := answer(200)
			return resp, nil
		})
		tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: base})
		body := newBody("x")
		resp, err := tr.RoundTrip(newRequest(t, t.Context(), "POST", body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sent != body {
			t.Fatal("Base did not get the original body on the first attempt")
		}
		if body.closed.Load() {
			t.Error("RoundTrip closed a body it had handed to Base")
		}
	})
	early := []struct {
		name string
		ctx  func(context.Context) context.Context
		cfg  Config
	}{
		{"a body is closed when the context is done on entry", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx
		}, Config{Endpoints: endpoints("a")}},
		{"a body is closed when the preferred endpoint is unknown",
			func(ctx context.Context) context.Context {
				return WithPreferredEndpoint(ctx, "zz")
			}, Config{Endpoints: endpoints("a")}},
		{"a body is closed when no endpoint is eligible", nil,
			Config{Endpoints: endpoints("a"), Eligible: func(EndpointID) bool { return false }}},
	}
	for _, tt := range early {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Base = inOrder(t)
			tr, _ := build(t, tt.cfg)
			ctx := t.Context()
			if tt.ctx != nil {
				ctx = tt.ctx(ctx)
			}
			body := newBody("x")
			if _, err := tr.RoundTrip(newRequest(t, ctx, "POST", body)); err == nil {
				t.Fatal("RoundTrip succeeded")
			}
			if !body.closed.Load() {
				t.Error("the body was not closed")
			}
		})
	}
}

func TestEachEndpointIsTriedAtMostOncePerRequest(t *testing.T) {
	base := perEndpoint(t, map[EndpointID]reply{"a": status(503), "b": fail("down"), "c": status(502)})
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		Cooldown:  CooldownConfig{Disabled: true},
	})
	resp, err := tr.RoundTrip(newRequest(t, t.Context(), "GET", nil))
	if err != nil || resp.StatusCode != 502 {
		t.Fatalf("got %v, %v; want c's 502", resp, err)
	}
	resp.Body.Close()
	if got := base.take(); got != "a,b,c" {
		t.Errorf("tried %s, want a,b,c once each", got)
	}
}
