package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// With LEAKCHECK_FAKE set, the test binary plays the program under check,
// in the mode the variable names. Modes other than "words" each break one
// rule, as a careless program would:
//
//   - raw: a refusal shows what was written, and a failed request is
//     logged with its error's own text, which quotes the URL;
//   - shared: every request carries the first URL's user:password@;
//   - path: every request carries the first URL's path and query;
//   - auth: it logs the base64 of each user:password it sends;
//   - first: it sends requests to the first provider only;
//   - follow: it follows redirects, which carry a Referer;
//   - noisy: it logs a provider's failure at every round;
//   - quiet: it never logs a provider's failure.
//
// It reads the variables as the continuous command does and refuses what
// that refuses. Then, every 20 ms until it is killed, it sends one POST to
// every provider, logs each provider whose outcome changed, and logs a read,
// served by the first provider that answered; it prints a round only once
// every request of the round is done, so that check, which stops it at the
// first read it logs, has seen them all.
func TestMain(m *testing.M) {
	mode := os.Getenv("LEAKCHECK_FAKE")
	if mode == "" {
		os.Exit(m.Run())
	}
	fake(mode)
}

type fakeEndpoint struct{ name, url string }

// fakeEndpoints reads the variables, or returns the one line that refuses
// them.
func fakeEndpoints(mode string) ([]fakeEndpoint, error) {
	list := os.Getenv("ETH_RPC_URLS")
	primary := os.Getenv("ETH_RPC_PRIMARY_URL")
	backup := os.Getenv("ETH_RPC_BACKUP_URL")
	switch {
	case list != "" && (primary != "" || backup != ""):
		return nil, errors.New("set one form, not both")
	case primary != "" && backup == "":
		return nil, errors.New("set ETH_RPC_BACKUP_URL too")
	case primary == "" && backup != "":
		return nil, errors.New("set ETH_RPC_PRIMARY_URL too")
	case primary != "":
		return []fakeEndpoint{{"primary", primary}, {"backup", backup}}, nil
	}
	var endpoints []fakeEndpoint
	fields := strings.Fields(list)
	for _, field := range fields {
		name, u, _ := strings.Cut(field, "=")
		if name == "" || strings.ContainsAny(name, "/:?@,") || !strings.HasPrefix(u, "http") || strings.Contains(u, ",") {
			fields = nil
			break
		}
		endpoints = append(endpoints, fakeEndpoint{name, u})
	}
	if len(fields) == 0 && mode == "raw" {
		return nil, errors.New("write ETH_RPC_URLS='a=https://... b=https://...', not " + list)
	}
	if len(fields) == 0 {
		return nil, errors.New("write ETH_RPC_URLS='a=https://... b=https://...'")
	}
	return endpoints, nil
}

func fake(mode string) {
	endpoints, err := fakeEndpoints(mode)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	client := &http.Client{Timeout: 2 * time.Second} // one provider never answers
	if mode != "follow" {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	if mode == "first" {
		endpoints = endpoints[:1]
	}
	first := &url.URL{} // a URL that does not parse has no credentials to share
	if u, err := url.Parse(endpoints[0].url); err == nil {
		first = u
	}
	said := map[string]string{}
	for {
		var lines []string
		served := ""
		for _, e := range endpoints {
			outcome, line := fakeRequest(mode, client, e.url, first)
			if line != "" {
				lines = append(lines, line)
			}
			changed := said[e.name] != outcome
			said[e.name] = outcome
			if outcome == "answered" && served == "" {
				served = e.name
			}
			if mode == "noisy" && outcome != "answered" || mode != "quiet" && changed {
				lines = append(lines, "provider "+e.name+": "+outcome)
			}
		}
		if served != "" {
			lines = append(lines, "read block=18 endpoint="+served)
		} else {
			lines = append(lines, "read failed: no provider answered")
		}
		fmt.Println(strings.Join(lines, "\n"))
		time.Sleep(20 * time.Millisecond) // the fake's pace, as a ticker's
	}
}

// fakeRequest sends one POST to raw as mode has it, and returns its outcome
// in the fake's words and, in some modes, a line that gives a secret away.
func fakeRequest(mode string, client *http.Client, raw string, first *url.URL) (outcome, line string) {
	req, err := http.NewRequest(http.MethodPost, raw, strings.NewReader("{}"))
	if err != nil {
		return "no request", ""
	}
	switch mode {
	case "shared":
		req.URL.User = nil
		if first.User != nil {
			password, _ := first.User.Password()
			req.SetBasicAuth(first.User.Username(), password)
		}
	case "path":
		req.URL.Path = first.Path
		req.URL.RawPath = first.RawPath
		req.URL.RawQuery = first.RawQuery
	case "auth":
		if req.URL.User != nil {
			line = "sent Basic " + base64.StdEncoding.EncodeToString([]byte(req.URL.User.String()))
		}
	}
	resp, err := client.Do(req)
	switch {
	case err != nil && mode == "raw":
		return "no answer", "request failed: " + err.Error()
	case err != nil:
		return "no answer", line
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP status %d", resp.StatusCode), line
	}
	return "answered", line
}

func TestCheckFailsAProgramThatLeaksOrMisroutesCredentials(t *testing.T) {
	tests := []struct {
		name string
		fake string
		want []string // each in check's error; none for no error
	}{
		{"a program that logs raw errors and shows a mistyped list fails", "raw",
			[]string{"pieces of keys", "its line shows part of what was written"}},
		{"a program that sends one provider's credentials to all fails", "shared",
			[]string{"received the credentials of"}},
		{"a program that sends one provider's path and query to all fails", "path",
			[]string{"received the path and query of"}},
		{"a program that logs the Basic credentials it sends fails", "auth",
			[]string{"pieces of keys"}},
		{"a program that reads the first provider, eligible or not, fails", "first",
			[]string{"no read served by"}},
		{"a program that follows a redirect, Referer and all, fails", "follow",
			[]string{"received a piece of a secret of redirecting in its Referer header"}},
		{"a program that logs a refusing provider at every check fails", "noisy",
			[]string{"lines named it while it refused connections for 8 checks, want 1"}},
		{"a program that never logs a refusing provider fails", "quiet",
			[]string{"0 lines named it while it refused", "0 lines named it in the 8 checks after it recovered"}},
		{"a program that logs its own words and sends each its own passes", "words", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LEAKCHECK_FAKE", tt.fake)
			err := check(os.Args[0], nil, io.Discard)
			if len(tt.want) == 0 && err != nil {
				t.Errorf("check = %v, want no error", err)
			}
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("check = %v, want an error holding %q", err, want)
				}
			}
		})
	}
}

