package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
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
	proxy := httputil.NewSingleHostReverseProxy(mustParse(t, node.URL))
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
		{"user:password@ second, another first",
			[2]string{"lagger", "f1rst-pa55"}, [2]string{"reader", "s3cond-pa55"}},
		{"user:password@ first, none second", [2]string{"lagger", "f1rst-pa55"}, [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := startGuarded(t, 5, tt.first[0], tt.first[1])
			next := startGuarded(t, 20, tt.next[0], tt.next[1])
			endpoints := []failnext.Endpoint{{ID: "primary", URL: first.url}, {ID: "backup", URL: next.url}}
			log := &cursor{tap: tapLog(t)}
			stop := startRun(t, endpoints, time.Hour, 20*time.Millisecond, "")
			log.waitFor(t, "the lagging primary ineligible", "provider ineligible: behind", names("primary"))
			// The check runs before the first read, which must then go to the backup.
			r := log.waitFor(t, "the first read", "read", anyRecord)
			stop()
			if !servedBy("backup", 20)(r) {
				t.Errorf("the first read logged endpoint=%v block=%v, want block 20 from the backup",
					attr(r, "endpoint"), attr(r, "block"))
			}
			for name, g := range map[string]*guarded{"primary": first, "backup": next} {
				requests, wrong := g.report()
				if requests == 0 || len(wrong) > 0 {
					t.Errorf("%s received %d requests, these with credentials not its own: %v",
						name, requests, wrong)
				}
			}
		})
	}
}

// A provider that answers probes but redirects reads to another provider's
// URL gets no read followed: the read fails with the redirect's status, and
// the other provider receives nothing.
func TestReadsFollowNoRedirect(t *testing.T) {
	target := startGuarded(t, 20, "", "")
	node := startDevNode(t, 20)
	probes := httputil.NewSingleHostReverseProxy(mustParse(t, node.URL))
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("User-Agent"), "failnext-blocklag") {
			probes.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, target.url, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	endpoints := []failnext.Endpoint{{ID: "redirecting", URL: redirecting.URL + "/v3/k3y0f7he5ecre7"}}
	log := &cursor{tap: tapLog(t)}
	stop := startRun(t, endpoints, time.Hour, time.Hour, "")
	r := log.waitFor(t, "the redirected read", "read failed", anyRecord)
	stop()
	if got := fmt.Sprint(attr(r, "err")); !strings.Contains(got, "307") {
		t.Errorf("read failed logged err=%q, want the redirect's status, 307", got)
	}
	if requests, _ := target.report(); requests != 0 {
		t.Errorf("the redirect's target received %d requests, want none", requests)
	}
}

// The client addresses its reads to the first provider's scheme and host
// alone, whatever keys that provider's URL holds: go-ethereum's error for a
// read quotes that address, and the request handed to the transport
// carries no credentials from it.
func TestReadsAreAddressedWithoutTheFirstProvidersKeys(t *testing.T) {
	tests := []struct {
		name  string
		first string
		want  string // the address the reads go to
	}{
		{"a key in the path is left out", "https://a.example/v3/k3y0f7he5ecre7", "https://a.example"},
		{"a key in the query is left out", "http://a.example:8545/rpc?apikey=k3y0f7he5ecre7",
			"http://a.example:8545"},
		{"user:password@ is left out", "https://k3y0f7he:5ecre7k3y@a.example/", "https://a.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var auth []string
			transport := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				auth = append(auth, r.Header.Values("Authorization")...)
				return nil, errors.New("no provider here")
			})
			client, err := dial(context.Background(), tt.first, transport)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			_, err = client.BlockNumber(context.Background())
			quoted := err != nil && strings.Contains(err.Error(), `"`+tt.want+`"`)
			if !quoted || strings.Contains(err.Error(), "k3y") {
				t.Errorf("the read failed with %v, want it to quote %q and no key", err, tt.want)
			}
			if len(auth) > 0 {
				t.Errorf("the transport was handed Authorization %q, want none", auth)
			}
		})
	}
}
