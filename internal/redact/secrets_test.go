package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// shownCase is a text that Outside shows, with ErrorLimit, as want when
// the secrets are those of url.
type shownCase struct {
	name string
	url  string
	text string
	want string
}

// runShown checks each case in a subtest of its own name.
func runShown(t *testing.T, tests []shownCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.New([]string{tt.url}).Outside(tt.text, redact.ErrorLimit)
			if got != tt.want {
				t.Errorf("Outside(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// Beside the user name, the password, the whole path and the whole query,
// a path segment or a query value is a secret on its own when, as written,
// it is 8 bytes with a digit or 20 bytes; the words of URL formats and the
// host stay readable.
func TestWhichPartsOfAURLAreSecrets(t *testing.T) {
	runShown(t, []shownCase{
		{"dRPC's network word beside Chainstack's host stays readable",
			"https://lb.drpc.org/ogrpc?network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7",
			"lookup ethereum-mainnet.core.chainstack.com: no such host",
			"lookup ethereum-mainnet.core.chainstack.com: no such host"},
		{"the whole query is a secret however short its parts are",
			"https://lb.drpc.org/ogrpc?network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7",
			"GET ?network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7 failed",
			"GET ?[redacted] failed"},
		{"a Grove app ID of eight bytes with digits is a secret", "https://eth.rpc.grove.city/v1/7e2b9c04",
			"app 7e2b9c04 unknown", "app [redacted] unknown"},
		{"a seven-byte part with digits is not", "https://rpc.example/v1/7e2b9c0",
			"app 7e2b9c0 unknown", "app 7e2b9c0 unknown"},
		{"the whole path is a secret however short its parts are", "https://rpc.example/v1/7e2b9c0",
			"POST /v1/7e2b9c0 failed", "POST [redacted] failed"},
		{"a path of one slash is not a secret", "https://rpc.example/",
			"POST / failed", "POST / failed"},
		{"an eight-byte part as written is a secret, however short it reads decoded",
			"https://rpc.example/v1/%41%42c1", "app ABc1 unknown", "app [redacted] unknown"},
		{"an eight-letter word is not", "https://rpc.example/arbitrum/v3",
			"arbitrum one", "arbitrum one"},
		{"a twenty-letter key is a secret", "https://rpc.example/?key=abcdefghijklmnopqrst",
			"key abcdefghijklmnopqrst", "key [redacted]"},
		{"a nineteen-letter word is not", "https://rpc.example/?key=abcdefghijklmnopqrs",
			"key abcdefghijklmnopqrs", "key abcdefghijklmnopqrs"},
		{"a key split off at ';' is a secret", "https://rpc.example/?a=1;k=5ecret99",
			"k 5ecret99", "k [redacted]"},
		{"a key split off at '&' is a secret", "https://rpc.example/?a=1&k=5ecret99",
			"k 5ecret99", "k [redacted]"},
		{"a bare key is a secret", "https://rpc.example/?5ecret99",
			"k 5ecret99", "k [redacted]"},
		{"a user name of any length is a secret", "http://ab:x@rpc.example/",
			"user ab denied", "user [redacted] denied"},
		{"a password of any length is a secret", "http://node:pw@rpc.example/",
			"password pw denied", "password [redacted] denied"},
		{"the host is not a secret", "http://node:pw@rpc.example:8545/",
			"dial rpc.example:8545 refused", "dial rpc.example:8545 refused"},
	})
}

// A URL's user name and password are one secret together, as
// "user:password" and as Basic auth carries them. The pair node:k?>~1 gives
// base64 that differs between the two alphabets and ends in padding.
func TestUserNameAndPasswordAreASecretTogether(t *testing.T) {
	const withUser = "http://node:k%3F%3E~1@rpc.example/"
	runShown(t, []shownCase{
		{"the user name and password as written are one secret", withUser,
			"auth node:k%3F%3E~1 refused", "auth [redacted] refused"},
		{"the user name and password decoded are one secret", withUser,
			"auth node:k?>~1 refused", "auth [redacted] refused"},
		{"standard base64 with padding is a secret", withUser,
			"auth bm9kZTprPz5+MQ== refused", "auth [redacted] refused"},
		{"standard base64 without padding is a secret", withUser,
			"auth bm9kZTprPz5+MQ refused", "auth [redacted] refused"},
		{"URL-safe base64 with padding is a secret", withUser,
			"auth bm9kZTprPz5-MQ== refused", "auth [redacted] refused"},
		{"URL-safe base64 without padding is a secret", withUser,
			"auth bm9kZTprPz5-MQ refused", "auth [redacted] refused"},
		{"a Basic header of a user name without password is a secret", "http://rpcadmin@rpc.example/",
			"Authorization: Basic cnBjYWRtaW46", "Authorization: Basic [redacted]"},
	})
}

// infuraKey is a made-up key of Infura's shape.
const infuraKey = "9aa3d95b3bc440fa88ea12eaa4456161"

// A text is read as written and percent-decoded, hex of either case, '+'
// and a space alike; a secret is also found as configured, which a stray
// '%' before a key that holds an escape hides from both readings.
func TestTextIsReadAsWrittenAndDecoded(t *testing.T) {
	const infura = "https://mainnet.infura.io/v3/" + infuraKey
	const spaced = "http://node.example/?key=a+b%20c0123456789"
	const escaped = "http://admin:c0ffee%40Home99@escaped.example/"
	runShown(t, []shownCase{
		{"a key after a stray percent sign is redacted as written", infura,
			"invalid project id %" + infuraKey, "invalid project id %[redacted]"},
		{"a key after 100% is redacted as written", infura,
			"quota used: 100%" + infuraKey, "quota used: 100%[redacted]"},
		{"a key with escaped bytes is redacted as decoded", infura,
			"key " + infuraKey[:30] + "%36%31 rejected", "key [redacted] rejected"},
		{"a key with every byte escaped in lower-case hex is redacted", infura,
			"key " + escapeAll(infuraKey, true) + " rejected", "key [redacted] rejected"},
		{"the whole path is redacted, escaped in either case or not", infura,
			"POST /v3/" + infuraKey + " and %2Fv3%2F" + infuraKey + " and %2fv3%2f" + infuraKey,
			"POST [redacted] and [redacted] and [redacted]"},
		{"a text without a key is left as it is", infura,
			"100% of 9aa3 is fine", "100% of 9aa3 is fine"},
		{"a space read as '+' is the same secret", spaced, "key a b+c0123456789", "key [redacted]"},
		{"'+' read as a space is the same secret", spaced, "key a+b c0123456789", "key [redacted]"},
		{"an escaped '+' is read as a space", spaced, "key a%2Bb%2bc0123456789", "key [redacted]"},
		{"a password holding an escape is redacted after a stray percent sign", escaped,
			"password %c0ffee%40Home99 rejected", "password %[redacted] rejected"},
		{"a password holding an escape is redacted as configured", escaped,
			"password c0ffee%40Home99 rejected", "password [redacted] rejected"},
		{"a password holding an escape is redacted decoded", escaped,
			"password c0ffee@Home99 rejected", "password [redacted] rejected"},
	})
}

// shapes are providers' URL formats with made-up keys, and their secrets.
var shapes = []endpoint{
	{name: "Infura", url: "https://mainnet.infura.io/v3/4f0c2d9e8b7a61503e2d1c0b9a887766",
		secrets: []string{"4f0c2d9e8b7a61503e2d1c0b9a887766"},
		whole:   []string{"/v3/4f0c2d9e8b7a61503e2d1c0b9a887766"}},
	{name: "Alchemy", url: "https://eth-mainnet.g.alchemy.com/v2/Qm7TvX2pLs9aKd4WnR8yZc1Bf6Hj3Ue5",
		secrets: []string{"Qm7TvX2pLs9aKd4WnR8yZc1Bf6Hj3Ue5"},
		whole:   []string{"/v2/Qm7TvX2pLs9aKd4WnR8yZc1Bf6Hj3Ue5"}},
	{name: "QuickNode",
		url:     "https://silent-frosty-pond.quiknode.pro/0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/",
		secrets: []string{"0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e"},
		whole:   []string{"/0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/"}},
	{name: "dRPC", url: "https://lb.drpc.org/ogrpc?network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7",
		secrets: []string{"AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7"},
		whole:   []string{"/ogrpc", "network=ethereum&dkey=AvLq3Rz8Ym1Nc6Wd0Kf5Tg9Hs2Jb4Px7"}},
	{name: "Grove", url: "https://eth.rpc.grove.city/v1/7e2b9c04",
		secrets: []string{"7e2b9c04"}, whole: []string{"/v1/7e2b9c04"}},
	// A password that holds every byte the alphabet leaves out, escaped.
	{name: "a password of escapes", url: "https://rpcuser:p%26ss%3Cw%3Erd%22%5C1@node.example:8545/",
		user: "rpcuser", password: "p%26ss%3Cw%3Erd%22%5C1",
		secrets: []string{"rpcuser", "p%26ss%3Cw%3Erd%22%5C1", "rpcuser:p%26ss%3Cw%3Erd%22%5C1"}},
	// Parts that url.URL writes otherwise than they were configured.
	{name: "escaped separators", url: "http://u%3Av%3Bw:a%3Ab%3Bc@node.example:8545/",
		user: "u%3Av%3Bw", password: "a%3Ab%3Bc",
		secrets: []string{"u%3Av%3Bw", "a%3Ab%3Bc", "u%3Av%3Bw:a%3Ab%3Bc"}},
	{name: "an escaped at sign", url: "http://rpcuser:p%40ss%26word@node.example:8545/",
		user: "rpcuser", password: "p%40ss%26word",
		secrets: []string{"rpcuser", "p%40ss%26word", "rpcuser:p%40ss%26word"}},
	{name: "a raw rune beyond ASCII", url: "http://node.example/v1/\u00e90123456789",
		secrets: []string{"\u00e90123456789"}, whole: []string{"/v1/\u00e90123456789"}},
	{name: "hex of either case", url: "http://node.example/v3/k%2fk%2Fk0123456789",
		secrets: []string{"k%2fk%2Fk0123456789"}, whole: []string{"/v3/k%2fk%2Fk0123456789"}},
	{name: "'+' and %20", url: "http://node.example/?key=a+b%20c0123456789",
		secrets: []string{"a+b%20c0123456789"}, whole: []string{"key=a+b%20c0123456789"}},
	{name: "an escape after hex digits", url: "http://admin:c0ffee%40Home99@escaped.example/",
		user: "admin", password: "c0ffee%40Home99",
		secrets: []string{"admin", "c0ffee%40Home99", "admin:c0ffee%40Home99"}},
}

// spellings are the ways a serializer or a provider writes a URL.
var spellings = []struct {
	name string
	of   func(raw string, u *url.URL) string
}{
	{"as configured", func(raw string, _ *url.URL) string { return raw }},
	{"decoded", func(_ string, u *url.URL) string {
		password, _ := u.User.Password()
		query, _ := url.QueryUnescape(u.RawQuery)
		return u.User.Username() + " " + password + " " + u.Path + " " + query
	}},
	{"by url.PathEscape", func(_ string, u *url.URL) string {
		password, _ := u.User.Password()
		var parts []string
		for _, segment := range strings.Split(u.Path, "/") {
			parts = append(parts, url.PathEscape(segment))
		}
		return url.PathEscape(u.User.Username()) + " " + url.PathEscape(password) + " " +
			strings.Join(parts, "/") + " " + url.PathEscape(u.Path)
	}},
	{"by url.QueryEscape", func(_ string, u *url.URL) string {
		password, _ := u.User.Password()
		text := url.QueryEscape(u.User.Username()) + " " + url.QueryEscape(password) + " " +
			url.QueryEscape(u.Path)
		query, _ := url.QueryUnescape(u.RawQuery)
		text += " " + url.QueryEscape(query)
		for _, pair := range strings.Split(u.RawQuery, "&") {
			_, value, _ := strings.Cut(pair, "=")
			value, _ = url.QueryUnescape(value)
			text += " " + url.QueryEscape(value)
		}
		return text
	}},
	{"by url.URL's String", func(_ string, u *url.URL) string { return u.String() }},
	{"by url.URL's EscapedPath", func(_ string, u *url.URL) string { return u.EscapedPath() }},
	{"by url.URL's User.String", func(_ string, u *url.URL) string { return u.User.String() }},
	{"by url.URL's Redacted", func(_ string, u *url.URL) string { return u.Redacted() }},
	{"with every byte escaped", func(_ string, u *url.URL) string {
		password, _ := u.User.Password()
		query, _ := url.QueryUnescape(u.RawQuery)
		return escapeAll(u.User.Username()+":"+password+"@"+u.Host+u.Path+"?"+query, false)
	}},
}

// Every shape is configured at once, so that each text also meets the
// other endpoints' secrets. Whatever spelling a text holds a URL in, no
// secret form shows, from Message or from Outside.
func TestEverySerializerSpellingIsRedacted(t *testing.T) {
	r := redact.New(urlsOf(shapes))
	forms := formsOf(shapes)
	for _, sp := range spellings {
		for _, sh := range shapes {
			t.Run("a URL of "+sh.name+" written "+sp.name+" shows no secret", func(t *testing.T) {
				u, err := url.Parse(sh.url)
				if err != nil {
					t.Fatal(err)
				}
				text := "Post " + sp.of(sh.url, u) + ": refused"
				assertNoSecret(t, "Message", r.Message(text), forms)
				shown := r.Outside(text, 1000)
				assertNoSecret(t, "Outside", shown, forms)
				assertOutside(t, shown, 1000)
			})
		}
	}
	for _, sh := range shapes {
		t.Run("each secret of "+sh.name+" shows none as written or decoded", func(t *testing.T) {
			for _, s := range append(sh.secrets, sh.whole...) {
				text := "got " + s + " and " + percentDecode(s) + " back"
				assertNoSecret(t, "Message", r.Message(text), forms)
				assertNoSecret(t, "Outside", r.Outside(text, 1000), forms)
			}
		})
	}
}
