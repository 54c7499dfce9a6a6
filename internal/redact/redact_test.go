package redact_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// clipKey is a made-up key of 32 bytes.
const clipKey = "k3y0123456789abcdef0123456789abc"

// Outside shows at most limit bytes, then "..." when anything was left
// out; a "[redacted]" whose stretch begins within the limit is shown whole,
// and the dots are redacted again, as they may complete a secret.
func TestOutsideTextIsClippedAndRedactedWhole(t *testing.T) {
	keyed := endpoint{url: "http://a.example/v3/" + clipKey, secrets: []string{clipKey},
		whole: []string{"/v3/" + clipKey}}
	dotted := endpoint{url: "http://a.example/v3/" + clipKey + "...", secrets: []string{clipKey + "..."},
		whole: []string{"/v3/" + clipKey + "..."}}
	x := strings.Repeat
	for _, tt := range []struct {
		name     string
		endpoint endpoint
		text     string
		limit    int
		want     string
	}{
		{"a long text is clipped and ends in dots", keyed, x("x", 150), 100, x("x", 100) + "..."},
		{"a text of the limit's length is shown whole", keyed, x("x", 100), 100, x("x", 100)},
		{"a secret across the limit is redacted whole", keyed, x("x", 90) + clipKey, 100,
			x("x", 90) + "[redacted]"},
		{"a secret across the limit is followed by dots when more was left out", keyed,
			x("x", 90) + clipKey + "tail", 100, x("x", 90) + "[redacted]..."},
		{"a secret that begins on the limit's last byte is shown as the marker", keyed,
			x("x", 99) + clipKey + "tail", 100, x("x", 99) + "[redacted]..."},
		{"a secret that begins at the limit is left out", keyed, x("x", 100) + clipKey, 100,
			x("x", 100) + "..."},
		{"an escaped secret across the limit is redacted whole", keyed,
			x("x", 95) + escapeAll(clipKey, false) + "tail", 100, x("x", 95) + "[redacted]..."},
		{"a secret that the dots complete is redacted", dotted,
			x("x", 100-len(clipKey)) + clipKey + "!", 100, x("x", 100-len(clipKey)) + "[redacted]"},
		{"text is put in the alphabet before it is clipped", keyed, x("é", 200), redact.ErrorLimit,
			x("?", 300) + "..."},
		{"a limit of zero shows only the dots", keyed, "abc", 0, "..."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.New([]string{tt.endpoint.url}).Outside(tt.text, tt.limit)
			if got != tt.want {
				t.Errorf("Outside(%q, %d) = %q, want %q", tt.text, tt.limit, got, tt.want)
			}
			assertNoSecret(t, "Outside", got, tt.endpoint.forms())
			assertOutside(t, got, tt.limit)
		})
	}
}

// A text of megabytes is read only as far as the limit and the lookahead
// past it, so it costs what a short one does.
func TestOutsideReadsOnlyWhatItShows(t *testing.T) {
	const mime = "net/http: malformed MIME header line: "
	key := hexKey(1, 32)
	r := redact.New([]string{"http://rpc.example/v3/" + key})
	x := strings.Repeat
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{"the key repeated to 9 MB is one stretch", mime + x(key, 9<<20/len(key)), mime + "[redacted]..."},
		{"9 MB of one letter is clipped", mime + x("x", 9<<20), mime + x("x", 300-len(mime)) + "..."},
		{"9 MB of runes beyond ASCII are clipped", x("é", 9<<19), x("?", 300) + "..."},
	} {
		t.Run(tt.name+" and costs little memory", func(t *testing.T) {
			var got string
			allocated := allocatedBy(func() { got = r.Outside(tt.text, redact.ErrorLimit) })
			if got != tt.want {
				t.Errorf("Outside = %q, want %q", got, tt.want)
			}
			if allocated > 64<<10 {
				t.Errorf("Outside allocated %d bytes for a text of %d, want at most 64 KiB",
					allocated, len(tt.text))
			}
		})
	}
}

// A "[redacted]" already in a text is never cut, however short a secret is,
// while a secret that runs across one is redacted all the same, one that a
// marker written by the first pass completes included; a message redacted
// twice is the message redacted once.
func TestMarkerIsNeverCutAndSecretsAcrossItAreRedacted(t *testing.T) {
	const oneLetter = "http://u:d@rpc.example/v3/k3y0123456789abc"
	const markerPassword = "http://admin:%5Bredacted%5Dhunter2@m.example/"
	const markerPath = "http://m.example/ab12345678[red"
	const markerStart = "http://u:b%5Bred@m.example/v3/key0123456789"
	const markerEnd = "http://u:ted%5Dzz@m.example/v3/key0123456789"
	for _, tt := range []struct {
		name string
		url  string
		text string
		want string
	}{
		{"a one-letter password cuts no marker", oneLetter,
			"bad key k3y0123456789abc", "ba[redacted] key [redacted]"},
		{"a marker alone stays whole beside a one-letter password", oneLetter,
			"[redacted]", "[redacted]"},
		{"a password that begins with the marker is redacted", markerPassword,
			"pw [redacted]hunter2 refused", "pw [redacted] refused"},
		{"a password that begins with the marker is redacted escaped", markerPassword,
			"pw %5Bredacted%5Dhunter2 refused", "pw [redacted] refused"},
		{"a path part that ends in the marker's start is redacted before a marker", markerPath,
			"GET ab12345678[redacted] failed", "GET [redacted] failed"},
		{"a path part that ends in the marker's start is redacted", markerPath,
			"GET ab12345678[red failed", "GET [redacted] failed"},
		{"a password that ends with the marker's start is redacted once a marker completes it",
			markerStart, "abkey0123456789", "a[redacted]"},
		{"a password that begins with the marker's end is redacted once a marker completes it",
			markerEnd, "key0123456789zzy", "[redacted]y"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := redact.New([]string{tt.url})
			got := r.Message(tt.text)
			if got != tt.want {
				t.Errorf("Message(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if again := r.Message(got); again != got {
				t.Errorf("Message(%q) = %q, want it as it is: a second pass changes nothing", got, again)
			}
			assertNoSecret(t, "Message", got, secretForms{keyed: []string{"b[red", "ted]zz"}})
		})
	}
}

