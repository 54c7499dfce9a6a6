package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// startRun runs the loop in the background until the test calls the
// returned stop, which fails the test unless run then returns nil, as it
// does on SIGINT or SIGTERM.
func startRun(t *testing.T, endpoints []failnext.Endpoint, checkEvery, readEvery time.Duration, metricsAddr string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, endpoints, checkEvery, readEvery, metricsAddr) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v after its context ended, want nil", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("run did not return within %v of its context ending", testTimeout)
		}
	}
	t.Cleanup(stop)
	return stop
}

// The loop keeps reads on the fresh provider: it logs the lagging one as
// ineligible and every read as served by the fresh one; once the fresh one
// stops, it logs that provider's probe error and reads move to the other.
func TestLoopReadsFromTheFreshProviderAndMovesWhenItStops(t *testing.T) {
	lagging, fresh := startDevNode(t, 5), startDevNode(t, 20)
	// The lagging node comes first, so failnext would use it if blocklag let it.
	endpoints := []failnext.Endpoint{{ID: "primary", URL: lagging.URL}, {ID: "backup", URL: fresh.URL}}
	log := &cursor{tap: tapLog(t)}
	stop := startRun(t, endpoints, 50*time.Millisecond, 20*time.Millisecond, "")

	log.waitFor(t, "the lagging primary ineligible", "check", func(r slog.Record) bool {
		c, ok := checkOf(r)
		return ok && c.Reference == 20 &&
			c.Providers["primary"] == verdict{Height: 5, Lag: 15} &&
			c.Providers["backup"] == verdict{Eligible: true, Height: 20}
	})
	log.waitFor(t, "a read served by the backup", "read", servedBy("backup", 20))

	fresh.Stop()
	r := log.waitFor(t, "the stopped backup's probe error", "check", func(r slog.Record) bool {
		err, _ := attr(r, "err").(error)
		return err != nil
	})
	var ce *blocklag.CheckError
	if err := attr(r, "err").(error); !errors.As(err, &ce) || !ce.Published || len(ce.Errors) != 1 || ce.Errors[0].Endpoint != "backup" {
		t.Errorf("check logged err=%v, want a published CheckError with one ProbeError, for backup", err)
	}
	log.waitFor(t, "the primary eligible again", "check", func(r slog.Record) bool {
		c, ok := checkOf(r)
		return ok && c.Reference == 5 &&
			c.Providers["primary"] == verdict{Eligible: true, Height: 5} &&
			c.Providers["backup"] == verdict{Reason: blocklag.ReasonTransport}
	})
	r = log.waitFor(t, "the reference's fall explained", fellLeaderFailed, func(slog.Record) bool { return true })
	if from, to, led := attr(r, "from"), attr(r, "to"), attr(r, "led"); from != uint64(20) || to != uint64(5) || led != failnext.EndpointID("backup") {
		t.Errorf("the fall logged from=%v to=%v led=%v, want from=20 to=5 led=backup", from, to, led)
	}
	log.waitFor(t, "a read served by the primary", "read", servedBy("primary", 5))

	stop()
	log.waitFor(t, "the loop stopping", "stopped", func(slog.Record) bool { return true })
}

// A read that gets no answer from the provider it tried goes on to the next
// eligible one, although it is a POST, and the log names both.
func TestReadsFailOverWhenAProviderGivesNoAnswer(t *testing.T) {
	first, second := startDevNode(t, 7), startDevNode(t, 7)
	endpoints := []failnext.Endpoint{{ID: "primary", URL: first.URL}, {ID: "backup", URL: second.URL}}
	log := &cursor{tap: tapLog(t)}
	// One check, at start, that finds both eligible; then only reads.
	startRun(t, endpoints, time.Hour, 20*time.Millisecond, "")
	log.waitFor(t, "a read served by the primary", "read", servedBy("primary", 7))

	first.Stop()
	r := log.waitFor(t, "a read served by the backup", "read", servedBy("backup", 7))
	if got, _ := attr(r, "failed").([]failnext.EndpointID); !slices.Equal(got, []failnext.EndpointID{"primary"}) {
		t.Errorf("read logged failed=%v, want [primary]", attr(r, "failed"))
	}
}

