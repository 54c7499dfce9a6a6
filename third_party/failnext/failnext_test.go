package failnext

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// roundTripFunc lets a test stand in for the base transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody is a request or response body that records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newBody(s string) *trackedBody { return &trackedBody{Reader: strings.NewReader(s)} }

// answer returns a response with the given status and a tracked body.
func answer(status int) (*http.Response, *trackedBody) {
	b := newBody("")
	return &http.Response{StatusCode: status, Body: b, Header: http.Header{}}, b
}

// scripted is a base transport that answers attempt n with steps[n] and
// records the host each attempt was sent to.
type scripted struct {
	steps []func() (*http.Response, error)
	hosts []string
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	n := len(s.hosts)
	s.hosts = append(s.hosts, r.URL.Host)
	if r.Body != nil {
		r.Body.Close()
	}
	return s.steps[n]()
}

func status(code int) func() (*http.Response, error) {
	return func() (*http.Response, error) { r, _ := answer(code); return r, nil }
}

func fail(msg string) func() (*http.Response, error) {
	return func() (*http.Response, error) { return nil, errors.New(msg) }
}

var threeEndpoints = []Endpoint{
	{ID: "a", URL: "http://a.example/rpc"},
	{ID: "b", URL: "http://b.example/rpc"},
	{ID: "c", URL: "http://c.example/rpc"},
}

func mustNew(t *testing.T, cfg Config) *Transport {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tr
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name      string
		endpoints []Endpoint
		want      string
	}{
		{"no endpoints", nil, "no endpoints"},
		{"an empty ID names its index", []Endpoint{{ID: "a", URL: "http://x"}, {URL: "http://y"}}, "endpoint 1"},
		{"a repeated ID", []Endpoint{{ID: "a", URL: "http://x"}, {ID: "a", URL: "http://y"}}, "duplicate"},
		{"a URL that does not parse", []Endpoint{{ID: "a", URL: "http://%zz"}}, "does not parse"},
		{"a relative URL", []Endpoint{{ID: "a", URL: "/rpc"}}, "not absolute"},
		{"a ws URL", []Endpoint{{ID: "a", URL: "ws://x/rpc"}}, "scheme"},
		{"a URL without host", []Endpoint{{ID: "a", URL: "http:///rpc"}}, "no host"},
		{"a URL with a fragment", []Endpoint{{ID: "a", URL: "http://x/rpc#top"}}, "fragment"},
		{"a URL with an empty fragment", []Endpoint{{ID: "a", URL: "http://x/rpc#"}}, "fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(Config{Endpoints: tt.endpoints})
			if err == nil || tr != nil {
				t.Fatalf("New = %v, %v; want nil and an error", tr, err)
			}
			if !strings.HasPrefix(err.Error(), "failnext: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not start with failnext: and mention %q", err, tt.want)
			}
		})
	}
}

func TestNilBaseUsesDefaultTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	tr := mustNew(t, Config{Endpoints: []Endpoint{{ID: "a", URL: srv.URL}}})
	resp, err := (&http.Client{Transport: tr}).Get("http://unused.example/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "hello" {
		t.Errorf("body = %q, want hello", b)
	}
}

func TestRoundTripRejectsNilRequest(t *testing.T) {
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: &scripted{}})
	if _, err := tr.RoundTrip(nil); err == nil {
		t.Fatal("RoundTrip(nil) succeeded")
	}
}

func TestRoundTripWithDoneContextSendsNothing(t *testing.T) {
	base := &scripted{}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	body := newBody("x")
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://a.example/", body)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(base.hosts) != 0 {
		t.Errorf("sent %d attempts, want none", len(base.hosts))
	}
	if !body.closed.Load() {
		t.Error("request body was not closed")
	}
}

func TestFailoverPermission(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		ctx      func(context.Context) context.Context
		attempts int
	}{
		{"GET fails over by default", "GET", nil, 2},
		{"HEAD fails over by default", "HEAD", nil, 2},
		{"POST stays by default", "POST", nil, 1},
		{"POST fails over when allowed", "POST", WithFailoverAllowed, 2},
		{"GET stays when denied", "GET", WithFailoverDenied, 1},
		{"the innermost decision wins", "POST", func(c context.Context) context.Context {
			return WithFailoverDenied(WithFailoverAllowed(c))
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scripted{steps: []func() (*http.Response, error){fail("down"), status(200)}}
			tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(ctx)
			}
			req, _ := http.NewRequestWithContext(ctx, tt.method, "http://a.example/", nil)
			resp, _ := tr.RoundTrip(req)
			closeResponse(resp)
			if len(base.hosts) != tt.attempts {
				t.Errorf("made %d attempts, want %d", len(base.hosts), tt.attempts)
			}
		})
	}
}

