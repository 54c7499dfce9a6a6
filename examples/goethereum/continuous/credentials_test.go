package main

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// guarded is a provider that answers only to the Basic credentials of its
// own URL's user:password@ (none, for a URL without), as a hosted provider
// does, in front of a dev node, and notes every request that carried other
// credentials or lacked its own.
type guarded struct {
	url string

	mu       sync.Mutex
	requests int
	wrong    []string
}

func startGuarded(t *testing.T, blocks int, user, password string) *guarded {
	t.Helper()
	node := startDevNode(t, blocks)
	target, err := url.Parse(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	want := ""
	if user != "" {
		want = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	}
	g := &guarded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.Join(r.Header.Values("Authorization"), ", ")
		g.mu.Lock()
		g.requests++
		if got != want {
			g.wrong = append(g.wrong, fmt.Sprintf("Authorization %q, want %q", got, want))
		}
		g.mu.Unlock()
		if got != want {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	if user != "" {
		g.url = strings.Replace(srv.URL, "://", "://"+user+":"+password+"@", 1)
	}
	return g
}

func (g *guarded) report() (requests int, wrong []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.requests, append([]string(nil), g.wrong...)
}

// A provider whose URL holds user:password@ receives its own credentials
// on every request, probes and reads alike, and no other provider receives
// them, whichever comes first in the list: the first lags, so reads go to
// the second.
func TestEachProviderReceivesOnlyItsOwnCredentials(t *testing.T) {
	tests := []struct {
		name        string
		first, next [2]string // user name and password; empty for none
	}{
		{"user:password@ second, none first", [2]string{}, [2]string{"reader", "s3cond-pa55"}},
		{"user:password@ second, another first", [2]string{"lagger", "f1rst-pa55"}, [2]string{"reader", "s3cond-pa55"}},
		{"user:password@ first, none second", [2]string{"lagger", "f1rst-pa55"}, [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := startGuarded(t, 5, tt.first[0], tt.first[1])
			next := startGuarded(t, 20, tt.next[0], tt.next[1])
			endpoints := []failnext.Endpoint{{ID: "primary", URL: first.url}, {ID: "backup", URL: next.url}}
			log := &cursor{tap: tapLog(t)}
			stop := startRun(t, endpoints, time.Hour, 20*time.Millisecond, "")
			log.waitFor(t, "the lagging primary ineligible", "check", func(r slog.Record) bool {
				c, ok := checkOf(r)
				return ok && c.Providers["primary"] == verdict{Height: 5, Lag: 15} &&
					c.Providers["backup"] == verdict{Eligible: true, Height: 20}
			})
			// The check runs before the first read, which must then go to the backup.
			r := log.waitFor(t, "the first read", "read", func(slog.Record) bool { return true })
			stop()
			if !servedBy("backup", 20)(r) {
				t.Errorf("the first read logged endpoint=%v block=%v cause=%v, want block 20 from the backup",
					attr(r, "endpoint"), attr(r, "block"), attr(r, "cause"))
			}
			for name, g := range map[string]*guarded{"primary": first, "backup": next} {
				requests, wrong := g.report()
				if requests == 0 || len(wrong) > 0 {
					t.Errorf("%s received %d requests, these with credentials not its own: %v", name, requests, wrong)
				}
			}
		})
	}
}

// ownCredentials sends the attempt's own URL's credentials in place of any
// it was handed, and leaves the request it was given as it was.
func TestOwnCredentials(t *testing.T) {
	received := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received <- strings.Join(r.Header.Values("Authorization"), ", ")
	}))
	defer srv.Close()
	for _, tt := range []struct{ url, want string }{
		{strings.Replace(srv.URL, "://", "://alice:pa55@", 1), "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa55"))},
		{srv.URL, ""},
	} {
		req := httptest.NewRequest(http.MethodPost, tt.url, strings.NewReader("{}"))
		req.RequestURI = ""
		req.Header.Set("Authorization", "Basic c29tZW9uZTplbHNl")
		resp, err := ownCredentials{}.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-received; got != tt.want {
			t.Errorf("%s: the provider received Authorization %q, want %q", tt.url, got, tt.want)
		}
		if a := req.Header.Get("Authorization"); a != "Basic c29tZW9uZTplbHNl" {
			t.Errorf("%s: the request handed in now has Authorization %q, want it unchanged", tt.url, a)
		}
	}
}
