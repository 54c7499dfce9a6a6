package redact_test

import (
	"testing"

	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// Every byte is shown as the alphabet says, on its own and between others:
// a double quote as an apostrophe, any other byte outside the alphabet as
// one '?'.
func TestEachByteIsShownInTheAlphabet(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		text := "a" + string([]byte{b}) + "z"
		want := "a" + string([]byte{shownAs(b)}) + "z"
		if got := redact.Alphabet(text); got != want {
			t.Errorf("Alphabet(%q) = %q, want %q", text, got, want)
		}
		if got := (*redact.Redactor)(nil).Outside(text, 10); got != want {
			t.Errorf("Outside(%q) = %q, want %q", text, got, want)
		}
	}
}

// Outside text is shown in the alphabet whatever it holds, and putting it
// in the alphabet a second time changes nothing.
func TestOutsideTextIsShownInTheAlphabet(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{"a quote cannot end the quotes early and forge a failure of its own",
			`boom"; endpoint "good": RPC error -32005: "x`,
			`boom'; endpoint 'good': RPC error -32005: 'x`},
		{"a line break and an escape sequence are question marks",
			"a\nb\r\x1b[31mc\x7f", "a?b??[31mc?"},
		{"each byte of a rune beyond ASCII is a question mark",
			"café \u202etxt.exe 日本", "caf?? ???txt.exe ??????"},
		{"invalid bytes are question marks", "a\xff\xfeb", "a??b"},
		{"the characters JSON escapes are question marks", `<a href="x">&amp;\`, `?a href='x'??amp;?`},
		{"text in the alphabet is left as it is", "status 429: slow down (retry in 2s)",
			"status 429: slow down (retry in 2s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Alphabet(tt.text); got != tt.want {
				t.Errorf("Alphabet(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if got := redact.Alphabet(tt.want); got != tt.want {
				t.Errorf("Alphabet(%q) = %q, want it as it is: a second pass changes nothing", tt.want, got)
			}
			if got := redact.New(nil).Outside(tt.text, redact.ValueLimit); got != tt.want {
				t.Errorf("Outside(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// Bytes are put in the alphabet one by one, so that a stray byte before a
// key, which a reading rune by rune would join to the key's first bytes,
// does not hide it.
func TestAStrayByteBeforeAKeyDoesNotHideIt(t *testing.T) {
	const rawKeyURL = "http://node.example/v3/%82%AC0123456789abcdef"
	for _, tt := range []struct {
		name string
		text string
		want string
	}{
		{"a stray \\xE2 before a key that begins with escapes",
			"key \xe2%82%AC0123456789abcdef bad", "key ?[redacted] bad"},
		{"a stray \\xE2 before the key's raw bytes",
			"key \xe2\x82\xac0123456789abcdef bad", "key ?[redacted] bad"},
		{"the key's raw bytes alone", "key \x82\xac0123456789abcdef bad", "key [redacted] bad"},
	} {
		t.Run(tt.name+" shows no key", func(t *testing.T) {
			got := redact.New([]string{rawKeyURL}).Outside(tt.text, redact.ErrorLimit)
			if got != tt.want {
				t.Errorf("Outside(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
