package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// The loop keeps reads on the fresh provider: it logs the lagging one as
// ineligible, with its lag and MaxLag, and every read as served by the
// fresh one; once the fresh one stops, it logs that provider's probe
// error, the fall of the reference, and reads move to the other.
func TestLoopReadsFromTheFreshProviderAndMovesWhenItStops(t *testing.T) {
	lagging := startDevNode(t, 5)
	fresh := startDevNode(t, 20)
	// The lagging node comes first, so failnext would use it if blocklag let it.
	endpoints := []failnext.Endpoint{{ID: "primary", URL: lagging.URL}, {ID: "backup", URL: fresh.URL}}
	log := &cursor{tap: tapLog(t)}
	stop := startRun(t, endpoints, 50*time.Millisecond, 20*time.Millisecond, "")

	r := log.waitFor(t, "the lagging primary ineligible", "provider ineligible: behind", names("primary"))
	if got := logged(r, "lag", "max_lag"); got != fmt.Sprintf("lag=15 max_lag=%d", maxLag) {
		t.Errorf("the primary's line logged %s, want lag=15 max_lag=%d", got, maxLag)
	}
	log.waitFor(t, "a read served by the backup", "read", servedBy("backup", 20))

	fresh.Stop()
	r = log.waitFor(t, "the stopped backup's probe error", "provider ineligible: probe failed",
		names("backup"))
	// The line names the provider; its error does not name it again.
	probeErr, _ := attr(r, "err").(string)
	named := strings.Contains(probeErr, "backup")
	if attr(r, "reason") != blocklag.ReasonTransport || probeErr == "" || named {
		t.Errorf("the backup's line logged %s, want reason transport and its error, which names no provider",
			logged(r, "reason", "err"))
	}
	log.waitFor(t, "the reference's fall explained", fellLeaderFailed, func(r slog.Record) bool {
		return logged(r, "from", "to", "led") == "from=20 to=5 led=backup"
	})
	r = log.waitFor(t, "a read served by the primary", "read", servedBy("primary", 5))
	if r.Level != slog.LevelInfo {
		t.Errorf("the first read served by the primary was logged at %v, want INFO: its provider changed",
			r.Level)
	}

	stop()
	log.waitFor(t, "the loop stopping", "stopped", anyRecord)
	// Dozens of checks ran; a line about the primary says what changed.
	got := log.tap.about("primary")
	if len(got) < 2 || got[0] != "provider ineligible: behind" || got[len(got)-1] != "provider eligible" {
		t.Errorf("the lines about the primary: %q, want it behind first and eligible last", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Errorf("the lines about the primary say %q twice in a row: %q", got[i], got)
		}
	}
}

// A read that the first provider does not answer, because it stopped after
// the check or because it takes reads and never answers them, goes on to
// the next eligible provider, although it is a POST. A provider that never
// answers costs the read one probe timeout, well within the read's own
// timeout. The read's line says it took two attempts and names both
// providers.
func TestAReadThatGetsNoAnswerMovesToTheNextProvider(t *testing.T) {
	tests := []struct {
		name string
		// first starts the first provider; stop, when not nil, stops it once
		// it has served a read.
		first func(t *testing.T) (url string, stop func())
	}{
		{"a read moves on from a provider that stopped after the check", func(t *testing.T) (string, func()) {
			n := startDevNode(t, 7)
			return n.URL, n.Stop
		}},
		{"a read moves on from a provider that takes it and never answers",
			func(t *testing.T) (string, func()) {
				return startProvider(t, "0x7", hang).URL, nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			firstURL, stopFirst := tt.first(t)
			next := startProvider(t, "0x7", nil)
			endpoints := []failnext.Endpoint{{ID: "first", URL: firstURL}, {ID: "next", URL: next.URL}}
			log := &cursor{tap: tapLog(t)}
			// One check, at start, that finds both eligible; then only reads.
			startRun(t, endpoints, time.Hour, 20*time.Millisecond, "")
			if stopFirst != nil {
				log.waitFor(t, "a read served by the first", "read", servedBy("first", 7))
				stopFirst()
			}
			r := log.waitFor(t, "a read not served by the first", "", func(r slog.Record) bool {
				return isRead(r) && !servedBy("first", 7)(r)
			})
			if r.Message != "read" || !servedBy("next", 7)(r) {
				t.Fatalf("the read logged %q endpoint=%v err=%v, want it served by next",
					r.Message, attr(r, "endpoint"), attr(r, "err"))
			}
			if got := logged(r, "attempts", "tried"); got != "attempts=2 tried=first,next" {
				t.Errorf("the read logged %s, want attempts=2 tried=first,next", got)
			}
		})
	}
}

