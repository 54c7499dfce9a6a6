package failnext

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, handler http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func unavailable(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusServiceUnavailable)
}

// echo answers with the path it was asked for and the request body.
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	io.WriteString(w, r.URL.Path+" "+string(b))
}

func TestOverHTTPAPostFailsOverWithItsBody(t *testing.T) {
	down, up := newServer(t, unavailable), newServer(t, echo)
	tr, _ := build(t, Config{Endpoints: []Endpoint{
		{ID: "down", URL: down.URL + "/x"},
		{ID: "up", URL: up.URL + "/y"},
	}})
	defer tr.CloseIdleConnections()
	req := newRequest(t, WithFailoverAllowed(t.Context()), "POST", strings.NewReader("payload"))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "/y payload" || down.hits.Load() != 1 || up.hits.Load() != 1 {
		t.Errorf("body %q, hits %d/%d; want /y payload after one 503", b, down.hits.Load(), up.hits.Load())
	}
}

func TestOverHTTPTheDefaultCooldownSkipsAFailingServer(t *testing.T) {
	down, up := newServer(t, unavailable), newServer(t, echo)
	rec := &recorder{}
	tr, clock := build(t, Config{
		Endpoints: []Endpoint{{ID: "down", URL: down.URL}, {ID: "up", URL: up.URL}},
		OnEvent:   rec.onEvent,
	})
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	fetch := func() {
		t.Helper()
		resp, err := client.Get("http://caller.example/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for range 4 {
		fetch()
	}
	if n := down.hits.Load(); n != 3 {
		t.Errorf("the failing server got %d requests, want 3 before its cooldown", n)
	}
	events := rec.take()
	checkEvents(t, events[len(events)-3:], []Event{
		skipEvent("down"),
		attemptEvent("up", 1, 200, nil),
		resultEvent("up", 200),
	})
	clock.advance(30 * time.Second)
	fetch()
	if n := down.hits.Load(); n != 4 {
		t.Errorf("the failing server got %d requests, want a 4th once 30 s have passed", n)
	}
}

func TestOverHTTPAPreferredEndpointServesAndEventsSeeTheCallersContext(t *testing.T) {
	type key struct{}
	first, second := newServer(t, echo), newServer(t, echo)
	var seen []any
	tr, _ := build(t, Config{
		Endpoints: []Endpoint{{ID: "first", URL: first.URL + "/1"}, {ID: "second", URL: second.URL + "/2"}},
		OnEvent:   func(ctx context.Context, ev Event) { seen = append(seen, ctx.Value(key{})) },
	})
	defer tr.CloseIdleConnections()
	ctx := WithPreferredEndpoint(context.WithValue(t.Context(), key{}, "caller"), "second")
	resp, err := (&http.Client{Transport: tr}).Do(newRequest(t, ctx, "GET", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "/2 " || first.hits.Load() != 0 {
		t.Errorf("body %q, first server hit %d times; want the second server alone", b, first.hits.Load())
	}
	if len(seen) != 2 || seen[0] != "caller" || seen[1] != "caller" {
		t.Errorf("events saw context values %v, want the caller's in both", seen)
	}
}

func TestOverHTTPAnEmptyMethodDoesNotFailOver(t *testing.T) {
	down, up := newServer(t, unavailable), newServer(t, echo)
	tr, _ := build(t, Config{Endpoints: []Endpoint{{ID: "down", URL: down.URL}, {ID: "up", URL: up.URL}}})
	defer tr.CloseIdleConnections()
	req := newRequest(t, t.Context(), "GET", nil)
	req.Method = ""
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || up.hits.Load() != 0 {
		t.Errorf("status %d, second server hit %d times; want the 503 and no failover",
			resp.StatusCode, up.hits.Load())
	}
}

func TestOverHTTPANilBaseUsesTheDefaultTransport(t *testing.T) {
	up := newServer(t, echo)
	tr, _ := build(t, Config{Endpoints: []Endpoint{{ID: "up", URL: up.URL + "/p"}}})
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://unused.example/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "/p " {
		t.Errorf("body = %q, want /p from the endpoint", b)
	}
}
