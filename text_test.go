package blocklag

import (
	"strings"
	"testing"
)

// forged is what a hostile provider would like to see as a line of its own
// in the operator's log.
const forged = "2026/01/01 00:00:00 check: bad=eligible"

// Every part of an answer that an error message can show is tried with a
// newline, a carriage return and an ESC, both raw between JSON tokens and
// escaped inside a JSON string. The ProbeError must still name the endpoint
// and the fault, and hold no control character.
func TestProviderTextCannotForgeLogLines(t *testing.T) {
	// In each body, X is where the provider puts its control character
	// followed by the forged line. In a raw place X goes between JSON
	// tokens; in an escaped place it goes inside a string, JSON-escaped.
	places := []struct {
		name string
		raw  bool
		body string
		want string
	}{
		{"the jsonrpc member, between tokens", true, `{"jsonrpc":["2.0",X"x"],"id":1,"result":"0x1"}`, "jsonrpc member is"},
		{"the jsonrpc member, inside a string", false, `{"jsonrpc":"2.0X","id":1,"result":"0x1"}`, "jsonrpc member is"},
		{"the id, between tokens", true, `{"jsonrpc":"2.0","id":[1,X"x"],"result":"0x1"}`, "answer id is"},
		{"the id, inside a string", false, `{"jsonrpc":"2.0","id":"1X","result":"0x1"}`, "answer id is"},
		{"a non-string result, between tokens", true, `{"jsonrpc":"2.0","id":1,"result":["0x1",X"x"]}`, "is not a string"},
		{"a string result", false, `{"jsonrpc":"2.0","id":1,"result":"0x1X"}`, "not a canonical hex quantity"},
		{"an error without code or message, between tokens", true, `{"jsonrpc":"2.0","id":1,"error":{"data":[X"x"]}}`, "RPC error"},
		{"an error without code, inside a string", false, `{"jsonrpc":"2.0","id":1,"error":{"message":"X"}}`, "RPC error"},
		{"an error message", false, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busyX"}}`, "RPC error -32000"},
		{"a member named twice", false, `{"jsonrpc":"2.0","id":1,"result":"0x1","aX":1,"aX":2}`, "twice"},
	}
	controls := []struct {
		name     string
		raw      string // as sent between tokens
		escaped  string // as written inside a JSON string
		validRaw bool   // JSON allows it raw between tokens
	}{
		{"a newline", "\n", `\n`, true},
		{"a carriage return", "\r", `\r`, true},
		{"an ESC", "\x1b", `\u001b`, false},
	}
	for _, p := range places {
		for _, c := range controls {
			t.Run(p.name+" with "+c.name, func(t *testing.T) {
				inject, want := c.escaped+forged, p.want
				if p.raw {
					inject = c.raw + `"` + forged + `",`
					if !c.validRaw {
						want = "not valid JSON"
					}
				}
				body := strings.Replace(p.body, "X", inject, -1)
				_, err := judge([]byte(body))
				if err == nil {
					t.Fatalf("the answer %q was accepted", body)
				}
				// The message as Check reports it.
				msg := (&ProbeError{Endpoint: "hostile", Err: err}).Error()
				if hasControl(msg) {
					t.Errorf("message %q holds a control character", msg)
				}
				if !strings.Contains(msg, `endpoint "hostile"`) || !strings.Contains(msg, want) {
					t.Errorf("message %q does not name the endpoint and say %q", msg, want)
				}
			})
		}
	}
}

// A value from a provider is shown quoted and clipped, so that one answer
// cannot flood a log, and a character cut in two is not left half shown.
func TestQuote(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"short text is quoted whole", "abc", `"abc"`},
		{"control characters are escaped", "a\nb\rc\x1bd\x7f", `"a\nb\rc\x1bd\x7f"`},
		{"long text is clipped", strings.Repeat("a", maxQuoted+50), `"` + strings.Repeat("a", maxQuoted) + `"...`},
		{"a multi-byte character is not cut", strings.Repeat("a", maxQuoted-1) + "é" + "tail", `"` + strings.Repeat("a", maxQuoted-1) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quote(tt.text); got != tt.want {
				t.Errorf("quote(%q) = %s, want %s", tt.text, got, tt.want)
			}
		})
	}
}

// net/http's own error text can cite bytes of a malformed response; they
// reach the message escaped and clipped.
func TestPrintable(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"plain text is kept", "unexpected EOF", "unexpected EOF"},
		{"control characters are escaped", "malformed header \x1b[2J\r\n" + forged + "\x7f", `malformed header \x1b[2J\x0d\x0a` + forged + `\x7f`},
		{"long text is clipped", strings.Repeat("a", maxTransportText+1), strings.Repeat("a", maxTransportText) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := printable(tt.text); got != tt.want {
				t.Errorf("printable(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
