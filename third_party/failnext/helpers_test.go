package failnext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// roundTripFunc turns a function into an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reply is one canned outcome of an attempt.
type reply func(*http.Request) (*http.Response, error)

// trackedBody is a body that records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newBody(s string) *trackedBody { return &trackedBody{Reader: strings.NewReader(s)} }

// answer returns a response with the given status and a tracked, empty body.
func answer(code int) (*http.Response, *trackedBody) {
	b := newBody("")
	return &http.Response{StatusCode: code, Body: b, Header: http.Header{}}, b
}

// status replies with a fresh response of the given status.
func status(code int) reply {
	return func(*http.Request) (*http.Response, error) { r, _ := answer(code); return r, nil }
}

// respond replies with resp itself.
func respond(resp *http.Response) reply {
	return func(*http.Request) (*http.Response, error) { return resp, nil }
}

// fail replies with a new transport error.
func fail(msg string) reply {
	return func(*http.Request) (*http.Response, error) { return nil, errors.New(msg) }
}

// failWith replies with err itself.
func failWith(err error) reply {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// endpoints returns one endpoint per ID, with the URL http://ID.example/rpc.
func endpoints(ids ...EndpointID) []Endpoint {
	out := make([]Endpoint, len(ids))
	for i, id := range ids {
		out[i] = Endpoint{ID: id, URL: "http://" + string(id) + ".example/rpc"}
	}
	return out
}

// scripted is a Base that picks each attempt's reply with choose, records
// which endpoint each attempt went to, and reads and closes the request
// body as a RoundTripper must.
type scripted struct {
	t      *testing.T
	choose func(n int, id EndpointID) reply // n counts this Base's attempts from 0

	mu     sync.Mutex
	tried  []EndpointID // guarded by mu
	bodies []string     // guarded by mu; the body each attempt carried
}

// inOrder is a Base that answers its attempts with steps, one each, in order.
func inOrder(t *testing.T, steps ...reply) *scripted {
	return &scripted{t: t, choose: func(n int, _ EndpointID) reply {
		if n < len(steps) {
			return steps[n]
		}
		return nil
	}}
}

// perEndpoint is a Base that answers every attempt on an endpoint with the
// same reply.
func perEndpoint(t *testing.T, replies map[EndpointID]reply) *scripted {
	return &scripted{t: t, choose: func(_ int, id EndpointID) reply { return replies[id] }}
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	id := EndpointID(strings.TrimSuffix(r.URL.Hostname(), ".example"))
	var body string
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		body = string(b)
	}
	s.mu.Lock()
	n := len(s.tried)
	s.tried = append(s.tried, id)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	rep := s.choose(n, id)
	if rep == nil {
		s.t.Errorf("unexpected attempt %d, on %q", n+1, id)
		return nil, errors.New("unexpected attempt")
	}
	return rep(r)
}

// sentBodies returns the body of each attempt since the last take.
func (s *scripted) sentBodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// take returns the endpoints tried since the last take, joined by commas.
func (s *scripted) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, len(s.tried))
	for i, id := range s.tried {
		ids[i] = string(id)
	}
	s.tried, s.bodies = nil, nil
	return strings.Join(ids, ",")
}

// recorder collects events. When hook is set it is called after each event
// is recorded.
type recorder struct {
	hook func(context.Context, Event)

	mu     sync.Mutex
	events []Event // guarded by mu
}

func (r *recorder) onEvent(ctx context.Context, ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	if r.hook != nil {
		r.hook(ctx, ev)
	}
}

// count returns how many events were recorded since the last take.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// take returns the events recorded since the last take.
func (r *recorder) take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// errText matches, in an expected event, any error with this message.
type errText string

func (e errText) Error() string { return string(e) }

func attemptEvent(id EndpointID, n, code int, err error) Event {
	return Event{Kind: EventAttempt, Endpoint: id, Attempt: n, StatusCode: code, Err: err}
}

func skipEvent(id EndpointID) Event { return Event{Kind: EventCooldownSkip, Endpoint: id} }

func replayEvent(id EndpointID, err error) Event {
	return Event{Kind: EventReplayError, Endpoint: id, Err: err}
}

func resultEvent(id EndpointID, code int) Event {
	return Event{Kind: EventResult, Endpoint: id, StatusCode: code}
}

func failedResultEvent(err error) Event { return Event{Kind: EventResult, Err: err} }

// sameEvent compares every field. An expected Err matches the identical
// error, or any error with the same message when it is an errText.
func sameEvent(got, want Event) bool {
	if got.Kind != want.Kind || got.Endpoint != want.Endpoint ||
		got.Attempt != want.Attempt || got.StatusCode != want.StatusCode {
		return false
	}
	if text, ok := want.Err.(errText); ok {
		return got.Err != nil && got.Err.Error() == string(text)
	}
	return got.Err == want.Err
}

func formatEvents(evs []Event) string {
	names := map[EventKind]string{
		EventAttempt:      "Attempt",
		EventCooldownSkip: "Skip",
		EventReplayError:  "ReplayError",
		EventResult:       "Result",
	}
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n\t%s(endpoint=%q attempt=%d status=%d err=%v)",
			names[ev.Kind], ev.Endpoint, ev.Attempt, ev.StatusCode, ev.Err)
	}
	return b.String()
}

// checkEvents fails the test unless got matches want, event by event.
func checkEvents(t *testing.T, got, want []Event) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = sameEvent(got[i], want[i])
	}
	if !ok {
		t.Errorf("events:%s\nwant:%s", formatEvents(got), formatEvents(want))
	}
}

// fakeClock is a cooldown clock that moves only when a test moves it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// build returns a Transport for cfg whose cooldown clock is a fakeClock,
// and that clock.
func build(t *testing.T, cfg Config) (*Transport, *fakeClock) {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clock := &fakeClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	tr.now = clock.Now
	return tr, clock
}

// newRequest makes a request to a URL that no endpoint uses.
func newRequest(t *testing.T, ctx context.Context, method string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "http://caller.example/path?q=1", body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// get sends a GET with ctx through tr and closes any response.
func get(t *testing.T, tr *Transport, ctx context.Context) error {
	t.Helper()
	resp, err := tr.RoundTrip(newRequest(t, ctx, http.MethodGet, nil))
	closeResponse(resp)
	return err
}

// goroutineID returns the ID of the calling goroutine, from its stack trace.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}
