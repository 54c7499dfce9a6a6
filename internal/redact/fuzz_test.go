package redact_test

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// FuzzRedactShowsNoSecret builds a URL from a fuzzed user name, password,
// path segment and query value, written as buildURL's style says, and
// embeds it in a fuzzed text in each spelling of the URL, beside the Basic
// header of its userinfo. Neither Message nor Outside shows a form of its
// secrets in either reading, a second Message changes nothing, and Outside
// stays in the alphabet and within its limit. Its secrets alone, clipped at a fuzzed limit, show no 8-byte
// piece. Run longer with:
// go test -run '^$' -fuzz FuzzRedactShowsNoSecret -fuzztime 5m ./internal/redact
func FuzzRedactShowsNoSecret(f *testing.F) {
	const rest = "bcdef0123456789abcdef0123456789"
	f.Add("admin", "p&ssKilo42=w0rd", "a"+rest, "98765432", "project \a"+rest+" unknown", uint8(0))
	f.Add("", "", "u0026"+rest, "1", "key &"+rest, uint8(9))
	f.Add("us er", "pa\"ss", "caf\u00e9-0123456789", "k%2Fk%2Fk%2Fk", `{"id":"caf\u00e9-0123456789"}`,
		uint8(7))
	f.Add("a", "b", "x1b"+rest, "v w+x 12345678", "\x1b"+rest+" \xab"+rest, uint8(30))
	f.Add("[redacted]", "[redacted]hunter2hunter2", "ab12345678[red", "0", "0", uint8(53))
	f.Add("u", "p", "9aa3d95b3bc4"+rest, "x", "invalid project id %9aa3d95b3bc4"+rest, uint8(4))
	f.Add("u", "p", "s", "100%"+rest, "quota 100%"+rest+" and %2541"+rest, uint8(130))
	f.Add("admin", "c0ffee@Home99", "v", "w", "password %c0ffee%40Home99 rejected", uint8(8))
	f.Add("rpcuser", "\xe2\x82\xac0123456789", "\x82\xac0123456789abcdef", "x", "key \xe2", uint8(250))
	f.Fuzz(func(t *testing.T, user, password, segment, value, text string, style uint8) {
		if len(text) > 2000 || len(user)+len(password)+len(segment)+len(value) > 300 {
			t.Skip()
		}
		u, ok := buildURL(user, password, segment, value, style)
		if !ok {
			t.Skip() // url.Parse rejects it, as a configuration would be
		}
		parsed, err := url.Parse(u.raw)
		if err != nil {
			t.Fatal(err)
		}
		r := redact.New([]string{u.raw})
		forms := u.forms()
		all := slices.Concat(forms.keyed, forms.whole)
		limits := []int{redact.ValueLimit, redact.ErrorLimit, 10, 1000}
		limit := limits[int(style>>4)%len(limits)]
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
		for _, sp := range spellings {
			full := text + " " + sp.of(u.raw, parsed) + " " + basic
			message := r.Message(full)
			if piece := visibleIn(message, all, 0); piece != "" {
				t.Errorf("Message of %q (%s) shows %q", full, sp.name, piece)
			}
			if again := r.Message(message); again != message {
				t.Errorf("Message of %q (%s) is %q, and again %q", full, sp.name, message, again)
			}
			shown := r.Outside(full, limit)
			if piece := visibleIn(shown, all, 0); piece != "" {
				t.Errorf("Outside(%q, %d) (%s) = %q shows %q", full, limit, sp.name, shown, piece)
			}
			assertOutside(t, shown, limit)
		}
		// Only secrets after the markers, so that no byte but theirs can
		// make a piece of one; a limit that falls inside them.
		var secrets strings.Builder
		secrets.WriteString(strings.Repeat(shownMarker, 3))
		for _, s := range []string{u.writtenUser, u.user, u.writtenPassword, u.password} {
			secrets.WriteString(s)
		}
		if looksLikeKey(u.writtenSegment) {
			secrets.WriteString(u.writtenSegment + u.segment)
		}
		if looksLikeKey(u.writtenValue) {
			secrets.WriteString(u.writtenValue + u.value)
		}
		clipped := r.Outside(secrets.String(), 3*len(shownMarker)+int(style>>4))
		assertNoSecret(t, "Outside", clipped, secretForms{keyed: forms.keyed})
	})
}