// A failed read is logged with its cause in the program's own words and the
// endpoints that failed, never with go-ethereum's error text, which quotes
// the request URL and what the provider sent. Nothing in the log shows the
// key in the URL's path, even where the provider echoes it.
func TestReadFailuresAreLoggedWithoutTheURLOrTheProvidersText(t *testing.T) {
	const key = "k3y0f7he5ecre7"
	const forged = "\n2026/01/01 00:00:00 INFO read block=99999999 endpoint=backup"
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens at the URL
		cause   string
		failed  bool // whether the attempt got no answer or a status other than 200
	}{
		{"an HTTP error", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "slow down, "+r.URL.Path+forged)
		}, "HTTP status 429", true},
		{"a JSON-RPC error", func(w http.ResponseWriter, r *http.Request) {
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			msg, _ := json.Marshal("limit for " + r.URL.Path + forged)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32005,"message":%s}}`, req.ID, msg)
		}, "JSON-RPC error -32005", false},
		{"an answer that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>"+r.URL.Path+forged)
		}, "bad answer", false},
		{"an answer cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x`)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, "read failed", false},
		{"no answer", nil, "no answer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			if tt.handler == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			log := &cursor{tap: tapLog(t)}
			stop := startRun(t, []failnext.Endpoint{{ID: "only", URL: srv.URL + "/v3/" + key}}, time.Hour, time.Hour, "")
			r := log.waitFor(t, "the failed read", "read", func(slog.Record) bool { return true })
			stop()
			if got := attr(r, "cause"); got != tt.cause {
				t.Errorf("read logged cause=%v, want %q", got, tt.cause)
			}
			var wantFailed []failnext.EndpointID
			if tt.failed {
				wantFailed = []failnext.EndpointID{"only"}
			}
			if got, _ := attr(r, "failed").([]failnext.EndpointID); !slices.Equal(got, wantFailed) {
				t.Errorf("read logged failed=%v, want %v", got, wantFailed)
			}
			text := log.tap.text()
			if strings.Contains(text, key) {
				t.Errorf("the log shows the key:\n%s", text)
			}
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				if !strings.HasPrefix(line, "time=") {
					t.Errorf("the provider's text made a line of its own: %q", line)
				}
			}
		})
	}
}

// The cause of a read that timed out, or that found no endpoint to try.
func TestCause(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("post: %w", context.DeadlineExceeded):     "timed out",
		fmt.Errorf("post: %w", failnext.ErrNoUsableEndpoint): "no eligible endpoint",
		&failnext.FailoverError{}:                            "no answer",
	} {
		if got := cause(err); got != want {
			t.Errorf("cause(%v) = %q, want %q", err, got, want)
		}
	}
}

// With a metrics address, run serves blocklag's metrics at /metrics while
// it runs, at the URL it logs, and stops serving them when it returns:
// the gauges, and the counters that count its checks and probes.
func TestRunServesMetricsWhileItRuns(t *testing.T) {
	n := startDevNode(t, 2)
	endpoints := []failnext.Endpoint{{ID: "primary", URL: n.URL}, {ID: "backup", URL: n.URL + "/"}}
	log := &cursor{tap: tapLog(t)}
	stop := startRun(t, endpoints, time.Hour, time.Hour, "127.0.0.1:0")
	url, _ := attr(log.waitFor(t, "the metrics URL", "metrics", func(slog.Record) bool { return true }), "url").(string)
	log.waitFor(t, "the first check", "check", func(r slog.Record) bool { _, ok := checkOf(r); return ok })

	scraped, err := fetch(url)
	if err != nil {
		t.Fatalf("scrape of %q: %v", url, err)
	}
	for _, want := range []string{
		`blocklag_provider_eligible{provider="primary"} 1`,
		`blocklag_provider_height{provider="backup"} 2`,
		`blocklag_reference_height 2`,
		`blocklag_checks_total 1`,
		`blocklag_checks_published_total 1`,
		`blocklag_provider_probe_failures_total{provider="backup",reason="transport"} 0`,
	} {
		if !strings.Contains(scraped, want) {
			t.Errorf("the scrape of %q lacks %q:\n%s", url, want, scraped)
		}
	}
	stop()
	if _, err := fetch(url); err == nil {
		t.Errorf("%s still answers after run returned", url)
	}
}

// fetch returns the body of a successful GET of url.
func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return string(body), err
}

// Without both URLs the command says which variables to set, or -dev.
func TestEndpointsFromEnv(t *testing.T) {
	t.Setenv("ETH_RPC_PRIMARY_URL", "http://127.0.0.1:8545")
	t.Setenv("ETH_RPC_BACKUP_URL", "")
	if _, err := endpointsFromEnv(); err == nil || !strings.Contains(err.Error(), "ETH_RPC_BACKUP_URL") || !strings.Contains(err.Error(), "-dev") {
		t.Errorf("with no backup URL: %v, want an error naming ETH_RPC_BACKUP_URL and -dev", err)
	}
	t.Setenv("ETH_RPC_BACKUP_URL", "http://127.0.0.1:8546")
	eps, err := endpointsFromEnv()
	want := []failnext.Endpoint{{ID: "primary", URL: "http://127.0.0.1:8545"}, {ID: "backup", URL: "http://127.0.0.1:8546"}}
	if err != nil || fmt.Sprint(eps) != fmt.Sprint(want) {
		t.Errorf("endpointsFromEnv() = %v, %v; want %v", eps, err, want)
	}
}

// An invalid URL stops run before it starts, with blocklag's error, which
// names the endpoint and never the URL's key.
func TestRunRejectsAnInvalidURL(t *testing.T) {
	endpoints := []failnext.Endpoint{{ID: "primary", URL: "ftp://user:k3y@a.example/v3/k3y"}, {ID: "backup", URL: "http://b.example"}}
	err := run(context.Background(), endpoints, time.Hour, time.Hour, "")
	if err == nil || !strings.Contains(err.Error(), `"primary"`) || strings.Contains(err.Error(), "k3y") {
		t.Errorf("run = %v, want an error naming the primary without its key", err)
	}
}
