package blocklag

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/yermakovsa/failnext"
)

// keyedProvider is a provider on loopback whose URL holds a user name, a
// password, a key in its path and one in its query. It records every request
// it receives and answers as its handler says.
type keyedProvider struct {
	url     string   // its URL, secrets and all
	secrets []string // its secrets, written out by hand
	basic   string   // the Authorization header its own credentials make

	mu       sync.Mutex
	requests []*http.Request // clones of what it received
}

// newKeyedProvider starts a provider whose secrets are made of name, answered
// by h.
func newKeyedProvider(t *testing.T, name string, h http.HandlerFunc) *keyedProvider {
	t.Helper()
	user := name + "user"
	password := name + "pass12345"
	pathKey := name + "path0123456789"
	queryKey := name + "query0123456789"
	p := &keyedProvider{
		secrets: []string{user, password, pathKey, queryKey},
		basic:   "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password)),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		p.mu.Lock()
		p.requests = append(p.requests, r.Clone(context.Background()))
		p.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	p.url = "http://" + user + ":" + password + "@" + host + "/v3/" + pathKey + "?apikey=" + queryKey
	return p
}

// received returns the requests p has received so far.
func (p *keyedProvider) received() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*http.Request(nil), p.requests...)
}

// leaks returns where r, received by p, carries a secret of other, or an
// Authorization other than p's own: "" when it carries none.
func (p *keyedProvider) leaks(r *http.Request, other *keyedProvider) string {
	if got := r.Header.Get("Authorization"); got != p.basic {
		return "Authorization " + got
	}
	for _, secret := range other.secrets {
		encoded := base64.StdEncoding.EncodeToString([]byte(secret))
		for name, values := range r.Header {
			for _, v := range values {
				if strings.Contains(v, secret) || strings.Contains(v, encoded[:8]) {
					return "header " + name + ": " + v
				}
			}
		}
		if strings.Contains(r.URL.RequestURI(), secret) {
			return "request URI " + r.URL.RequestURI()
		}
	}
	return ""
}

// TestOwnCredentialsKeepEachKeyWithItsProvider reads through failnext from
// a provider that redirects the read and is then found ineligible, so that
// the redirected read goes to the next provider. The read's URL is the first
// provider's, keys and all, the worst a user can do: net/http then sends
// that URL as the Referer of the redirected read and its userinfo as Basic
// auth, and failnext passes both on. Without OwnCredentials the second
// provider receives the first one's keys; with it, each provider receives
// its own credentials and nothing of the other's.
func TestOwnCredentialsKeepEachKeyWithItsProvider(t *testing.T) {
	for _, tt := range []struct {
		name      string
		base      http.RoundTripper
		wantLeaks bool
	}{
		{name: "without OwnCredentials the next provider receives the first one's keys",
			base: http.DefaultTransport, wantLeaks: true},
		{name: "with OwnCredentials each provider receives only its own",
			base: OwnCredentials(nil), wantLeaks: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var redirected atomic.Bool
			first := newKeyedProvider(t, "first", func(w http.ResponseWriter, r *http.Request) {
				redirected.Store(true)
				w.Header().Set("Location", "/moved")
				w.WriteHeader(http.StatusTemporaryRedirect)
			})
			second := newKeyedProvider(t, "second", reply(http.StatusOK, answer(7)))
			transport, err := failnext.New(failnext.Config{
				Endpoints: named("first", first.url, "second", second.url),
				// As a Check would publish it between the two requests.
				Eligible: func(id failnext.EndpointID) bool {
					return id != "first" || !redirected.Load()
				},
				Base: tt.base,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := failnext.WithFailoverAllowed(context.Background())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, first.url, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: transport}).Do(req)
			if err != nil {
				t.Fatalf("the read failed: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("the read's status is %d, want 200 from the second provider", resp.StatusCode)
			}
			if n := len(first.received()); n != 1 {
				t.Fatalf("the first provider received %d requests, want the read", n)
			}
			if n := len(second.received()); n != 1 {
				t.Fatalf("the second provider received %d requests, want the redirected read", n)
			}
			var leaks []string
			for _, r := range first.received() {
				if leak := first.leaks(r, second); leak != "" {
					leaks = append(leaks, "first: "+leak)
				}
			}
			for _, r := range second.received() {
				if leak := second.leaks(r, first); leak != "" {
					leaks = append(leaks, "second: "+leak)
				}
			}
			if tt.wantLeaks && len(leaks) == 0 {
				t.Error("no provider received another's secret: the scenario no longer shows the leak")
			}
			if !tt.wantLeaks && len(leaks) > 0 {
				t.Errorf("a provider received what is not its own:\n%s", strings.Join(leaks, "\n"))
			}
		})
	}
}