// A read's line is at the info level when it says something new: the
// provider that served it is not the one that served the last read, it
// took more than one attempt, or the last read failed. Other reads are
// routine: logged at the debug level, which the default logger leaves out.
func TestAReadIsLoggedAtTheInfoLevelWhenItSaysSomethingNew(t *testing.T) {
	answer := func(w http.ResponseWriter, r *http.Request) { answerHeight(w, r, "0x5") }
	tests := []struct {
		name  string
		a, b  []http.HandlerFunc // the reads of each, in turn, the last for every read after
		lines []string           // the first reads' lines, as readLine writes them
	}{
		{"reads served by the same provider at the first attempt are routine after the first",
			[]http.HandlerFunc{answer}, []http.HandlerFunc{answer},
			[]string{"read a INFO", "read a DEBUG", "read a DEBUG", "read a DEBUG"}},
		{"a read that took two attempts is news although its provider served the last",
			[]http.HandlerFunc{hangUp, hangUp, answer}, []http.HandlerFunc{answer},
			[]string{"read b INFO", "read b INFO", "read a INFO", "read a DEBUG"}},
		{"the first read served after a failed one is news although its provider served the last",
			[]http.HandlerFunc{answer, hangUp, answer}, []http.HandlerFunc{hangUp},
			[]string{"read a INFO", "read failed WARN", "read a INFO", "read a DEBUG"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startProvider(t, "0x5", inTurn(tt.a...))
			b := startProvider(t, "0x5", inTurn(tt.b...))
			endpoints := []failnext.Endpoint{{ID: "a", URL: a.URL}, {ID: "b", URL: b.URL}}
			log := &cursor{tap: tapLog(t)}
			stop := startRun(t, endpoints, time.Hour, 20*time.Millisecond, "")
			var got []string
			for range tt.lines {
				got = append(got, readLine(log.waitFor(t, "a read", "", isRead)))
			}
			stop()
			if fmt.Sprint(got) != fmt.Sprint(tt.lines) {
				t.Errorf("the first reads were logged as %q, want %q", got, tt.lines)
			}
		})
	}
}

// A failed read's line names the providers it was sent to, in order, and
// how many attempts it made. When no provider answered, its error is the
// last attempt's: go-ethereum's own text would name the read's URL, the
// first provider's host, whichever provider failed.
func TestAFailedReadNamesTheProvidersItWasSentTo(t *testing.T) {
	tests := []struct {
		name   string
		first  http.HandlerFunc
		second http.HandlerFunc
		want   string // in the logged error
	}{
		{"both answer 502 or 503", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
		}, "502 Bad Gateway"},
		{"both hang up", hangUp, hangUp, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := startProvider(t, "0x9", tt.first)
			second := startProvider(t, "0x9", tt.second)
			endpoints := []failnext.Endpoint{{ID: "first", URL: first.URL}, {ID: "second", URL: second.URL}}
			log := &cursor{tap: tapLog(t)}
			stop := startRun(t, endpoints, time.Hour, time.Hour, "")
			r := log.waitFor(t, "the failed read", "read failed", anyRecord)
			stop()
			if got := logged(r, "attempts", "tried"); got != "attempts=2 tried=first,second" {
				t.Errorf("read failed logged %s, want attempts=2 tried=first,second", got)
			}
			text := fmt.Sprint(attr(r, "err"))
			if !strings.Contains(text, tt.want) || strings.Contains(text, first.Listener.Addr().String()) {
				t.Errorf("read failed logged err=%q, want it to hold %q and not the first's address",
					text, tt.want)
			}
		})
	}
}