// Stretches that overlap or touch, in either reading or across them,
// become one "[redacted]"; stretches apart stay apart.
func TestOverlappingAndAdjacentStretchesMerge(t *testing.T) {
	r := redact.New([]string{"http://a.example/v3/abcdefgh12", "http://b.example/v3/gh12345678"})
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{"two secrets that overlap are one stretch", "x abcdefgh12345678 y", "x [redacted] y"},
		{"two secrets that touch are one stretch", "x abcdefgh12gh12345678 y", "x [redacted] y"},
		{"two secrets a byte apart are two stretches", "x abcdefgh12-gh12345678 y",
			"x [redacted]-[redacted] y"},
		{"a secret as written and one decoded that overlap are one stretch",
			"x abcdefgh12%33%34%35%36%37%38 y", "x [redacted] y"},
		{"a secret repeated is one stretch", "x abcdefgh12abcdefgh12abcdefgh12 y", "x [redacted] y"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Message(tt.text); got != tt.want {
				t.Errorf("Message(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// A nil Redactor, or one of no URL, knows no secret: Message leaves text as
// it is, and Outside still puts it in the alphabet and clips it.
func TestRedactorOfNoURLRedactsNothing(t *testing.T) {
	long := strings.Repeat("x", 400)
	for _, r := range []struct {
		name string
		r    *redact.Redactor
	}{{"a nil Redactor", nil}, {"a Redactor of no URL", redact.New(nil)}} {
		t.Run(r.name+" leaves a message as it is", func(t *testing.T) {
			text := "key " + infuraKey + " \n<b>"
			if got := r.r.Message(text); got != text {
				t.Errorf("Message(%q) = %q, want it as it is", text, got)
			}
		})
		t.Run(r.name+" puts outside text in the alphabet", func(t *testing.T) {
			text := "key " + infuraKey + " <b>"
			want := "key " + infuraKey + " ?b?"
			if got := r.r.Outside(text, redact.ErrorLimit); got != want {
				t.Errorf("Outside(%q) = %q, want %q", text, got, want)
			}
		})
		t.Run(r.name+" clips outside text", func(t *testing.T) {
			if got := r.r.Outside(long, redact.ErrorLimit); got != long[:300]+"..." {
				t.Errorf("Outside of 400 bytes = %q, want 300 bytes and dots", got)
			}
		})
	}
}

// New takes secrets of any size: a key of 4.25 MB is redacted whole, beside
// a thousand endpoints.
func TestNewTakesSecretsOfAnySize(t *testing.T) {
	var urls []string
	for i := range 1000 {
		urls = append(urls, fmt.Sprintf("http://n%d.example/v3/%s", i, hexKey(i, 256)))
	}
	huge := hexKey(1000, 4_250_000)
	urls = append(urls, "http://huge.example/v3/"+huge)
	r := redact.New(urls)
	for _, tt := range []struct {
		key   string
		shown string // what Outside shows
	}{
		{hexKey(0, 256), "key [redacted] rejected"},
		{hexKey(999, 256), "key [redacted] rejected"},
		{huge, "key [redacted]..."}, // what follows the key is past the limit
	} {
		text := "key " + tt.key + " rejected"
		if got := r.Message(text); got != "key [redacted] rejected" {
			t.Errorf("Message of a key of %d bytes = %.40q..., want it redacted", len(tt.key), got)
		}
		if got := r.Outside(text, redact.ErrorLimit); got != tt.shown {
			t.Errorf("Outside of a key of %d bytes = %.40q..., want %q", len(tt.key), got, tt.shown)
		}
	}
}

// keyedURLs returns n URLs of Infura's shape, each with a key of size bytes.
func keyedURLs(n, size int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://n%d.example/v3/%s", i, hexKey(i, size))
	}
	return urls
}

// BenchmarkOutside shows a 401 body that echoes a key, at 10 and 1,000
// endpoints: its cost must not grow with their number.
func BenchmarkOutside(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("%d endpoints", n), func(b *testing.B) {
			r := redact.New(keyedURLs(n, 32))
			text := `401 Unauthorized: {"error":{"message":"invalid project id ` + hexKey(n/2, 32) +
				`"}} ` + strings.Repeat("padding ", 40)
			for b.Loop() {
				r.Outside(text, redact.ErrorLimit)
			}
		})
	}
}
