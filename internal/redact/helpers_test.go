package redact_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The oracle of these tests says which texts show a secret without the
// code under test: each endpoint's secrets are written out by hand, or
// known from how the fuzz target built its URL, and a text is read both
// ways by code of its own.

// shownMarker is what a redacted stretch shows.
const shownMarker = "[redacted]"

// endpoint is a URL and its secrets, each written out by hand as the URL
// writes it. user and password are the userinfo as written, "" for none.
type endpoint struct {
	name           string
	url            string
	secrets        []string // keys, the user name and password, alone and together
	whole          []string // the whole path and the whole query
	user, password string
}

// secretForms are the forms of secrets that no text may show: a keyed form
// by any 8-byte piece of it, a whole form (a path or a query, whose words
// may show alone) only whole.
type secretForms struct {
	keyed []string
	whole []string
}

// add adds the forms of other to f.
func (f *secretForms) add(other secretForms) {
	f.keyed = append(f.keyed, other.keyed...)
	f.whole = append(f.whole, other.whole...)
}

// forms lists the forms of e's secrets: each read as written and decoded,
// and, with a userinfo, "user:password" in standard and URL-safe base64,
// with and without padding.
func (e endpoint) forms() secretForms {
	var f secretForms
	for _, s := range e.secrets {
		f.keyed = append(f.keyed, readAsWritten(s), readDecoded(s))
	}
	for _, s := range e.whole {
		f.whole = append(f.whole, readAsWritten(s), readDecoded(s))
	}
	if e.user != "" || e.password != "" {
		f.keyed = append(f.keyed, basicForms(percentDecode(e.user), percentDecode(e.password))...)
	}
	return f
}

// basicForms lists "user:password" as a Basic Authorization header carries
// it: base64, standard and URL-safe, each with and without its padding.
func basicForms(user, password string) []string {
	pair := []byte(user + ":" + password)
	var forms []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		encoded := enc.EncodeToString(pair)
		forms = append(forms, readAsWritten(encoded))
		forms = append(forms, readAsWritten(strings.TrimRight(encoded, "=")))
	}
	return forms
}

// formsOf lists the forms of every endpoint of eps.
func formsOf(eps []endpoint) secretForms {
	var f secretForms
	for _, e := range eps {
		f.add(e.forms())
	}
	return f
}

// urlsOf lists the URLs of eps.
func urlsOf(eps []endpoint) []string {
	var urls []string
	for _, e := range eps {
		urls = append(urls, e.url)
	}
	return urls
}

// showable reports whether c is shown as it is: printable ASCII but for
// the double quote, the backslash, '<', '>' and '&'.
func showable(c byte) bool {
	return c >= 0x20 && c <= 0x7e && !strings.ContainsRune("\"\\<>&", rune(c))
}

// shownAs is the byte that outside text shows for c.
func shownAs(c byte) byte {
	switch {
	case c == '"':
		return '\''
	case showable(c):
		return c
	}
	return '?'
}

// notInAlphabet returns the offset of the first byte of text that is not
// shown as it is, or -1.
func notInAlphabet(text string) int {
	for i := 0; i < len(text); i++ {
		if !showable(text[i]) {
			return i
		}
	}
	return -1
}

// oracleAlphabet is text with each byte as outside text shows it.
func oracleAlphabet(text string) string {
	b := []byte(text)
	for i, c := range b {
		b[i] = shownAs(c)
	}
	return string(b)
}

// readAsWritten is text as the first reading sees it: each byte as shown,
// and '+' as a space.
func readAsWritten(text string) string {
	return strings.ReplaceAll(oracleAlphabet(text), "+", " ")
}

// readDecoded is text as the second reading sees it: every %XX decoded,
// then read as written.
func readDecoded(text string) string {
	return readAsWritten(percentDecode(text))
}

// percentDecode decodes every %XX of text, hex digits of either case,
// from left to right, and leaves any other '%' as it is.
func percentDecode(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if v, ok := escapeAt(text, i); ok {
			b.WriteByte(v)
			i += 2
			continue
		}
		b.WriteByte(text[i])
	}
	return b.String()
}

