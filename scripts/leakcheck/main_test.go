package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// With LEAKCHECK_FAKE set, the test binary plays the program under check.
// It refuses a list written wrong, as the Quick start does, with a line
// that says how to write it (any mode but "raw") or that shows the list
// ("raw"). Otherwise it sends one POST to every URL in ETH_RPC_URLS ("first":
// to the first alone, eligible or not), then logs each outcome: a failure
// as the raw error's text ("raw") or in its own words (any other mode). Its
// requests carry each URL's own path, query and user:password@, as
// http.Client sets them, except that "shared" sends the first URL's
// user:password@ to every provider and "path" the first URL's path and
// query, and "auth" logs the base64 of each user:password it sends. It prints only once every request is done, so that check, which
// stops it at the first read it logs, has seen them all.
func TestMain(m *testing.M) {
	mode := os.Getenv("LEAKCHECK_FAKE")
	if mode == "" {
		os.Exit(m.Run())
	}
	fake(mode)
	os.Exit(0)
}

func fake(mode string) {
	list := os.Getenv("ETH_RPC_URLS")
	fields := strings.Fields(list)
	var urls []string
	for _, field := range fields {
		id, u, _ := strings.Cut(field, "=")
		if id == "" || strings.ContainsAny(id, "/:?@,") || !strings.HasPrefix(u, "http") || strings.Contains(u, ",") {
			fields = nil
			break
		}
		urls = append(urls, u)
	}
	if len(fields) == 0 {
		if mode == "raw" {
			fmt.Println("cannot read the list", list)
		} else {
			fmt.Println("write ETH_RPC_URLS='a=https://… b=https://…'")
		}
		os.Exit(1)
	}
	client := &http.Client{Timeout: 2 * time.Second} // one provider never answers
	if mode == "first" {
		urls = urls[:1]
	}
	first := &url.URL{} // a URL that does not parse has no credentials to share
	if u, err := url.Parse(urls[0]); err == nil {
		first = u
	}
	var lines []string
	for _, raw := range urls {
		req, err := http.NewRequest(http.MethodPost, raw, strings.NewReader("{}"))
		if err == nil && mode == "shared" {
			req.URL.User = nil
			if first.User != nil {
				password, _ := first.User.Password()
				req.SetBasicAuth(first.User.Username(), password)
			}
		}
		if err == nil && mode == "auth" && req.URL.User != nil {
			lines = append(lines, "sent Basic "+base64.StdEncoding.EncodeToString([]byte(req.URL.User.String())))
		}
		if err == nil && mode == "path" {
			req.URL.Path, req.URL.RawPath, req.URL.RawQuery = first.Path, first.RawPath, first.RawQuery
		}
		var resp *http.Response
		if err == nil {
			resp, err = client.Do(req)
		}
		switch {
		case err != nil && mode == "raw":
			lines = append(lines, "read failed: "+err.Error())
		case err != nil:
			lines = append(lines, "read failed: no answer")
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
			lines = append(lines, fmt.Sprintf("read failed: HTTP status %d", resp.StatusCode))
		default:
			resp.Body.Close()
			lines = append(lines, "latest block: 18")
		}
	}
	fmt.Println(strings.Join(lines, "\n"))
}

func TestCheckFailsAProgramThatLeaksOrMisroutesCredentials(t *testing.T) {
	tests := []struct {
		name string
		fake string
		want []string // each in check's error; none for no error
	}{
		{"a program that logs the raw error and the list fails", "raw",
			[]string{"pieces of keys", "mistyped lists were not refused"}},
		{"a program that sends one provider's credentials to all fails", "shared",
			[]string{"credentials other than their own", "received the credentials of"}},
		{"a program that sends one provider's path and query to all fails", "path",
			[]string{"credentials other than their own", "received the path and query of"}},
		{"a program that logs the Basic credentials it sends fails", "auth",
			[]string{"pieces of keys"}},
		{"a program that reads the first provider, eligible or not, fails", "first",
			[]string{"no read served by"}},
		{"a program that logs its own words and sends each its own passes", "words", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LEAKCHECK_FAKE", tt.fake)
			err := check(os.Args[0], io.Discard)
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

// A mistyped list passes only when the program exits with an error status,
// without reading, after one line that shows how to write the list.
func TestRefusal(t *testing.T) {
	const usage = "2026/01/01 00:00:00 write ETH_RPC_URLS='a=https://… b=https://…'\n"
	tests := []struct {
		name string
		run  result
		ok   bool
	}{
		{"one line showing how, status 1", result{out: []byte(usage), exitCode: 1}, true},
		{"status 0", result{out: []byte(usage), exitCode: 0}, false},
		{"a read", result{out: []byte("latest block: 18\n"), read: true, exitCode: -1}, false},
		{"two lines", result{out: []byte(usage + usage), exitCode: 1}, false},
		{"a line that does not show how", result{out: []byte("blocklag: endpoint 0: URL has no scheme\n"), exitCode: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if why := refusal(tt.run); (why == "") != tt.ok {
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
