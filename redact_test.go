package blocklag

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRedactShowsAReadsErrorAsAProbeShowsATransportError pins Redact's text,
// each expected text written out by hand.
func TestRedactShowsAReadsErrorAsAProbeShowsATransportError(t *testing.T) {
	keyed := mustNew(t, Config{Endpoints: named(
		"infura", "https://mainnet.infura.io/v3/"+infuraKey,
		"node", "http://rpcuser:hunter2hunter2@node.example:8545/",
		"escaped", "http://admin:c0ffee%40Home99@escaped.example/",
	)})
	long := strings.Repeat("x", 400)
	for _, tt := range []struct {
		name    string
		monitor *Monitor
		text    string
		want    string
	}{
		{name: "a 401 body that echoes one provider's key shows the marker",
			monitor: keyed,
			text: `401 Unauthorized: {"error":{"message":"invalid project id ` +
				infuraKey + `"}}`,
			want: `401 Unauthorized: {'error':{'message':'invalid project id [redacted]'}}`},
		{name: "another provider's password is redacted too",
			monitor: keyed,
			text:    "auth failed for rpcuser:hunter2hunter2",
			want:    "auth failed for [redacted]"},
		{name: "control characters and runes beyond ASCII show as question marks",
			monitor: keyed,
			text:    "bad\r\nline \u00e9",
			want:    "bad??line ??"},
		{name: "a long text is clipped to 300 bytes",
			monitor: keyed,
			text:    long,
			want:    long[:300] + "..."},
		{name: "a password holding an escape is redacted after a stray percent sign",
			monitor: keyed,
			text:    "password %c0ffee%40Home99 rejected",
			want:    "password %[redacted] rejected"},
		{name: "a nil Monitor puts the text in the alphabet and redacts no secret",
			monitor: nil,
			text:    "key " + infuraKey + " <b>",
			want:    "key " + infuraKey + " ?b?"},
		{name: "a Monitor not made by New redacts no secret",
			monitor: &Monitor{},
			text:    "key " + infuraKey,
			want:    "key " + infuraKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.monitor.Redact(errors.New(tt.text)).Error(); got != tt.want {
				t.Errorf("Redact = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRedactKeepsOnlyTheStandardErrorsOfTheChain pins what the result of
// Redact unwraps to: stand-ins for the standard errors, never err's own chain.
func TestRedactKeepsOnlyTheStandardErrorsOfTheChain(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("infura", "https://mainnet.infura.io/v3/"+infuraKey)})
	read := fmt.Errorf("Post \"https://mainnet.infura.io/v3/%s\": %w", infuraKey, context.DeadlineExceeded)
	redacted := m.Redact(read)
	if !errors.Is(redacted, context.DeadlineExceeded) {
		t.Error("the result does not match context.DeadlineExceeded, which err wrapped")
	}
	if errors.Is(redacted, context.Canceled) {
		t.Error("the result matches context.Canceled, which err did not wrap")
	}
	if errors.Is(redacted, read) {
		t.Error("the result unwraps to err itself")
	}
	assertShowsNone(t, redacted, infuraKey[:8], infuraKey[20:28])
	if m.Redact(nil) != nil {
		t.Error("Redact(nil) is not nil")
	}
}

// panicking is an error whose methods panic on a nil pointer, as a typed
// nil pointer's often do.
type panicking struct{ text string }

func (e *panicking) Error() string { return e.text }

func (e *panicking) Is(target error) bool { return e.text == target.Error() }

// An error whose Error method panics is redacted as fmt prints it, and one
// whose chain holds such an error keeps the stand-ins found before it.
func TestRedactSurvivesAnErrorWhoseMethodsPanic(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("infura", "https://mainnet.infura.io/v3/"+infuraKey)})
	var typedNil *panicking
	got := m.Redact(typedNil)
	// fmt prints "<nil>", whose brackets are outside the alphabet.
	if got == nil || got.Error() != "?nil?" {
		t.Errorf("Redact(a typed nil pointer) = %v, want what fmt prints in the alphabet", got)
	}
	wrapped := fmt.Errorf("read: %w", errors.Join(context.DeadlineExceeded, typedNil))
	got = m.Redact(wrapped)
	if !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("Redact(%v) does not match context.DeadlineExceeded, found before the panic", got)
	}
}