// Mistyped variables pass only when the program exits with an error
// status, without reading, after one line that says what to write and
// shows nothing of what was written.
func TestRefusal(t *testing.T) {
	const usage = "2026/01/01 00:00:00 ERROR write ETH_RPC_URLS='a=https://... b=https://...'\n"
	written := map[string]string{"ETH_RPC_URLS": "mainnet/a=http://127.0.0.1:8545/v3/k3y0f7he5ecre7"}
	tests := []struct {
		name string
		run  result
		ok   bool
	}{
		{"one line showing how, status 1", result{out: []byte(usage), exitCode: 1}, true},
		{"status 0", result{out: []byte(usage), exitCode: 0}, false},
		{"a read", result{out: []byte("read block=18\n"), read: true, exitCode: -1}, false},
		{"two lines", result{out: []byte(usage + usage), exitCode: 1}, false},
		{"a line that does not show how", result{out: []byte("blocklag: endpoint 0: URL has no scheme\n"), exitCode: 1}, false},
		{"a line that shows the list's host", result{out: []byte(strings.TrimSuffix(usage, "\n") +
			" not 127.0.0.1:8545\n"), exitCode: 1}, false},
		{"a line that shows the list's name", result{out: []byte(strings.TrimSuffix(usage, "\n") +
			" not mainnet/a\n"), exitCode: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if why := refusal(tt.run, howToWrite, written); (why == "") != tt.ok {
				t.Errorf("refusal = %q, want it to pass: %v", why, tt.ok)
			}
		})
	}
}

func TestLeaksFindsEveryEightBytePieceOfAKey(t *testing.T) {
	const key = "abcdefghij0123456789"
	tests := []struct {
		name string
		out  string
		want bool
	}{
		{"the whole key", "url /v3/" + key, true},
		{"its first 8 bytes", "key abcdefgh...", true},
		{"8 bytes from its middle", "x ij012345 y", true},
		{"its last 8 bytes", "23456789", true},
		{"7 bytes of it", "abcdefg", false},
		{"two pieces split across lines", "abcd\nefgh", false},
		{"nothing of it", "read failed: no answer", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(leaks([]byte(tt.out), []string{key})) > 0; got != tt.want {
				t.Errorf("leaks(%q) found a piece: %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}

// A provider that receives a piece of another provider's secret in any
// header, or another's path and query, or credentials not its own, is
// recorded; its own are not.
func TestWireRecordsWhatIsNotAProvidersOwn(t *testing.T) {
	const mine = "/v3/mYk3yAbCdEfGh?apikey=mYqU3rYiJkLmN"
	const theirs = "/v3/tHe1rKeYzXwVu?apikey=tHe1rQuErYsTr"
	own := "Basic " + base64.StdEncoding.EncodeToString([]byte("me:mYpA55wOrD"))
	tests := []struct {
		name    string
		uri     string
		headers map[string]string
		want    string // "" for nothing recorded
	}{
		{"its own path, query and credentials", mine, map[string]string{"Authorization": own}, ""},
		{"its own key in its Referer", mine, map[string]string{"Authorization": own, "Referer": "http://x" + mine}, ""},
		{"another's path and query", theirs, map[string]string{"Authorization": own},
			"me received the path and query of them"},
		{"no credentials", mine, nil, "me received no credentials, not its own"},
		{"another's key in its Referer", mine, map[string]string{"Authorization": own,
			"Referer": "http://x/v3/tHe1rKeYzXwVu"}, "me received a piece of a secret of them in its Referer header"},
		{"a piece of another's query key in any header", mine, map[string]string{"Authorization": own,
			"X-Trace": "q=QuErYsTr"}, "me received a piece of a secret of them in its X-Trace header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wi := &wire{events: &events{more: make(chan struct{})},
				own: map[string]creds{"me": {mine, own}, "them": {theirs, ""}},
				secrets: map[string][]string{"me": {"mYk3yAbCdEfGh", "mYqU3rYiJkLmN", "mYpA55wOrD"},
					"them": {"tHe1rKeYzXwVu", "tHe1rQuErYsTr"}},
				whose: map[string]string{mine: "me", theirs: "them", own: "me"}}
			wi.reset()
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1"+tt.uri, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			wi.receive("me", req)
			wrong, _ := wi.take()
			if got := strings.Join(wrong, "; "); got != tt.want {
				t.Errorf("recorded %q, want %q", got, tt.want)
			}
		})
	}
}
