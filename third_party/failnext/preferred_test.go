package failnext

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestEligibleIsAskedOncePerEndpointBeforeTheFirstAttempt(t *testing.T) {
	var asked []string
	base := inOrder(t, func(*http.Request) (*http.Response, error) {
		if len(asked) != 3 {
			t.Errorf("first attempt made after %d Eligible calls, want 3", len(asked))
		}
		return nil, errors.New("down")
	}, status(200))
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b", "c"),
		Base:      base,
		Eligible: func(id EndpointID) bool {
			asked = append(asked, string(id))
			return id != "b"
		},
	})
	if err := get(t, tr, t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(asked, ","); got != "a,b,c" {
		t.Errorf("Eligible asked about %s, want a,b,c once each", got)
	}
	if got := base.take(); got != "a,c" {
		t.Errorf("tried %s, want a,c (b rejected)", got)
	}
}

func TestNoEligibleEndpointSendsNothing(t *testing.T) {
	base := inOrder(t)
	rec := &recorder{}
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base, OnEvent: rec.onEvent,
		Eligible: func(EndpointID) bool { return false }})
	body := newBody("x")
	_, err := tr.RoundTrip(newRequest(t, t.Context(), "POST", body))
	if err != ErrNoUsableEndpoint {
		t.Fatalf("err = %v, want ErrNoUsableEndpoint itself", err)
	}
	if got := base.take(); got != "" {
		t.Errorf("tried %s, want nothing", got)
	}
	if !body.closed.Load() {
		t.Error("the request body was not closed")
	}
	checkEvents(t, rec.take(), []Event{failedResultEvent(ErrNoUsableEndpoint)})
}

func TestErrorTexts(t *testing.T) {
	for err, want := range map[error]string{
		ErrNoUsableEndpoint: "failnext: no usable endpoint",
		ErrUnknownEndpoint:  "failnext: unknown endpoint",
	} {
		if err.Error() != want {
			t.Errorf("error text %q, want %q", err, want)
		}
	}
}

func TestAPreferredEndpointMovesToTheFront(t *testing.T) {
	prefer := func(id EndpointID) func(context.Context) context.Context {
		return func(ctx context.Context) context.Context { return WithPreferredEndpoint(ctx, id) }
	}
	tests := []struct {
		name     string
		ctx      func(context.Context) context.Context
		eligible func(EndpointID) bool
		want     string
	}{
		{"without a preference the configured order is kept", nil, nil, "a,b,c,d"},
		{"a preferred c goes first and the others keep their order", prefer("c"), nil, "c,a,b,d"},
		{"a preferred first endpoint changes nothing", prefer("a"), nil, "a,b,c,d"},
		{"a preferred last endpoint goes first", prefer("d"), nil, "d,a,b,c"},
		{"the innermost preference wins",
			func(ctx context.Context) context.Context { return prefer("b")(prefer("d")(ctx)) },
			nil, "b,a,c,d"},
		{"a preferred endpoint that Eligible rejects is ignored",
			prefer("c"), func(id EndpointID) bool { return id != "c" }, "a,b,d"},
		{"a preference moves only among the eligible",
			prefer("d"), func(id EndpointID) bool { return id != "b" }, "d,a,c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := perEndpoint(t, map[EndpointID]reply{
				"a": fail("a down"),
				"b": fail("b down"),
				"c": fail("c down"),
				"d": fail("d down"),
			})
			tr, _ := build(t, Config{
				Endpoints: endpoints("a", "b", "c", "d"),
				Base:      base,
				Eligible:  tt.eligible,
			})
			ctx := t.Context()
			if tt.ctx != nil {
				ctx = tt.ctx(ctx)
			}
			err := get(t, tr, ctx)
			var fe *FailoverError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FailoverError", err)
			}
			if got := base.take(); got != tt.want {
				t.Errorf("tried %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAPreferredEndpointDoesNotChangeThePermission(t *testing.T) {
	base := perEndpoint(t, map[EndpointID]reply{"a": status(200), "c": fail("c down")})
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b", "c"), Base: base})
	resp, err := tr.RoundTrip(newRequest(t, WithPreferredEndpoint(t.Context(), "c"), "POST", nil))
	closeResponse(resp)
	var fe *FailoverError
	if !errors.As(err, &fe) || len(fe.Attempts) != 1 || fe.Attempts[0].Endpoint != "c" {
		t.Errorf("err = %v, want a *FailoverError for c alone", err)
	}
	if got := base.take(); got != "c" {
		t.Errorf("tried %s, want c alone: POST may not fail over", got)
	}
}

func TestACoolingPreferredEndpointIsSkipped(t *testing.T) {
	rec := &recorder{}
	base := perEndpoint(t, map[EndpointID]reply{"a": status(200), "c": fail("c down")})
	tr, _ := build(t, Config{Endpoints: endpoints("a", "b", "c"), Base: base, OnEvent: rec.onEvent,
		Cooldown: CooldownConfig{Threshold: 1}})
	ctx := WithPreferredEndpoint(t.Context(), "c")
	get(t, tr, WithFailoverDenied(ctx)) // c fails once and cools down
	base.take()
	rec.take()
	if err := get(t, tr, ctx); err != nil {
		t.Fatal(err)
	}
	if got := base.take(); got != "a" {
		t.Errorf("tried %s, want a", got)
	}
	checkEvents(t, rec.take(), []Event{skipEvent("c"), attemptEvent("a", 1, 200, nil), resultEvent("a", 200)})
}

func TestAnUnknownPreferredEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		id       EndpointID
		eligible func(EndpointID) bool
		want     string
	}{
		{"an ID that is not configured is unknown", "z", nil, `failnext: unknown endpoint "z"`},
		{"the empty ID is unknown", "", nil, `failnext: unknown endpoint ""`},
		{"an unknown ID beats having no usable endpoint",
			"z", func(EndpointID) bool { return false }, `failnext: unknown endpoint "z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			rec := &recorder{}
			base := inOrder(t)
			eligible := tt.eligible
			if eligible == nil {
				eligible = func(EndpointID) bool { return true }
			}
			tr, _ := build(t, Config{
				Endpoints: endpoints("a", "b"),
				Base:      base,
				OnEvent:   rec.onEvent,
				Eligible: func(id EndpointID) bool {
					asked = append(asked, string(id))
					return eligible(id)
				},
			})
			body := newBody("x")
			resp, err := tr.RoundTrip(newRequest(t, WithPreferredEndpoint(t.Context(), tt.id), "POST", body))
			if resp != nil || !errors.Is(err, ErrUnknownEndpoint) {
				t.Fatalf("got %v, %v; want an error wrapping ErrUnknownEndpoint", resp, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
			if errors.Is(err, ErrNoUsableEndpoint) {
				t.Error("the error also matches ErrNoUsableEndpoint")
			}
			if got := strings.Join(asked, ","); got != "a,b" {
				t.Errorf("Eligible asked about %q, want a,b before the preference is resolved", got)
			}
			if got := base.take(); got != "" {
				t.Errorf("tried %s, want nothing", got)
			}
			if !body.closed.Load() {
				t.Error("the request body was not closed")
			}
			checkEvents(t, rec.take(), []Event{failedResultEvent(err)})
		})
	}
}