// escapeAt returns the byte that an escape %XX at text's byte i encodes.
func escapeAt(text string, i int) (byte, bool) {
	if text[i] != '%' || i+3 > len(text) {
		return 0, false
	}
	v, err := strconv.ParseUint(text[i+1:i+3], 16, 8)
	if err != nil {
		return 0, false // ParseUint takes no sign and no prefix in base 16
	}
	return byte(v), true
}

// reading is a text as one reading sees it, and for each of its bytes
// whether it stands for a byte of a "[redacted]" written in the text.
type reading struct {
	text     string
	redacted []bool
}

// readingsOf returns text read as written and decoded.
func readingsOf(text string) []reading {
	redacted := make([]bool, len(text))
	for from := 0; ; {
		at := strings.Index(text[from:], shownMarker)
		if at < 0 {
			break
		}
		for k := range len(shownMarker) {
			redacted[from+at+k] = true
		}
		from += at + len(shownMarker)
	}
	written := reading{text: readAsWritten(text), redacted: redacted}
	var decoded []byte
	var decodedRedacted []bool
	for i := 0; i < len(text); i++ {
		// A marker holds no '%', so an escape is in one or outside all.
		decodedRedacted = append(decodedRedacted, redacted[i])
		c := text[i]
		if v, ok := escapeAt(text, i); ok {
			c = v
			i += 2
		}
		decoded = append(decoded, c)
	}
	return []reading{written, {text: readAsWritten(string(decoded)), redacted: decodedRedacted}}
}

// visibleIn returns a piece of one of forms that text shows in either
// reading, and "" when it shows none. With piece 0 the pieces of a form are
// the form itself; otherwise they are its stretches of piece bytes, or the
// form itself when it is shorter, as a text that shows most of a key shows
// it. A piece is shown where one of its bytes stands outside every
// "[redacted]".
func visibleIn(text string, forms []string, piece int) string {
	readings := readingsOf(text)
	for _, f := range forms {
		size := len(f)
		if piece > 0 {
			size = min(len(f), piece)
		}
		for i := 0; size > 0 && i+size <= len(f); i++ {
			for _, r := range readings {
				if shownIn(r, f[i:i+size]) {
					return f[i : i+size]
				}
			}
		}
	}
	return ""
}

// shownIn reports whether piece occurs in r with a byte outside every
// "[redacted]".
func shownIn(r reading, piece string) bool {
	for from := 0; ; from++ {
		at := strings.Index(r.text[from:], piece)
		if at < 0 {
			return false
		}
		from += at
		for k := range len(piece) {
			if !r.redacted[from+k] {
				return true
			}
		}
	}
}

// assertNoSecret fails t when text shows an 8-byte piece of a keyed form,
// the whole of a shorter one, or a whole form.
func assertNoSecret(t testing.TB, what, text string, f secretForms) {
	t.Helper()
	piece := visibleIn(text, f.keyed, 8)
	if piece == "" {
		piece = visibleIn(text, f.whole, 0)
	}
	if piece != "" {
		t.Errorf("%s = %q shows %q", what, text, piece)
	}
}

// assertOutside fails t unless shown, what Outside made of a text with
// limit, is in the alphabet and within the limit: at most limit bytes, a
// "[redacted]" counted as one, then "...".
func assertOutside(t testing.TB, shown string, limit int) {
	t.Helper()
	if i := notInAlphabet(shown); i >= 0 {
		t.Errorf("Outside = %q holds %q at %d, outside the alphabet", shown, shown[i], i)
	}
	counted := strings.ReplaceAll(shown, shownMarker, "#")
	if len(counted) > limit+len("...") {
		t.Errorf("Outside = %q shows %d bytes, a marker counted as one; want at most %d and the dots",
			shown, len(counted), limit)
	}
}

// allocatedBy returns how many bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hexKey returns a key of n hex digits, different for each seed.
func hexKey(seed, n int) string {
	var b strings.Builder
	state := uint64(seed)*0x9e3779b97f4a7c15 + 1
	for b.Len() < n {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		fmt.Fprintf(&b, "%016x", state)
	}
	return b.String()[:n]
}

