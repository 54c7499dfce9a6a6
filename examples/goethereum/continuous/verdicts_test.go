package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// scripted is a Base that answers each provider's probe as the test's
// current step says: with a height such as "0x10", with HTTP status 429,
// or by refusing the connection.
type scripted struct {
	mu      sync.Mutex
	answers map[string]string // by the URL's host
}

func (s *scripted) set(answers map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = answers
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	answer := s.answers[r.URL.Host]
	s.mu.Unlock()
	switch answer {
	case "refuse":
		refused := os.NewSyscallError("connect", syscall.ECONNREFUSED)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: refused}
	case "429":
		rec := httptest.NewRecorder()
		rec.WriteHeader(http.StatusTooManyRequests)
		return rec.Result(), nil
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	io.WriteString(rec, `{"jsonrpc":"2.0","id":1,"result":"`+answer+`"}`)
	return rec.Result(), nil
}

// step is one Check: what each provider answers, and the lines the
// checker must log, as summary writes them.
type step struct {
	answers map[string]string
	want    []string
}

// repeat is n steps alike, each logging nothing.
func repeat(n int, answers map[string]string) []step {
	steps := make([]step, n)
	for i := range steps {
		steps[i] = step{answers: answers}
	}
	return steps
}

// summary is a record in brief: its message, the provider it names and
// the reason it gives, if any.
func summary(r slog.Record) string {
	s := r.Message
	if id := attr(r, "provider"); id != nil {
		s += fmt.Sprintf(" %v", id)
	}
	if reason := attr(r, "reason"); reason != nil {
		s += fmt.Sprintf(" (%v)", reason)
	}
	return s
}

