package blocklag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"syscall"
	"testing"
)

// A Base's error is never kept: the ProbeError keeps, through stand-ins,
// what callers ask of it with errors.Is and errors.As (the context errors,
// the deadline and end-of-file errors, the system's error number, whether a
// net.Error timed out, also when an As method offers them), while none of
// the Base's own errors, what its As method offers, its Format method or a
// text that changes later can show through it. Which Reason each stand-in
// gives is pinned in errors_test.go.
func TestBaseErrorIsKeptOnlyThroughStandIns(t *testing.T) {
	changing := &changingError{text: "connection failed"}
	secretURL := withSecrets("http://rpc.example")
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name     string
		err      error // wrapped by the Base in text that quotes the URL
		is       error // errors.Is must find it; nil for none
		netError bool  // errors.As must find a net.Error
		timeout  bool  // and its Timeout must be this
	}{
		{name: "context.Canceled", err: context.Canceled, is: context.Canceled},
		{name: "context.DeadlineExceeded", err: context.DeadlineExceeded, is: context.DeadlineExceeded,
			netError: true, timeout: true},
		{name: "os.ErrDeadlineExceeded", err: os.ErrDeadlineExceeded, is: os.ErrDeadlineExceeded,
			netError: true, timeout: true},
		{name: "io.ErrUnexpectedEOF", err: io.ErrUnexpectedEOF, is: io.ErrUnexpectedEOF},
		{name: "io.EOF", err: io.EOF, is: io.EOF},
		{name: "a syscall.Errno", err: reset, is: syscall.ECONNRESET, netError: true},
		{name: "a net.Error that timed out", err: fakeNetError{timeout: true}, netError: true, timeout: true},
		{name: "a net.Error that did not time out", err: fakeNetError{}, netError: true},
		{name: "a net.Error that an As method gives", err: asOnly{fakeNetError{timeout: true}},
			netError: true, timeout: true},
		{name: "a syscall.Errno that an As method gives", err: asOnly{syscall.ECONNRESET},
			is: syscall.ECONNRESET, netError: true},
		{name: "a *url.Error quoting the URL that an As method gives",
			err: asOnly{&url.Error{Op: "Post", URL: secretURL, Err: errors.New("refused")}}, netError: true},
		{name: "an error whose Format method prints the URL", err: &changingError{text: "connection failed"}},
		{name: "an error whose text changes after Check returns", err: changing},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is kept by its stand-ins alone", func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("%s failed: %w", r.URL, tt.err)
			})
			pe, _ := probeOne(t, Config{Endpoints: named("a", secretURL), Base: base})
			before := pe.Error()
			changing.text = "now at " + secretURL
			if pe.Error() != before {
				t.Errorf("message changed from %q to %q after Check returned", before, pe)
			}
			assertShowsNone(t, pe)
			if tt.is != nil && !errors.Is(pe, tt.is) {
				t.Errorf("errors.Is(%q, %v) = false, want true", pe, tt.is)
			}
			var ne net.Error
			if got := errors.As(pe, &ne); got != tt.netError || (got && ne.Timeout() != tt.timeout) {
				t.Errorf("error %q: a net.Error found %v, want %v with Timeout %v",
					pe, got, tt.netError, tt.timeout)
			}
			if tt.is == nil && errors.Is(pe, tt.err) {
				t.Errorf("errors.Is finds the Base's own error in %q", pe)
			}
			baseOwn := errors.As(pe, new(*net.OpError)) ||
				errors.As(pe, new(fakeNetError)) ||
				errors.As(pe, new(*url.Error))
			if baseOwn {
				t.Errorf("errors.As finds one of the Base's own errors in %q", pe)
			}
		})
	}
}

// changingError's text is whatever its field holds when asked; formatted
// with %+v, it prints the URL it failed on.
type changingError struct{ text string }

func (e *changingError) Error() string { return e.text }

func (e *changingError) Format(f fmt.State, verb rune) {
	if f.Flag('+') {
		io.WriteString(f, "connection to http://rpc.example/v3/key1SECRET failed")
		return
	}
	io.WriteString(f, e.Error())
}

// asOnly is a Base's error that is none of the errors it stands for but
// offers its inner one, through its As method, to any target it fits.
type asOnly struct{ inner error }

func (e asOnly) Error() string { return "wrapped on http://rpc.example/v3/path1SECRET" }

func (e asOnly) As(target any) bool {
	v := reflect.ValueOf(target).Elem()
	fits := reflect.TypeOf(e.inner).AssignableTo(v.Type())
	if fits {
		v.Set(reflect.ValueOf(e.inner))
	}
	return fits
}
