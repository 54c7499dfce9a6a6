package blocklag

import (
	"strings"
	"testing"

	"github.com/yermakovsa/failnext"
)

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error
	}{
		{"no endpoints", Config{}, "no endpoints"},
		{"an empty ID", Config{Endpoints: named("a", "http://x", "", "http://y")}, "endpoint 1: empty ID"},
		{"a repeated ID", Config{Endpoints: named("a", "http://x", "a", "http://y")}, `endpoint 1 ("a"): ID already used by endpoint 0`},
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
		})
	}
}

// Each URL carries secrets wherever it can hold one (user name, password,
// path, query), so that each rejection also shows that the error quotes
// none of them; the error names the endpoint and says why in words.
func TestNewRejectsBadURL(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want string // part of the error, after the endpoint's name
	}{
		{"a URL with a space before it", " " + withSecrets("http://x"), "begins or ends with white space"},
		{"a URL with a newline after it, as from an environment variable", withSecrets("http://x") + "\n", "begins or ends with white space"},
		{"a URL with a tab before it", "\t" + withSecrets("http://x"), "begins or ends with white space"},
		{"a host and port without a scheme", "127.0.0.1:8545", "URL has no scheme: it must start with http:// or https://"},
		{"a host name and port without a scheme", "localhost:8545/v3/pathSECRET?apikey=querySECRET", "URL has no scheme: it must start with http://"},
		{"userinfo without a scheme", "userSECRET:passSECRET@x/v3/pathSECRET?apikey=querySECRET", "URL has no scheme"},
		{"a relative URL", "/v3/pathSECRET?apikey=querySECRET", "URL has no scheme"},
		{"a scheme without slashes", "http:userSECRET@x/v3/pathSECRET", "URL has no scheme"},
		{"an empty scheme", "://userSECRET:passSECRET@x/v3/pathSECRET", "URL has no scheme"},
		{"a WebSocket URL", withSecrets("wss://x"), `URL scheme "wss" is not supported: it must be http or https`},
		{"an FTP URL", withSecrets("ftp://x"), `URL scheme "ftp" is not supported`},
		{"an invalid percent-escape in the path", "http://userSECRET:passSECRET@x/v3/pathSECRET%zz?apikey=querySECRET", "invalid percent-escape"},
		{"an invalid percent-escape in the password", "http://userSECRET:pass%zzSECRET@x/v3/pathSECRET", "invalid percent-escape"},
		{"an invalid percent-escape in the host", "http://userSECRET:passSECRET@%zz/v3/pathSECRET", "invalid percent-escape"},
		{"a control character inside", "http://userSECRET:passSECRET@x/v3/path\tSECRET?apikey=querySECRET", "control character"},
		{"a port above 65535", withSecrets("http://x:99999"), "URL port 99999 is not a number from 1 to 65535"},
		{"port 0", withSecrets("http://x:0"), "URL port 0 is not a number from 1 to 65535"},
		{"a port that is not a number", withSecrets("http://x:abc"), "URL port is not a number from 1 to 65535"},
		{"a negative port", withSecrets("http://x:-1"), "URL port is not a number from 1 to 65535"},
		{"a port of an IPv6 host that is not a number", withSecrets("http://[::1]:abc"), "URL port is not a number from 1 to 65535"},
		{"a '/' in the password, which ends the host", "http://userSECRET:pass/SECRET@x/v3/pathSECRET", "write it as %2F"},
		{"a colon without a port", withSecrets("http://x:"), "no port"},
		{"no host", "http://userSECRET:passSECRET@/v3/pathSECRET?apikey=querySECRET", "URL has no host"},
		{"a port without a host", withSecrets("http://:8545"), "URL has no host"},
		{"an empty authority", "http:///v3/pathSECRET?apikey=querySECRET", "URL has no host"},
		{"a space in the host", withSecrets("http://x y"), "host holds a character"},
		{"two colons in the host", withSecrets("http://x:y:8545"), "more than one ':'"},
		{"an IPv6 address without brackets", withSecrets("http://::1"), "more than one ':'"},
		{"an unclosed bracket", "http://userSECRET:passSECRET@[::1/v3/pathSECRET", "without a closing ']'"},
		{"an IPv4 address in brackets", withSecrets("http://[127.0.0.1]"), "not an IPv6 address"},
		{"a bracket inside the host", withSecrets("http://x[::1]"), "only an IPv6 address goes in brackets"},
		{"a space in the user name", withSecrets("http://user x:p@x"), "user name or password holds a character"},
		{"a fragment", withSecrets("http://x") + "#fragSECRET", "contains '#'"},
		{"an empty fragment", withSecrets("http://x") + "#", "contains '#'"},
		{"a '#' in the password", "http://userSECRET:pa#ssSECRET@x/v3/pathSECRET", "%23"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{Endpoints: named("ok", "http://ok", "bad", tt.url)})
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			if msg := err.Error(); !strings.Contains(msg, `endpoint 1 ("bad"): URL `) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not name endpoint 1 and say %q", err, tt.want)
			}
			if hasControl(err.Error()) {
				t.Errorf("error %q holds a control character", err)
			}
			assertNoSecret(t, err)
		})
	}
}

func TestNewAcceptsURL(t *testing.T) {
	for _, raw := range []string{
		"http://x",
		"https://x/",
		"HTTPS://X/v3/key",
		"http://x:1",
		"http://x:65535",
		"http://127.0.0.1:8545",
		"http://[::1]:8545/",
		"http://[fe80::1%25en0]:8545/",
		"https://user:p%40ss@x/v3/key?apikey=k&x=%zz", // a query is sent as it is written
		"http://u:p@ss@x/",                            // the last '@' ends the userinfo
	} {
		t.Run(raw+" is accepted", func(t *testing.T) {
			mustNew(t, Config{Endpoints: named("a", raw)})
		})
	}
}

// An ID reaches logs, JSON, slog and metric labels as it is, so New
// rejects one that could forge or reorder a line, and its error shows the
// ID escaped.
func TestNewRejectsUnprintableID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want string // the ID as the error shows it
	}{
		{"a newline", "a\nforged=1", `"a\nforged=1"`},
		{"an escape sequence", "a\x1b[2J", `"a\x1b[2J"`},
		{"a C1 control, NEL", "a\u0085b", `"a\u0085b"`},
		{"a bidirectional override", "a\u202eb", `"a\u202eb"`},
		{"a zero-width space", "a\u200bb", `"a\u200bb"`},
		{"DEL", "a\x7f", `"a\x7f"`},
		{"a byte that is not UTF-8", "a\xffb", `"a\xffb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{Endpoints: named("ok", "http://x", tt.id, "http://y")})
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			if want := "endpoint 1: ID " + tt.want + " holds a character that is not printable"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if hasControl(err.Error()) {
				t.Errorf("error %q holds the ID unescaped", err)
			}
		})
	}
	t.Run("spaces and printable letters of any script are accepted", func(t *testing.T) {
		mustNew(t, Config{Endpoints: named("primary node", "http://x", "ノード-2", "http://y", "µ.eu_west", "http://z")})
	})
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
