package blocklag

import (
	"strings"
	"testing"

	"github.com/yermakovsa/failnext"
)

// Every URL below carries secrets in each part that can hold one, so that
// every rejection also shows that New's error never quotes the URL.
func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error
	}{
		{"no endpoints", Config{}, "no endpoints"},
		{"an empty ID", Config{Endpoints: named("a", "http://x", "", "http://y")}, "endpoint 1: empty ID"},
		{"a repeated ID", Config{Endpoints: named("a", "http://x", "a", "http://y")}, `endpoint 1 ("a")`},
		{"a URL that does not parse", Config{Endpoints: named("a", "http://userSECRET:passSECRET@%zz/v3/pathSECRET?apikey=querySECRET")}, `endpoint 0 ("a"): URL does not parse`},
		{"a relative URL", Config{Endpoints: named("a", "/v3/pathSECRET?apikey=querySECRET")}, "not absolute"},
		{"a scheme other than http", Config{Endpoints: named("a", withSecrets("ws://x"))}, "scheme"},
		{"a URL without host", Config{Endpoints: named("a", "http://userSECRET:passSECRET@/v3/pathSECRET?apikey=querySECRET")}, "no host"},
		{"a fragment", Config{Endpoints: named("a", withSecrets("http://x")+"#frag")}, "fragment"},
		{"an empty fragment", Config{Endpoints: named("a", withSecrets("http://x")+"#")}, "fragment"},
		{"userinfo in a bad URL", Config{Endpoints: named("a", withSecrets("ftp://x"))}, "scheme"},
		{"a negative ProbeTimeout", Config{Endpoints: named("a", "http://x"), ProbeTimeout: -1}, "ProbeTimeout"},
		{"a negative Quorum", Config{Endpoints: named("a", "http://x"), Quorum: -1}, "Quorum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.cfg)
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			assertNoSecret(t, err)
		})
	}
}

func TestNewCopiesEndpoints(t *testing.T) {
	p := newProvider(t, 10)
	eps := named("a", p.URL)
	m := mustNew(t, Config{Endpoints: eps})
	eps[0] = failnext.Endpoint{ID: "z", URL: "http://127.0.0.1:1"}
	if err := check(m); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !m.Eligible("a") || m.Eligible("z") || p.hits.Load() != 1 {
		t.Errorf("changing the caller's slice changed the Monitor")
	}
}