// TestOwnCredentialsSendsAnAttemptWithItsOwnURLsCredentials pins what one
// attempt carries, for each kind of userinfo and each spelling of the
// header names it was handed, and that the handed request is left as it
// was.
func TestOwnCredentialsSendsAnAttemptWithItsOwnURLsCredentials(t *testing.T) {
	basic := func(pair string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(pair))
	}
	urls := []struct {
		name string
		url  string
		want string // the Authorization the attempt carries; "" for none
	}{
		{name: "a user and a password are sent as Basic auth",
			url: "http://rpcuser:s3cret@node.example/", want: basic("rpcuser:s3cret")},
		{name: "escapes in the userinfo are decoded first",
			url: "http://rpc%40user:p%2Fss@node.example/", want: basic("rpc@user:p/ss")},
		{name: "a user name alone is sent with an empty password",
			url: "http://rpcuser@node.example/", want: basic("rpcuser:")},
		{name: "a password alone is sent with an empty user name",
			url: "http://:s3cret@node.example/", want: basic(":s3cret")},
		{name: "a URL without userinfo sends no Authorization",
			url: "http://node.example/v3/key0123456789", want: ""},
	}
	// A map literal, or go-ethereum's rpc.WithHeaders, keeps a name as
	// written; net/http sends it so, and servers read any spelling.
	spellings := []struct {
		name                   string
		authorization, referer string
	}{
		{name: "canonical names", authorization: "Authorization", referer: "Referer"},
		{name: "lower-case names", authorization: "authorization", referer: "referer"},
		{name: "upper-case names", authorization: "AUTHORIZATION", referer: "REFERER"},
	}
	for _, u := range urls {
		for _, sp := range spellings {
			t.Run(u.name+", handed headers under "+sp.name, func(t *testing.T) {
				var sent *http.Request
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent = r
					return response(r, http.StatusOK, answer(1), -1), nil
				})
				req, err := http.NewRequest(http.MethodPost, u.url, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header[sp.authorization] = []string{"Basic b3RoZXI6b3RoZXI="}
				req.Header[sp.referer] = []string{"http://other.example/v3/otherkey0123456789"}
				req.Header["Proxy-Authorization"] = []string{"Basic cHJveHk6cHJveHk="}
				req.Header["X-Kept"] = []string{"kept"}
				handed := req.Header.Clone()
				resp, err := OwnCredentials(base).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				var want []string
				if u.want != "" {
					want = []string{u.want}
				}
				if got := valuesAnySpelling(sent.Header, "Authorization"); !slices.Equal(got, want) {
					t.Errorf("Authorization under any spelling = %q, want %q", got, want)
				}
				if got := valuesAnySpelling(sent.Header, "Referer"); len(got) > 0 {
					t.Errorf("Referer under any spelling = %q, want none", got)
				}
				for _, kept := range []string{"Proxy-Authorization", "X-Kept"} {
					if got := sent.Header.Get(kept); got != handed.Get(kept) {
						t.Errorf("%s = %q, want it kept as %q", kept, got, handed.Get(kept))
					}
				}
				if sent == req {
					t.Error("the handed request itself went to base, not a clone")
				}
				if !reflect.DeepEqual(req.Header, handed) {
					t.Errorf("the handed request's headers changed to %q, want %q", req.Header, handed)
				}
			})
		}
	}
}

// valuesAnySpelling returns the values of every header of h whose name is
// name under any spelling.
func valuesAnySpelling(h http.Header, name string) []string {
	var values []string
	for key, v := range h {
		if strings.EqualFold(key, name) {
			values = append(values, v...)
		}
	}
	return values
}

// A request with no Header map, which http.NewRequest never makes but a
// hand-built one may have, is sent with a map of its own.
func TestOwnCredentialsSendsARequestWithoutHeaderMap(t *testing.T) {
	var sent *http.Request
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return response(r, http.StatusOK, answer(1), -1), nil
	})
	target, err := url.Parse("http://rpcuser:s3cret@node.example/")
	if err != nil {
		t.Fatal(err)
	}
	req := (&http.Request{Method: http.MethodPost, URL: target}).WithContext(context.Background())
	resp, err := OwnCredentials(base).RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip of a request without a Header map: %v", err)
	}
	resp.Body.Close()
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("rpcuser:s3cret"))
	if got := sent.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if req.Header != nil {
		t.Errorf("the handed request now has the headers %q, want none", req.Header)
	}
}

// TestOwnCredentialsWithNilBaseUsesDefaultTransport sends one attempt to a
// provider through the default transport.
func TestOwnCredentialsWithNilBaseUsesDefaultTransport(t *testing.T) {
	p := newKeyedProvider(t, "only", reply(http.StatusOK, answer(3)))
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := OwnCredentials(nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := p.received()
	if len(got) != 1 {
		t.Fatalf("the provider received %d requests, want 1", len(got))
	}
	if auth := got[0].Header.Get("Authorization"); auth != p.basic {
		t.Errorf("the provider received Authorization %q, want its own %q", auth, p.basic)
	}
}