// The checker logs each provider's verdict once, then only when it
// changes, and a failure once per provider and reason until that changes:
// the change and the failure make one line.
func TestCheckerLogsEachChangeOnce(t *testing.T) {
	both := func(a, b string) map[string]string { return map[string]string{"a": a, "b": b} }
	tests := []struct {
		name  string
		hosts []string
		steps [][]step
	}{
		{"a provider refusing connections for 12 checks is one line, and one when it recovers",
			[]string{"a", "b"}, [][]step{
				{{both("0x10", "0x10"), []string{"provider eligible a", "provider eligible b"}}},
				{{both("0x11", "refuse"), []string{"provider ineligible: probe failed b (transport)"}}},
				repeat(11, both("0x12", "refuse")),
				{{both("0x12", "0x12"), []string{"provider eligible b"}}},
				repeat(3, both("0x13", "0x13")),
			}},
		{"a new reason is a new line",
			[]string{"a", "b"}, [][]step{
				{{both("0x10", "429"), []string{
					"provider eligible a", "provider ineligible: probe failed b (rate_limited)"}}},
				repeat(2, both("0x10", "429")),
				{{both("0x10", "refuse"), []string{"provider ineligible: probe failed b (transport)"}}},
				{{both("0x10", "429"), []string{"provider ineligible: probe failed b (rate_limited)"}}},
			}},
		{"a lag that grows is one line, and catching up another",
			[]string{"a", "b"}, [][]step{
				{{both("0x10", "0x20"), []string{"provider ineligible: behind a", "provider eligible b"}}},
				{{both("0x11", "0x30"), nil}},
				{{both("0x30", "0x30"), []string{"provider eligible a"}}},
			}},
		// a is 6 blocks behind, then 11, 50, 79 and 100.
		{"a lag that doubles is a new line each time",
			[]string{"a", "b"}, [][]step{
				{{both("0x10", "0x16"), []string{"provider ineligible: behind a", "provider eligible b"}}},
				{{both("0x10", "0x1b"), nil}},
				{{both("0x10", "0x42"), []string{"provider ineligible: behind a"}}},
				{{both("0x10", "0x5f"), nil}},
				{{both("0x10", "0x74"), []string{"provider ineligible: behind a"}}},
			}},
		{"no provider answering keeps the verdicts, said once per provider",
			[]string{"a", "b"}, [][]step{
				{{both("refuse", "429"), []string{
					"probe failed, verdict kept a (transport)",
					"probe failed, verdict kept b (rate_limited)"}}},
				repeat(3, both("refuse", "429")),
				{{both("0x10", "429"), []string{
					"provider eligible a", "provider ineligible: probe failed b (rate_limited)"}}},
			}},
		{"the leader stopping makes the reference fall, said once",
			[]string{"a", "b"}, [][]step{
				{{both("0x10", "0x20"), []string{"provider ineligible: behind a", "provider eligible b"}}},
				{{both("0x10", "refuse"), []string{
					"provider eligible a", "provider ineligible: probe failed b (transport)",
					fellLeaderFailed + " (transport)"}}},
				repeat(2, both("0x10", "refuse")),
			}},
		{"of three, one far ahead is ineligible until the others catch up",
			[]string{"a", "b", "c"}, [][]step{
				{{map[string]string{"a": "0x3f8", "b": "0x10", "c": "0x10"}, []string{
					"provider ineligible: too far ahead a", "provider eligible b", "provider eligible c"}}},
				{{map[string]string{"a": "0x3f9", "b": "0x11", "c": "0x11"}, nil}},
				{{map[string]string{"a": "0x3f9", "b": "0x3f0", "c": "0x3f0"},
					[]string{"provider eligible a"}}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scripted{}
			var endpoints []failnext.Endpoint
			for _, host := range tt.hosts {
				ep := failnext.Endpoint{ID: failnext.EndpointID(host), URL: "http://" + host}
				endpoints = append(endpoints, ep)
			}
			cfg := config(endpoints)
			cfg.Base = base
			monitor, err := blocklag.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := &checker{monitor: monitor, said: map[failnext.EndpointID]line{}}
			tap := tapLog(t)
			n := 0
			for _, steps := range tt.steps {
				for _, s := range steps {
					n++
					before := len(tap.records)
					base.set(s.answers)
					c.check(context.Background())
					var got []string
					for _, r := range tap.records[before:] {
						got = append(got, summary(r))
					}
					if fmt.Sprint(got) != fmt.Sprint(s.want) {
						t.Errorf("check %d, answers %v: logged %q, want %q", n, s.answers, got, s.want)
					}
				}
			}
		})
	}
}

// A verdict's line gives the rule it was judged by as the Status says it,
// not as the program configured it.
func TestVerdictLinesGiveTheRulesOfTheStatus(t *testing.T) {
	st := blocklag.Status{Reference: 100, MaxLag: 7, MaxAhead: 12}
	tests := []struct {
		name string
		e    blocklag.EndpointStatus
		key  string
		want any
	}{
		{"a provider behind is logged with the Status's MaxLag",
			blocklag.EndpointStatus{ID: "a", Height: 90, Lag: 10}, "max_lag", uint64(7)},
		{"a provider too far ahead is logged with the Status's MaxAhead",
			blocklag.EndpointStatus{ID: "a", Height: 113, Ahead: 13}, "max_ahead", uint64(12)},
		{"an eligible provider is logged with the Status's MaxLag",
			blocklag.EndpointStatus{ID: "a", Eligible: true, Height: 100}, "max_lag", uint64(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := verdictOf(st, tt.e)
			got := fmt.Sprint(l.attrs)
			if want := fmt.Sprintf("%s %v", tt.key, tt.want); !strings.Contains(got, want) {
				t.Errorf("%s logged %s, want it to hold %s", l.msg, got, want)
			}
		})
	}
}

func TestReferenceFellSaysWhy(t *testing.T) {
	published := func(reference uint64, eps ...blocklag.EndpointStatus) blocklag.Status {
		return blocklag.Status{
			Checked:   time.Unix(1700000000, 0),
			Reference: reference,
			MaxLag:    maxLag,
			Endpoints: eps,
		}
	}
	at := func(id failnext.EndpointID, height, reference uint64) blocklag.EndpointStatus {
		return blocklag.EndpointStatus{
			ID:       id,
			Eligible: reference-height <= maxLag,
			Height:   height,
			Lag:      reference - height,
		}
	}
	failed := func(id failnext.EndpointID) blocklag.EndpointStatus {
		err := &blocklag.ProbeError{Endpoint: id, Err: errors.New("refused")}
		return blocklag.EndpointStatus{ID: id, Err: err}
	}
	before := published(20, at("primary", 5, 20), at("backup", 20, 20))
	tests := []struct {
		name      string
		before    blocklag.Status
		now       blocklag.Status
		wantMsg   string
		wantAttrs string
	}{
		{"a reference that rose is not a fall", before,
			published(21, at("primary", 6, 21), at("backup", 21, 21)), "", "[]"},
		{"a reference that stayed is not a fall", before,
			published(20, at("primary", 6, 20), at("backup", 20, 20)), "", "[]"},
		{"nothing falls from the fail-open state", blocklag.Status{},
			published(5, at("primary", 5, 5), failed("backup")), "", "[]"},
		{"the leader that stopped answering is named with its reason", before,
			published(6, at("primary", 6, 6), failed("backup")),
			fellLeaderFailed, "[from 20 to 6 led backup reason transport]"},
		{"a leader that went back is named with its height", before,
			published(8, at("primary", 6, 8), at("backup", 8, 8)),
			fellLeaderLower, "[from 20 to 8 led backup height 8]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, attrs := referenceFell(tt.before, tt.now)
			if msg != tt.wantMsg || fmt.Sprint(attrs) != tt.wantAttrs {
				t.Errorf("referenceFell = %q, %v; want %q, %s", msg, attrs, tt.wantMsg, tt.wantAttrs)
			}
		})
	}
}