func TestEligibleIsAskedOncePerEndpointBeforeTheFirstAttempt(t *testing.T) {
	var asked []EndpointID
	base := &scripted{}
	base.steps = []func() (*http.Response, error){func() (*http.Response, error) {
		if len(asked) != 3 {
			t.Errorf("first attempt made after %d Eligible calls, want 3", len(asked))
		}
		return nil, errors.New("down")
	}, status(200)}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base, Eligible: func(id EndpointID) bool {
		asked = append(asked, id)
		return id != "b"
	}})
	req, _ := http.NewRequest("GET", "http://a.example/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := strings.Join([]string{string(asked[0]), string(asked[1]), string(asked[2])}, ","); len(asked) != 3 || got != "a,b,c" {
		t.Errorf("Eligible asked for %v, want a, b, c once each", asked)
	}
	if got := strings.Join(base.hosts, ","); got != "a.example,c.example" {
		t.Errorf("attempts went to %s, want a.example,c.example (b skipped)", got)
	}
}

func TestNoEligibleEndpoint(t *testing.T) {
	base := &scripted{}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base, Eligible: func(EndpointID) bool { return false }})
	body := newBody("x")
	req, _ := http.NewRequest("POST", "http://a.example/", body)
	if _, err := tr.RoundTrip(req); !errors.Is(err, ErrNoUsableEndpoint) {
		t.Fatalf("err = %v, want ErrNoUsableEndpoint", err)
	}
	if len(base.hosts) != 0 {
		t.Errorf("sent %d attempts, want none", len(base.hosts))
	}
	if !body.closed.Load() {
		t.Error("request body was not closed")
	}
	if ErrNoUsableEndpoint.Error() != "failnext: no usable endpoint" {
		t.Errorf("message = %q", ErrNoUsableEndpoint)
	}
}

func TestDestinationRewrite(t *testing.T) {
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
			tr := mustNew(t, Config{Base: base, Endpoints: []Endpoint{{ID: "a", URL: "https://dest.example:9000/v3/key?x=1"}}})
			req, _ := http.NewRequest("GET", "http://orig.example:8080/other/path?y=2", nil)
			req.Host = tt.host
			req.RequestURI = "/other/path?y=2"
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got.URL.String() != "https://dest.example:9000/v3/key?x=1" {
				t.Errorf("URL = %s, want the endpoint's URL as is", got.URL)
			}
			if got.Host != tt.wantHost {
				t.Errorf("Host = %q, want %q", got.Host, tt.wantHost)
			}
			if got.RequestURI != "" {
				t.Errorf("RequestURI = %q, want it cleared", got.RequestURI)
			}
			if req.URL.Host != "orig.example:8080" {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestWhichAnswersFailOver(t *testing.T) {
	tests := []struct {
		name     string
		first    func() (*http.Response, error)
		attempts int
	}{
		{"a transport error", fail("refused"), 2},
		{"502", status(502), 2},
		{"503", status(503), 2},
		{"504", status(504), 2},
		{"500", status(500), 1},
		{"429", status(429), 1},
		{"404", status(404), 1},
		{"200", status(200), 1},
		{"a nil response without error", func() (*http.Response, error) { return nil, nil }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scripted{steps: []func() (*http.Response, error){tt.first, status(200)}}
			tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
			req, _ := http.NewRequest("GET", "http://a.example/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(base.hosts) != tt.attempts {
				t.Errorf("made %d attempts, want %d", len(base.hosts), tt.attempts)
			}
		})
	}
}

func TestResponseWithErrorIsClosedAndIgnored(t *testing.T) {
	stray, strayBody := answer(200)
	base := &scripted{steps: []func() (*http.Response, error){
		func() (*http.Response, error) { return stray, errors.New("broken") },
		status(200),
	}}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
	req, _ := http.NewRequest("GET", "http://a.example/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp == stray || !strayBody.closed.Load() || len(base.hosts) != 2 {
		t.Errorf("a response that came with an error was not closed and skipped")
	}
}

func TestKeptTriggerResponse(t *testing.T) {
	t.Run("a 503 is returned when the next attempt fails", func(t *testing.T) {
		first, firstBody := answer(503)
		base := &scripted{steps: []func() (*http.Response, error){
			func() (*http.Response, error) { return first, nil },
			fail("refused"), fail("refused"),
		}}
		tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
		req, _ := http.NewRequest("GET", "http://a.example/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp != first {
			t.Fatalf("got %v, %v; want the kept 503", resp, err)
		}
		if firstBody.closed.Load() {
			t.Error("the returned response was closed")
		}
	})
	t.Run("a newer trigger response replaces the kept one", func(t *testing.T) {
		first, firstBody := answer(503)
		second, _ := answer(502)
		base := &scripted{steps: []func() (*http.Response, error){
			func() (*http.Response, error) { return first, nil },
			func() (*http.Response, error) { return second, nil },
			fail("refused"),
		}}
		tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
		req, _ := http.NewRequest("GET", "http://a.example/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp != second {
			t.Fatalf("got %v, %v; want the 502", resp, err)
		}
		if !firstBody.closed.Load() {
			t.Error("the replaced 503 was not closed")
		}
	})
	t.Run("a final answer closes the kept one", func(t *testing.T) {
		first, firstBody := answer(504)
		base := &scripted{steps: []func() (*http.Response, error){
			func() (*http.Response, error) { return first, nil }, status(200),
		}}
		tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
		req, _ := http.NewRequest("GET", "http://a.example/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("got %v, %v; want the 200", resp, err)
		}
		if !firstBody.closed.Load() {
			t.Error("the kept 504 was not closed")
		}
	})
}

func TestFailoverError(t *testing.T) {
	last := errors.New("third down")
	base := &scripted{steps: []func() (*http.Response, error){
		fail("first down"), fail("second down"),
		func() (*http.Response, error) { return nil, last },
	}}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
	req, _ := http.NewRequest("GET", "http://a.example/", nil)
	_, err := tr.RoundTrip(req)
	var fe *FailoverError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FailoverError", err)
	}
	if len(fe.Attempts) != 3 || fe.Attempts[0].Endpoint != "a" || fe.Attempts[1].Endpoint != "b" ||
		fe.Attempts[2].Endpoint != "c" || fe.Attempts[2].Err != last {
		t.Errorf("Attempts = %+v, want a, b, c in order", fe.Attempts)
	}
	if !errors.Is(err, last) {
		t.Error("Unwrap does not give the last cause")
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name     string
		body     io.ReadCloser
		getBody  func() (io.ReadCloser, error)
		attempts int
	}{
		{"no body is replayed", nil, nil, 2},
		{"NoBody is replayed", http.NoBody, nil, 2},
		{"a body with GetBody is replayed", newBody("x"), func() (io.ReadCloser, error) { return newBody("x"), nil }, 2},
		{"a body without GetBody ends the request", newBody("x"), nil, 1},
		{"a failing GetBody ends the request", newBody("x"), func() (io.ReadCloser, error) { return nil, errors.New("gone") }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var attempts int
			var bodies []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				attempts++
				if r.Body != nil {
					b, _ := io.ReadAll(r.Body)
					r.Body.Close()
					bodies = append(bodies, string(b))
				}
				if r.URL.Host == "a.example" {
					return nil, errors.New("down")
				}
				resp, _ := answer(200)
				return resp, nil
			})
			tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
			req, _ := http.NewRequestWithContext(WithFailoverAllowed(context.Background()), "POST", "http://a.example/", nil)
			req.Body, req.GetBody = tt.body, tt.getBody
			resp, err := tr.RoundTrip(req)
			closeResponse(resp)
			if attempts != tt.attempts {
				t.Fatalf("made %d attempts, want %d", attempts, tt.attempts)
			}
			if tt.attempts == 1 {
				var fe *FailoverError
				if !errors.As(err, &fe) || len(fe.Attempts) != 1 {
					t.Errorf("err = %v, want the first attempt's failure", err)
				}
			}
			for _, b := range bodies {
				if tt.body != nil && tt.body != http.NoBody && b != "x" {
					t.Errorf("an attempt got body %q, want x", b)
				}
			}
		})
	}
}

func TestContextDoneAfterAnAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	kept, keptBody := answer(503)
	base := &scripted{steps: []func() (*http.Response, error){
		func() (*http.Response, error) { return kept, nil },
		func() (*http.Response, error) { cancel(); return nil, errors.New("down") },
		status(200),
	}}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://a.example/", nil)
	resp, err := tr.RoundTrip(req)
	if resp != nil || err != context.Canceled {
		t.Fatalf("got %v, %v; want the bare context error", resp, err)
	}
	if !keptBody.closed.Load() {
		t.Error("the kept response was not closed")
	}
	if len(base.hosts) != 2 {
		t.Errorf("made %d attempts, want 2", len(base.hosts))
	}
}

func TestOverHTTP(t *testing.T) {
	var hits [2]atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[0].Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[1].Add(1)
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.URL.Path+" "+string(b))
	}))
	defer up.Close()
	tr := mustNew(t, Config{Endpoints: []Endpoint{{ID: "down", URL: down.URL + "/x"}, {ID: "up", URL: up.URL + "/y"}}})
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(WithFailoverAllowed(context.Background()), "POST", "http://ignored.example/z", strings.NewReader("payload"))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "/y payload" || hits[0].Load() != 1 || hits[1].Load() != 1 {
		t.Errorf("body %q, hits %d/%d; want /y payload after one 503", b, hits[0].Load(), hits[1].Load())
	}
}

type idleCloser struct {
	roundTripFunc
	closed bool
}

func (c *idleCloser) CloseIdleConnections() { c.closed = true }

func TestCloseIdleConnections(t *testing.T) {
	var nilTransport *Transport
	nilTransport.CloseIdleConnections() // must not panic

	base := &idleCloser{}
	tr := mustNew(t, Config{Endpoints: threeEndpoints, Base: base})
	tr.CloseIdleConnections()
	if !base.closed {
		t.Error("CloseIdleConnections was not forwarded to Base")
	}
	mustNew(t, Config{Endpoints: threeEndpoints, Base: roundTripFunc(nil)}).CloseIdleConnections()
}
