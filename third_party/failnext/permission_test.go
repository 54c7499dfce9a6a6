package failnext

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestPermissionValues(t *testing.T) {
	var zero Permission
	if zero != PermissionDefer || PermissionDefer != 0 || PermissionAllow != 1 || PermissionDeny != 2 {
		t.Errorf("Defer, Allow, Deny = %d, %d, %d (zero value %d); want 0, 1, 2 with Defer the zero value",
			PermissionDefer, PermissionAllow, PermissionDeny, zero)
	}
}

func TestFailoverPermission(t *testing.T) {
	allowed := WithFailoverAllowed
	denied := WithFailoverDenied
	policy := func(p Permission) func(*http.Request) Permission {
		return func(*http.Request) Permission { return p }
	}
	tests := []struct {
		name      string
		method    string
		mark      func(context.Context) context.Context
		policy    func(*http.Request) Permission
		failsOver bool
	}{
		{"GET fails over by default", "GET", nil, nil, true},
		{"HEAD fails over by default", "HEAD", nil, nil, true},
		{"POST does not fail over by default", "POST", nil, nil, false},
		{"PUT does not fail over by default", "PUT", nil, nil, false},
		{"a lower-case get does not fail over", "get", nil, nil, false},
		{"an empty method does not fail over", "", nil, nil, false},
		{"POST fails over when allowed on the context", "POST", allowed, nil, true},
		{"GET does not fail over when denied on the context", "GET", denied, nil, false},
		{"the innermost deny wins over an outer allow",
			"GET", func(c context.Context) context.Context { return denied(allowed(c)) }, nil, false},
		{"the innermost allow wins over an outer deny",
			"POST", func(c context.Context) context.Context { return allowed(denied(c)) }, nil, true},
		{"a policy that allows lets POST fail over", "POST", nil, policy(PermissionAllow), true},
		{"a policy that denies keeps GET in place", "GET", nil, policy(PermissionDeny), false},
		{"a policy that defers leaves GET to the method rule", "GET", nil, policy(PermissionDefer), true},
		{"a policy that defers leaves POST to the method rule", "POST", nil, policy(PermissionDefer), false},
		{"an unknown policy answer denies even GET", "GET", nil, policy(Permission(7)), false},
		{"an allow mark beats a denying policy", "GET", allowed, policy(PermissionDeny), true},
		{"a deny mark beats an allowing policy", "POST", denied, policy(PermissionAllow), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := inOrder(t, fail("down"), status(200))
			tr, _ := build(t, Config{Endpoints: endpoints("a", "b"), Base: base, PermissionPolicy: tt.policy})
			ctx := t.Context()
			if tt.mark != nil {
				ctx = tt.mark(ctx)
			}
			req := newRequest(t, ctx, "GET", nil)
			req.Method = tt.method
			resp, err := tr.RoundTrip(req)
			closeResponse(resp)
			want := "a"
			if tt.failsOver {
				want = "a,b"
			}
			if got := base.take(); got != want {
				t.Errorf("tried %s, want %s (resp %v, err %v)", got, want, resp, err)
			}
		})
	}
}

func TestThePolicyIsNotCalledWhenTheContextIsMarked(t *testing.T) {
	for _, mark := range []func(context.Context) context.Context{WithFailoverAllowed, WithFailoverDenied} {
		calls := 0
		tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: inOrder(t, status(200)),
			PermissionPolicy: func(*http.Request) Permission { calls++; return PermissionAllow }})
		if err := get(t, tr, mark(t.Context())); err != nil {
			t.Fatal(err)
		}
		if calls != 0 {
			t.Errorf("policy called %d times despite a mark on the context", calls)
		}
	}
}

func TestThePolicySeesTheCallersRequestBeforeEligible(t *testing.T) {
	var log []string
	var seen *http.Request
	tr, _ := build(t, Config{
		Endpoints: endpoints("a", "b"),
		Base:      inOrder(t, status(200)),
		PermissionPolicy: func(r *http.Request) Permission {
			log = append(log, "policy")
			seen = r
			return PermissionDefer
		},
		Eligible: func(id EndpointID) bool { log = append(log, "eligible "+string(id)); return true },
	})
	req := newRequest(t, t.Context(), "GET", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen != req {
		t.Error("the policy was not given the caller's own request")
	}
	if got := strings.Join(log, ","); got != "policy,eligible a,eligible b" {
		t.Errorf("calls in order %s, want the policy once, then Eligible", got)
	}
}

func TestWhenThePolicyIsCalled(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		eligible func(EndpointID) bool
		nilReq   bool
		calls    int
	}{
		{"a nil request does not call it", context.Background(), nil, true, 0},
		{"a context done on entry does not call it", canceled, nil, false, 0},
		{"an unknown preferred endpoint still calls it",
			WithPreferredEndpoint(context.Background(), "zz"), nil, false, 1},
		{"a request with no usable endpoint still calls it",
			context.Background(), func(EndpointID) bool { return false }, false, 1},
		{"a request with a single candidate calls it once",
			context.Background(), func(id EndpointID) bool { return id == "a" }, false, 1},
		{"a request that fails over calls it once", context.Background(), nil, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			tr, _ := build(t, Config{
				Endpoints:        endpoints("a", "b"),
				Base:             perEndpoint(t, map[EndpointID]reply{"a": fail("down"), "b": status(200)}),
				Eligible:         tt.eligible,
				PermissionPolicy: func(*http.Request) Permission { calls++; return PermissionAllow },
			})
			var req *http.Request
			if !tt.nilReq {
				req = newRequest(t, tt.ctx, "GET", nil)
			}
			resp, _ := tr.RoundTrip(req)
			closeResponse(resp)
			if calls != tt.calls {
				t.Errorf("policy called %d times, want %d", calls, tt.calls)
			}
		})
	}
}

func TestAllowingFailoverDoesNotWaiveTheOtherConditions(t *testing.T) {
	tests := []struct {
		name string
		eps  []Endpoint
		body bool
		want string
	}{
		{"a non-trigger answer is still returned at once", endpoints("ok", "b"), false, "ok"},
		{"a failure on the last candidate still ends the request", endpoints("a"), false, "a"},
		{"a body without GetBody still cannot be sent again", endpoints("a", "b"), true, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := perEndpoint(t, map[EndpointID]reply{
				"ok": status(500),
				"a":  fail("down"),
				"b":  status(200),
			})
			tr, _ := build(t, Config{Endpoints: tt.eps, Base: base,
				PermissionPolicy: func(*http.Request) Permission { return PermissionAllow }})
			req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", nil)
			if tt.body {
				req.Body, req.GetBody = newBody("x"), nil
			}
			resp, _ := tr.RoundTrip(req)
			closeResponse(resp)
			if got := base.take(); got != tt.want {
				t.Errorf("tried %s, want %s", got, tt.want)
			}
		})
	}
}
