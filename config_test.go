package blocklag

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/yermakovsa/failnext"
)

// New refuses a Config that breaks a rule, with an error that says which.
func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error
	}{
		{"no endpoints", Config{}, "no endpoints"},
		{"an empty ID", Config{Endpoints: named("a", "http://x", "", "http://y")}, "endpoint 1: empty ID"},
		{"a repeated ID", Config{Endpoints: named("a", "http://x", "a", "http://y")},
			`endpoint 1 ("a"): ID already used by endpoint 0`},
		{"a negative ProbeTimeout", Config{Endpoints: named("a", "http://x"), ProbeTimeout: -1},
			"ProbeTimeout"},
		{"a negative Quorum", Config{Endpoints: named("a", "http://x"), Quorum: -1}, "Quorum"},
		{"MaxAhead without a Quorum", Config{Endpoints: named("a", "http://x"), MaxAhead: 5},
			"MaxAhead needs Quorum above 1"},
		{"MaxAhead with Quorum 1", Config{Endpoints: named("a", "http://x"), MaxAhead: 5, Quorum: 1},
			"MaxAhead needs Quorum above 1"},
		// An ID reaches logs, JSON, slog and metric labels as it is, so one
		// that could forge or reorder a line is refused, shown escaped.
		{"an ID with a newline", Config{Endpoints: named("ok", "http://x", "a\nforged=1", "http://y")},
			`endpoint 1: ID "a\nforged=1" holds a character that is not printable`},
		{"an ID with an escape sequence", Config{Endpoints: named("ok", "http://x", "a\x1b[2J", "http://y")},
			`endpoint 1: ID "a\x1b[2J" holds`},
		{"an ID with a C1 control, NEL", Config{Endpoints: named("ok", "http://x", "a\u0085b", "http://y")},
			`endpoint 1: ID "a\u0085b" holds`},
		{"an ID with a bidirectional override",
			Config{Endpoints: named("ok", "http://x", "a\u202eb", "http://y")},
			`endpoint 1: ID "a\u202eb" holds`},
		{"an ID with a zero-width space", Config{Endpoints: named("ok", "http://x", "a\u200bb", "http://y")},
			`endpoint 1: ID "a\u200bb" holds`},
		{"an ID with DEL", Config{Endpoints: named("ok", "http://x", "a\x7f", "http://y")},
			`endpoint 1: ID "a\x7f" holds`},
		{"an ID with a byte that is not UTF-8",
			Config{Endpoints: named("ok", "http://x", "a\xffb", "http://y")},
			`endpoint 1: ID "a\xffb" holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			m, err := New(tt.cfg)
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			if !strings.Contains(err.Error(), tt.want) || hasControl(err.Error()) {
				t.Errorf("error %q does not say %q, or holds a control character", err, tt.want)
			}
		})
	}
}

// Each URL carries secrets wherever it can hold one (user name, password,
// path, query), each holding the word SECRET, and each row lists the other
// pieces of its URL that the error must not show either: the host, the
// path, and whatever is wrong with it, such as a bad escape. The error
// names the endpoint and says why in words.
func TestNewRejectsBadURL(t *testing.T) {
	const host = "node7.example" // a host name that no message holds
	tests := []struct {
		name   string
		url    string
		want   string   // part of the error, after the endpoint's name
		hidden []string // pieces of the URL that the error must not show
	}{
		{"a URL with a space before it", " " + withSecrets("http://"+host), "begins or ends with white space",
			[]string{"node7", "/v3/"}},
		{"a URL with a newline after it, as from an environment variable", withSecrets("http://"+host) + "\n",
			"begins or ends with white space", []string{"node7", "/v3/"}},
		{"a URL with a tab before it", "\t" + withSecrets("http://"+host), "begins or ends with white space",
			[]string{"node7", "/v3/"}},
		{"a host and port without a scheme", "127.0.0.1:8545",
			"URL has no scheme: it must start with http:// or https://", []string{"127.0.0.1"}},
		{"a host name and port without a scheme", "localhost:8545/v3/pathSECRET?apikey=querySECRET",
			"URL has no scheme: it must start with http://", []string{"localhost", "/v3/", "apikey"}},
		{"userinfo without a scheme", "userSECRET:passSECRET@" + host + "/v3/pathSECRET?apikey=querySECRET",
			"URL has no scheme", []string{"node7", "/v3/", "apikey"}},
		{"a relative URL", "/v3/pathSECRET?apikey=querySECRET", "URL has no scheme",
			[]string{"/v3/", "apikey"}},
		{"a scheme without slashes", "http:userSECRET@" + host + "/v3/pathSECRET", "URL has no scheme",
			[]string{"node7", "/v3/"}},
		{"an empty scheme", "://userSECRET:passSECRET@" + host + "/v3/pathSECRET", "URL has no scheme",
			[]string{"node7", "/v3/"}},
		{"a WebSocket URL", withSecrets("wss://" + host),
			`URL scheme "wss" is not supported: it must be http or https`, []string{"node7", "/v3/"}},
		{"an FTP URL", withSecrets("ftp://" + host), `URL scheme "ftp" is not supported`,
			[]string{"node7", "/v3/"}},
		{"an invalid percent-escape in the path",
			"http://userSECRET:passSECRET@" + host + "/v3/path%zzSECRET?apikey=querySECRET",
			"invalid percent-escape", []string{"%zz", "node7", "/v3/"}},
		{"an invalid percent-escape in the password",
			"http://userSECRET:pass%zzSECRET@" + host + "/v3/pathSECRET", "invalid percent-escape",
			[]string{"%zz", "node7", "/v3/"}},
		{"an invalid percent-escape in the host", "http://userSECRET:passSECRET@node7%zz/v3/pathSECRET",
			"invalid percent-escape", []string{"%zz", "node7", "/v3/"}},
		{"a percent-escape in the host, which takes none", "http://%41/", "invalid percent-escape",
			[]string{"%41"}},
		{"a control character inside",
			"http://userSECRET:passSECRET@" + host + "/v3/path\tSECRET?apikey=querySECRET",
			"control character", []string{"node7", "/v3/"}},
		{"a port above 65535", withSecrets("http://" + host + ":99999"),
			"URL port is not a number from 1 to 65535", []string{"node7", "99999", "/v3/"}},
		{"port 65536", withSecrets("http://" + host + ":65536"), "URL port is not a number from 1 to 65535",
			[]string{"node7", "65536", "/v3/"}},
		{"port 0", withSecrets("http://" + host + ":0"), "URL port is not a number from 1 to 65535",
			[]string{"node7", ":0", "/v3/"}},
		{"a password of digits after a user name, read as a port because it holds '/'",
			"http://admin:98765432/rest@" + host + "/", "write it as %2F",
			[]string{"admin", "98765432", "rest", "node7"}},
		{"a port that is not a number", withSecrets("http://" + host + ":abc"),
			"URL port is not a number from 1 to 65535", []string{"node7", "abc", "/v3/"}},
		{"a negative port", withSecrets("http://" + host + ":-1"), "URL port is not a number from 1 to 65535",
			[]string{"node7", ":-1", "/v3/"}},
		{"a port of an IPv6 host that is not a number", withSecrets("http://[::1]:abc"),
			"URL port is not a number from 1 to 65535", []string{"::1", "abc", "/v3/"}},
		{"a '/' in the password, which ends the host",
			"http://userSECRET:pass/SECRET@" + host + "/v3/pathSECRET", "write it as %2F",
			[]string{"pass/", "node7", "/v3/"}},
		{"a colon without a port", withSecrets("http://" + host + ":"), "no port", []string{"node7", "/v3/"}},
		{"no host", "http://userSECRET:passSECRET@/v3/pathSECRET?apikey=querySECRET", "URL has no host",
			[]string{"/v3/", "apikey"}},
		{"a port without a host", withSecrets("http://:8545"), "URL has no host", []string{"/v3/"}},
		{"an empty authority", "http:///v3/pathSECRET?apikey=querySECRET", "URL has no host",
			[]string{"/v3/", "apikey"}},
		{"a space in the host", withSecrets("http://node7 example"), "host holds a character",
			[]string{"node7", "/v3/"}},
		{"two colons in the host", withSecrets("http://node7:y:8545"), "more than one ':'",
			[]string{"node7", ":y:", "/v3/"}},
		{"an IPv6 address without brackets", withSecrets("http://::2"), "more than one ':'",
			[]string{"::2", "/v3/"}},
		{"an unclosed bracket", "http://userSECRET:passSECRET@[::1/v3/pathSECRET",
			"only an IPv6 address goes in brackets", []string{"::1", "/v3/"}},
		{"an IPv4 address in brackets", withSecrets("http://[127.0.0.1]"),
			"only an IPv6 address goes in brackets", []string{"127.0.0.1", "/v3/"}},
		{"a bracket inside the host", withSecrets("http://node7[::1]"),
			"only an IPv6 address goes in brackets", []string{"node7", "::1", "/v3/"}},
		{"a space in the user name", withSecrets("http://user x:p@" + host),
			"user name or password holds a character", []string{"user x", "node7", "/v3/"}},
		{"a fragment", withSecrets("http://"+host) + "#fragSECRET", "contains '#'",
			[]string{"node7", "/v3/"}},
		{"an empty fragment", withSecrets("http://"+host) + "#", "contains '#'", []string{"node7", "/v3/"}},
		{"a '#' in the password", "http://userSECRET:pa#ssSECRET@" + host + "/v3/pathSECRET", "%23",
			[]string{"pa#ss", "node7", "/v3/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused in words that show none of it", func(t *testing.T) {
			m, err := New(Config{Endpoints: named("ok", "http://ok", "bad", tt.url)})
			if err == nil || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error", m, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `endpoint 1 ("bad"): URL `) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not name endpoint 1 and say %q", err, tt.want)
			}
			if hasControl(err.Error()) {
				t.Errorf("error %q holds a control character", err)
			}
			assertShowsNone(t, err, tt.hidden...)
		})
	}
}

// parseProblem says what is wrong from the URL itself, never from
// url.Parse's error, whose text quotes the URL: here each error quotes a
// secret, which the explanation never shows, and a URL whose mistake none
// of the explanations names is said not to parse, and nothing more.
func TestParseProblemNeverShowsTheParseError(t *testing.T) {
	const quoted = "http://userSECRET@node7.example/v3/keySECRET"
	tests := []struct {
		name     string
		rest     string // the URL after "://"
		parseErr error
		want     string // the start of the explanation
		whole    bool   // the explanation is exactly want
	}{
		{"a mistake none of them names", "node7.example/v3/keySECRET",
			&url.Error{Op: "parse", URL: quoted, Err: errors.New("something new about keySECRET")},
			"URL does not parse", true},
		{"a mistake none of them names, with an error that is not url.Parse's", "node7.example/",
			errors.New(`parse "` + quoted + `": keySECRET`), "URL does not parse", true},
		{"an invalid escape", "node7.example/v3/key%zzSECRET",
			&url.Error{Op: "parse", URL: quoted, Err: url.EscapeError("%zzSECRET")},
			"URL holds an invalid percent-escape", false},
		{"an invalid host", "node7.example/",
			&url.Error{Op: "parse", URL: quoted, Err: url.InvalidHostError("keySECRET")},
			"URL host holds a character that a host name cannot hold", false},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is explained without the error's text", func(t *testing.T) {
			got := parseProblem(tt.rest, tt.parseErr)
			if msg := got.Error(); !strings.HasPrefix(msg, tt.want) || (tt.whole && msg != tt.want) {
				t.Errorf("parseProblem = %q, want %q", msg, tt.want)
			}
			assertShowsNone(t, got, tt.parseErr.Error(), "node7", "/v3/", "%zz")
		})
	}
}

// New accepts every URL that failnext accepts and that has no mistake of
// those above.
func TestNewAcceptsWellFormedURLs(t *testing.T) {
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

// An ID may hold spaces and the printable letters of any script.
func TestNewAcceptsSpacesAndPrintableLettersOfAnyScriptInIDs(t *testing.T) {
	eps := named("primary node", "http://x", "ノード-2", "http://y", "µ.eu_west", "http://z")
	mustNew(t, Config{Endpoints: eps})
}

// New copies the endpoints: changing the caller's slice changes nothing.
func TestNewCopiesEndpoints(t *testing.T) {
	p := newProvider(t, 10)
	eps := named("a", p.URL)
	m := mustNew(t, Config{Endpoints: eps})
	eps[0] = failnext.Endpoint{ID: "z", URL: "http://127.0.0.1:1"}
	if err := check(m); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !m.Eligible("a") || m.Eligible("z") || p.total() != 1 {
		t.Errorf("changing the caller's slice changed the Monitor")
	}
}