// escapeAll writes each byte of s as an escape, hex in upper case unless
// lower is set.
func escapeAll(s string, lower bool) string {
	format := "%%%02X"
	if lower {
		format = "%%%02x"
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, format, c)
	}
	return b.String()
}

// escapeReserved writes s with every byte but letters, digits and "-._~"
// escaped, as every part of a URL may write it.
func escapeReserved(s string, lower bool) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		plain := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if plain || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(escapeAll(string([]byte{c}), lower))
	}
	return b.String()
}

// builtURL is a URL built from parts known both as meant and as written, so
// that its secrets are known by construction rather than by splitting it.
type builtURL struct {
	raw string
	// as meant, and as written in raw
	user, password, segment, value               string
	writtenUser, writtenPassword, writtenSegment string
	writtenValue                                 string
}

// buildURL writes http://user:password@rpc.example/v3/segment?chain=1&key=value
// from its parts as style says: hex in lower case (bit 0), every byte
// escaped (bit 1), a space in the value as '+' rather than %20 (bit 2),
// and the segment as it is when it needs no escape to stay one segment
// (bit 3). It reports false when url.Parse rejects the result.
func buildURL(user, password, segment, value string, style uint8) (builtURL, bool) {
	lower := style&1 != 0
	escape := func(s string) string { return escapeReserved(s, lower) }
	if style&2 != 0 {
		escape = func(s string) string { return escapeAll(s, lower) }
	}
	u := builtURL{user: user, password: password, segment: segment, value: value}
	u.writtenUser = escape(user)
	u.writtenPassword = escape(password)
	u.writtenSegment = escape(segment)
	if style&8 != 0 && segment != "" && !strings.ContainsFunc(segment, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("/?#%", r)
	}) {
		u.writtenSegment = segment
	}
	u.writtenValue = escape(value)
	if style&4 != 0 {
		u.writtenValue = strings.ReplaceAll(u.writtenValue, escapeAll(" ", lower), "+")
	}
	userinfo := ""
	if user != "" || password != "" {
		userinfo = u.writtenUser + ":" + u.writtenPassword + "@"
	}
	u.raw = "http://" + userinfo + "rpc.example/v3/" + u.writtenSegment + "?chain=1&key=" + u.writtenValue
	_, err := url.Parse(u.raw)
	return u, err == nil
}

// forms lists the forms of u's secrets, each as meant and as written: the
// user name and password, alone, together and as Basic auth; the whole
// path and the whole query; and the segment and the value when, as
// written, they look like a key.
func (u builtURL) forms() secretForms {
	var f secretForms
	both := func(forms []string, meant, written string) []string {
		return append(forms, readAsWritten(meant), readAsWritten(written))
	}
	f.whole = both(f.whole, "/v3/"+u.segment, "/v3/"+u.writtenSegment)
	f.whole = both(f.whole, "chain=1&key="+u.value, "chain=1&key="+u.writtenValue)
	if u.user != "" || u.password != "" {
		f.keyed = both(f.keyed, u.user, u.writtenUser)
		f.keyed = both(f.keyed, u.password, u.writtenPassword)
		f.keyed = both(f.keyed, u.user+":"+u.password, u.writtenUser+":"+u.writtenPassword)
		f.keyed = append(f.keyed, basicForms(u.user, u.password)...)
	}
	if looksLikeKey(u.writtenSegment) {
		f.keyed = both(f.keyed, u.segment, u.writtenSegment)
	}
	if looksLikeKey(u.writtenValue) {
		f.keyed = both(f.keyed, u.value, u.writtenValue)
	}
	return f
}

// looksLikeKey is the rule by which a path segment or a query value, as
// written, is a secret on its own: 8 bytes with a digit, or 20 bytes.
func looksLikeKey(written string) bool {
	if len(written) >= 20 {
		return true
	}
	return len(written) >= 8 && strings.ContainsAny(written, "0123456789")
}
