package failnext

import (
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// parseFailure is the message New gives for an endpoint URL that url.Parse
// rejects.
func parseFailure(t *testing.T, id, raw string) string {
	t.Helper()
	_, err := url.Parse(raw)
	if err == nil {
		t.Fatalf("url.Parse accepts %q", raw)
	}
	return `failnext: invalid endpoint "` + id + `" url "` + raw + `": ` + err.Error()
}

func TestNewRejectsAnInvalidConfig(t *testing.T) {
	ok := endpoints("a", "b")
	withCooldown := func(eps []Endpoint, c CooldownConfig) Config {
		return Config{Endpoints: eps, Cooldown: c}
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"a nil endpoint list is rejected", Config{}, "failnext: no endpoints"},
		{"an empty endpoint list is rejected", Config{Endpoints: []Endpoint{}}, "failnext: no endpoints"},
		{"an empty ID is named by its index", Config{Endpoints: []Endpoint{ok[0], {URL: "http://x.example"}}},
			"failnext: invalid endpoint at index 1: empty id"},
		{"a repeated ID is named",
			Config{Endpoints: []Endpoint{ok[0], ok[1], {ID: "a", URL: "http://x.example"}}},
			`failnext: duplicate endpoint id "a"`},
		{"a URL that url.Parse rejects gives its error",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "http://%zz/"}}},
			parseFailure(t, "a", "http://%zz/")},
		{"a relative URL must be absolute", Config{Endpoints: []Endpoint{{ID: "a", URL: "/rpc"}}},
			`failnext: invalid endpoint "a" url "/rpc": must be absolute`},
		{"a scheme-relative URL must be absolute",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "//a.example/rpc"}}},
			`failnext: invalid endpoint "a" url "//a.example/rpc": must be absolute`},
		{"a ws URL has an unsupported scheme",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "ws://a.example/rpc"}}},
			`failnext: invalid endpoint "a" url "ws://a.example/rpc": unsupported scheme "ws"`},
		{"a URL without host is missing its host", Config{Endpoints: []Endpoint{{ID: "a", URL: "http:///p"}}},
			`failnext: invalid endpoint "a" url "http:///p": missing host`},
		{"a URL with a fragment is rejected",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "http://a.example/rpc#top"}}},
			`failnext: invalid endpoint "a" url "http://a.example/rpc#top": fragments are not allowed`},
		{"a URL ending in an empty fragment is rejected",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "http://a/#"}}},
			`failnext: invalid endpoint "a" url "http://a/#": fragments are not allowed`},

		{"an empty ID is reported before its bad URL", Config{Endpoints: []Endpoint{{URL: "ws://x"}}},
			"failnext: invalid endpoint at index 0: empty id"},
		{"a repeated ID is reported before its bad URL",
			Config{Endpoints: []Endpoint{ok[0], {ID: "a", URL: "ws://x"}}},
			`failnext: duplicate endpoint id "a"`},
		{"an earlier endpoint's bad URL is reported before a later empty ID",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "ws://x"}, {URL: "http://x"}}},
			`failnext: invalid endpoint "a" url "ws://x": unsupported scheme "ws"`},
		{"a relative URL without host is reported as not absolute",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "p#f"}}},
			`failnext: invalid endpoint "a" url "p#f": must be absolute`},
		{"the scheme is checked before the host", Config{Endpoints: []Endpoint{{ID: "a", URL: "ftp:///p"}}},
			`failnext: invalid endpoint "a" url "ftp:///p": unsupported scheme "ftp"`},
		{"the host is checked before the fragment",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "http:///p#f"}}},
			`failnext: invalid endpoint "a" url "http:///p#f": missing host`},

		{"a negative cooldown threshold is rejected", withCooldown(ok, CooldownConfig{Threshold: -1}),
			"failnext: invalid Cooldown.Threshold -1"},
		{"a negative cooldown duration is rejected in Duration form",
			withCooldown(ok, CooldownConfig{Duration: -1500 * time.Millisecond}),
			"failnext: invalid Cooldown.Duration -1.5s"},
		{"Disabled with a threshold is rejected",
			withCooldown(ok, CooldownConfig{Disabled: true, Threshold: 3}),
			"failnext: invalid Cooldown: Disabled cannot be combined with Threshold or Duration"},
		{"Disabled with a duration is rejected",
			withCooldown(ok, CooldownConfig{Disabled: true, Duration: time.Second}),
			"failnext: invalid Cooldown: Disabled cannot be combined with Threshold or Duration"},
		{"a negative threshold is reported even when disabled",
			withCooldown(ok, CooldownConfig{Disabled: true, Threshold: -2}),
			"failnext: invalid Cooldown.Threshold -2"},
		{"a negative duration is reported even when disabled",
			withCooldown(ok, CooldownConfig{Disabled: true, Duration: -time.Second}),
			"failnext: invalid Cooldown.Duration -1s"},
		{"the threshold is checked before the duration",
			withCooldown(ok, CooldownConfig{Threshold: -1, Duration: -time.Second}),
			"failnext: invalid Cooldown.Threshold -1"},
		{"endpoints are checked before the cooldown",
			withCooldown([]Endpoint{{ID: "a", URL: "/rpc"}}, CooldownConfig{Threshold: -1}),
			`failnext: invalid endpoint "a" url "/rpc": must be absolute`},

		{"a trigger code below 100 is rejected",
			Config{Endpoints: ok, AdditionalTriggerStatusCodes: []int{99}},
			"failnext: invalid AdditionalTriggerStatusCodes[0] 99"},
		{"a trigger code above 999 is rejected",
			Config{Endpoints: ok, AdditionalTriggerStatusCodes: []int{418, 1000}},
			"failnext: invalid AdditionalTriggerStatusCodes[1] 1000"},
		{"the first bad trigger code in index order is reported",
			Config{Endpoints: ok, AdditionalTriggerStatusCodes: []int{429, -5, 0}},
			"failnext: invalid AdditionalTriggerStatusCodes[1] -5"},
		{"the cooldown is checked before the trigger codes",
			Config{Endpoints: ok, Cooldown: CooldownConfig{Duration: -time.Second},
				AdditionalTriggerStatusCodes: []int{0}},
			"failnext: invalid Cooldown.Duration -1s"},
		{"endpoints are checked before the trigger codes", Config{AdditionalTriggerStatusCodes: []int{0}},
			"failnext: no endpoints"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.cfg)
			if err == nil || tr != nil {
				t.Fatalf("New = %v, %v; want nil and an error", tr, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

func TestNewWrapsTheURLParseError(t *testing.T) {
	_, err := New(Config{Endpoints: []Endpoint{{ID: "a", URL: "http://a.example/%zz"}}})
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Fatalf("error %v does not wrap a *url.Error", err)
	}
	if ue.URL != "http://a.example/%zz" {
		t.Errorf("wrapped *url.Error is about %q", ue.URL)
	}
}

func TestNewAcceptsAValidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"an upper-case HTTPS scheme is accepted",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "HTTPS://a.example/rpc"}}}},
		{"a URL with user info, port and query is accepted",
			Config{Endpoints: []Endpoint{{ID: "a", URL: "https://u:p@a.example:8545/v3/key?x=1"}}}},
		{"a one-nanosecond cooldown is accepted",
			Config{Endpoints: endpoints("a"), Cooldown: CooldownConfig{Duration: time.Nanosecond}}},
		{"a threshold of one is accepted",
			Config{Endpoints: endpoints("a"), Cooldown: CooldownConfig{Threshold: 1}}},
		{"Disabled alone is accepted",
			Config{Endpoints: endpoints("a"), Cooldown: CooldownConfig{Disabled: true}}},
		{"trigger codes at both ends of the range, repeats and built-ins are accepted",
			Config{Endpoints: endpoints("a"),
				AdditionalTriggerStatusCodes: []int{100, 999, 200, 418, 418, 502, 503, 504}}},
		{"Base, PermissionPolicy, Eligible and OnEvent may all be nil",
			Config{Endpoints: endpoints("a", "b", "c")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.cfg)
			if err != nil || tr == nil {
				t.Fatalf("New = %v, %v; want a Transport", tr, err)
			}
		})
	}
}

func TestNewCopiesTheConfig(t *testing.T) {
	base := perEndpoint(t, map[EndpointID]reply{"a": status(418), "b": status(200)})
	cfg := Config{Endpoints: endpoints("a", "b"), Base: base, AdditionalTriggerStatusCodes: []int{418}}
	tr, _ := build(t, cfg)
	cfg.Endpoints[0] = Endpoint{ID: "z", URL: "http://z.example/"}
	cfg.AdditionalTriggerStatusCodes[0] = 500
	if err := get(t, tr, t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := base.take(); got != "a,b" {
		t.Errorf("tried %s, want a,b: the endpoints and trigger codes as they were at New", got)
	}
}

func TestNewCapturesTheDefaultTransportWhenBaseIsNil(t *testing.T) {
	orig := http.DefaultTransport
	var used atomic.Bool
	http.DefaultTransport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Store(true)
		resp, _ := answer(200)
		return resp, nil
	})
	tr, err := New(Config{Endpoints: endpoints("a")})
	http.DefaultTransport = orig
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, tr, t.Context()); err != nil {
		t.Fatal(err)
	}
	if !used.Load() {
		t.Error("the request did not go through the http.DefaultTransport in force at New")
	}
}