// A failed read is logged through Monitor.Redact: what the provider
// answered shows, but never the key in any provider's URL, even where the
// provider echoes it, and never as a line of its own.
func TestReadFailuresAreLoggedThroughRedact(t *testing.T) {
	const key = "k3y0f7he5ecre7"
	const forged = "\n2026/01/01 00:00:00 INFO read block=99999999 endpoint=backup"
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens at the URL
		want    string           // in the logged error
	}{
		{"an HTTP error echoing the key", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "invalid key "+r.URL.Path+forged)
		}, "401 Unauthorized: invalid key [redacted]"},
		{"a JSON-RPC error echoing the key", func(w http.ResponseWriter, r *http.Request) {
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			msg, _ := json.Marshal("limit for " + r.URL.Path + forged)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32005,"message":%s}}`, req.ID, msg)
		}, "limit for [redacted]"},
		{"an answer that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>"+r.URL.Path+forged)
		}, "invalid character"},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, "307 Temporary Redirect"},
		{"no answer", nil, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is logged without the key", func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			if tt.handler == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			log := &cursor{tap: tapLog(t)}
			endpoints := []failnext.Endpoint{{ID: "only", URL: srv.URL + "/v3/" + key}}
			stop := startRun(t, endpoints, time.Hour, time.Hour, "")
			r := log.waitFor(t, "the failed read", "read failed", anyRecord)
			stop()
			if got := fmt.Sprint(attr(r, "err")); !strings.Contains(got, tt.want) {
				t.Errorf("read failed logged err=%q, want it to hold %q", got, tt.want)
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

// With three providers or more the loop sets Quorum and MaxAhead, so that
// one provider far ahead, though first, is ineligible and not read.
func TestThreeProvidersLeaveOutOneFarAhead(t *testing.T) {
	far := startDevNode(t, 40)
	a := startDevNode(t, 6)
	b := startDevNode(t, 6)
	endpoints := []failnext.Endpoint{{ID: "far", URL: far.URL}, {ID: "a", URL: a.URL}, {ID: "b", URL: b.URL}}
	log := &cursor{tap: tapLog(t)}
	startRun(t, endpoints, time.Hour, time.Hour, "")
	r := log.waitFor(t, "the provider far ahead ineligible", "provider ineligible: too far ahead",
		names("far"))
	if got := logged(r, "ahead", "max_ahead"); got != fmt.Sprintf("ahead=34 max_ahead=%d", maxAhead) {
		t.Errorf("its line logged %s, want ahead=34 max_ahead=%d", got, maxAhead)
	}
	log.waitFor(t, "the first read, served by a", "read", servedBy("a", 6))
}

// With a metrics address, run serves blocklag's metrics at /metrics while
// it runs, at the URL it logs, and stops serving them when it returns:
// the gauges, and the counters that count its checks and probes.
func TestRunServesMetricsWhileItRuns(t *testing.T) {
	n := startDevNode(t, 2)
	endpoints := []failnext.Endpoint{{ID: "primary", URL: n.URL}, {ID: "backup", URL: n.URL + "/"}}
	log := &cursor{tap: tapLog(t)}
	stop := startRun(t, endpoints, time.Hour, time.Hour, "127.0.0.1:0")
	r := log.waitFor(t, "the metrics URL", "metrics", anyRecord)
	url, _ := attr(r, "url").(string)
	log.waitFor(t, "the first read", "read", anyRecord)

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

// The providers come from ETH_RPC_URLS or from the seed's two variables.
// Everything else is refused with an error that names variables and shows
// no part of any URL, so that no piece of a URL becomes a provider's name.
func TestEndpointsFromEnv(t *testing.T) {
	const a = "https://user:pa55word@a.example/v3/k3y0f7he5ecre7"
	const b = "https://b.example/rpc?apikey=an0therk3y99"
	tests := []struct {
		name                  string
		list, primary, backup string
		want                  []failnext.Endpoint
		wantErr               string // in the error; "" for none
	}{
		{"a list of two", "infura=" + a + "  alchemy=" + b, "", "",
			[]failnext.Endpoint{{ID: "infura", URL: a}, {ID: "alchemy", URL: b}}, ""},
		{"a list of one, tabs and newlines around it", "\t\nmain-1.eth_x=" + a + "\n", "", "",
			[]failnext.Endpoint{{ID: "main-1.eth_x", URL: a}}, ""},
		{"the seed's two variables", "", a, b,
			[]failnext.Endpoint{{ID: "primary", URL: a}, {ID: "backup", URL: b}}, ""},
		{"nothing set", "", "", "", nil, "write ETH_RPC_URLS='a=https://"},
		{"only white space", " \t ", "", "", nil, "write ETH_RPC_URLS='a=https://"},
		{"both forms", "a=" + a, a, b, nil, "not both"},
		{"both forms, one seed variable", "a=" + a, "", b, nil, "not both"},
		{"the primary without the backup", "", a, "", nil, "ETH_RPC_BACKUP_URL is not set"},
		{"the backup without the primary", "", "", b, nil, "ETH_RPC_PRIMARY_URL is not set"},
		{"URLs without names", a + " " + b, "", "", nil, "write ETH_RPC_URLS"},
		{"a URL whose query holds '=', without a name", b, "", "", nil, "write ETH_RPC_URLS"},
		{"commas between pairs", "a=" + a + ",b=" + b, "", "", nil, "write ETH_RPC_URLS"},
		{"a comma and a space between pairs", "a=" + a + ", b=" + b, "", "", nil, "write ETH_RPC_URLS"},
		{"a stray '='", "a==" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a missing '='", "a " + a, "", "", nil, "write ETH_RPC_URLS"},
		{"spaces around '='", "a = " + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name and no URL", "a= " + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name holding '/'", "mainnet/a=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name holding ':'", "eth:a=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name holding '?'", "a?=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name holding '@'", "me@a=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name holding ','", "a,b=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a name of 17 bytes", "abcdefghijklmnopq=" + a, "", "", nil, "write ETH_RPC_URLS"},
		{"a URL that is not http", "a=ftp://a.example/k3y0f7he5ecre7", "", "", nil, "write ETH_RPC_URLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ETH_RPC_URLS", tt.list)
			t.Setenv("ETH_RPC_PRIMARY_URL", tt.primary)
			t.Setenv("ETH_RPC_BACKUP_URL", tt.backup)
			got, err := endpointsFromEnv()
			if tt.wantErr == "" {
				if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("endpointsFromEnv() = %v, %v; want %v", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || got != nil {
				t.Fatalf("endpointsFromEnv() = %v, %v; want an error holding %q", got, err, tt.wantErr)
			}
			pieces := []string{"a.example", "b.example", "k3y0f7he5ecre7", "pa55word", "mainnet"}
			for _, piece := range pieces {
				if strings.Contains(err.Error(), piece) {
					t.Errorf("the error %q shows %q", err, piece)
				}
			}
		})
	}
}

// An invalid URL stops run before it starts, with blocklag's error, which
// names the endpoint and never the URL's key.
func TestRunRejectsAnInvalidURL(t *testing.T) {
	endpoints := []failnext.Endpoint{
		{ID: "primary", URL: "ftp://user:k3y@a.example/v3/k3y"},
		{ID: "backup", URL: "http://b.example"},
	}
	err := run(context.Background(), endpoints, time.Hour, time.Hour, "")
	if err == nil || !strings.Contains(err.Error(), `"primary"`) || strings.Contains(err.Error(), "k3y") {
		t.Errorf("run = %v, want an error naming the primary without its key", err)
	}
}