// Every line the loop logs fits in 200 bytes as the standard logger writes
// it, date and time included, at its longest: names of the most bytes
// allowed, heights of 20 digits, errors of 300 bytes, and a read that
// failed after trying twelve providers.
func TestEveryLineFits200Bytes(t *testing.T) {
	const id = failnext.EndpointID("abcdefghijklmnop")
	if !validName(string(id)) {
		t.Fatalf("%q is not a valid name: the test needs the longest", id)
	}
	const top = math.MaxUint64
	long := &blocklag.StatusError{
		StatusCode: http.StatusTooManyRequests,
		RPC:        &blocklag.RPCError{Code: -32005, Message: strings.Repeat("m", 300)},
	}
	failedProbe := &blocklag.ProbeError{Endpoint: id, Err: long}
	st := blocklag.Status{Checked: time.Now(), Reference: top, MaxLag: top, MaxAhead: top}
	lines := map[string]line{
		"eligible, ahead": verdictOf(st,
			blocklag.EndpointStatus{ID: id, Eligible: true, Height: top, Lag: top, Ahead: top}),
		"too far ahead": verdictOf(st, blocklag.EndpointStatus{ID: id, Height: top, Ahead: top}),
		"behind":        verdictOf(st, blocklag.EndpointStatus{ID: id, Height: top, Lag: top}),
		"probe failed":  verdictOf(st, blocklag.EndpointStatus{ID: id, Err: failedProbe}),
		"verdict kept":  unanswered(failedProbe, true),
	}

	var out bytes.Buffer
	log.SetOutput(&out)
	defer log.SetOutput(os.Stderr)
	c := &checker{said: map[failnext.EndpointID]line{}}
	for _, l := range lines {
		c.log(l)
	}
	leader := blocklag.EndpointStatus{ID: id, Height: top, Eligible: true}
	msg, attrs := referenceFell(blocklag.Status{Reference: top, Endpoints: []blocklag.EndpointStatus{leader}},
		blocklag.Status{Reference: top - 1, Endpoints: []blocklag.EndpointStatus{{ID: id, Err: failedProbe}}})
	slog.Warn(msg, attrs...)

	// A read sent to twelve providers, each answering 503 with a long body.
	srv := startProvider(t, "0x1", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, strings.Repeat("no key ", 100))
	})
	var endpoints []failnext.Endpoint
	for i := range 12 {
		name := fmt.Sprintf("%s%02d", id[:len(id)-2], i)
		endpoints = append(endpoints, failnext.Endpoint{ID: failnext.EndpointID(name), URL: srv.URL})
	}
	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	client, err := dial(context.Background(), srv.URL, transport)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	(&reader{client: client}).read(context.Background())

	text := strings.TrimSuffix(out.String(), "\n")
	if n := strings.Count(text, "\n") + 1; n != len(lines)+2 {
		t.Fatalf("logged %d lines, want %d:\n%s", n, len(lines)+2, text)
	}
	if !strings.Contains(text, "attempts=12") {
		t.Errorf("the failed read's line does not say it made 12 attempts:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if len(l) > 200 {
			t.Errorf("a line of %d bytes: %s", len(l), l)
		}
	}
}
