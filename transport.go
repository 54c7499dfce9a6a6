package blocklag

import (
	"context"
	"io"
	"net"
	"os"
)

// transportError turns an error from Config.Base, or from reading a body, into
// one safe to show that stays as it is: err's text is read once, as outside
// text, and the result unwraps only to standIns, never to err.
func transportError(err error, s *matcher) error {
	text := s.maskAndClip(err.Error(), maxTransportText)
	// Masked again with its quotes, which may complete a secret that begins
	// or ends with a quote.
	return &redactedError{msg: s.mask(`"` + text + `"`), inner: standIns(err)}
}

// maxTransportText is how many bytes a message gives a transport error's text:
// net/http's explanation comes before any answer bytes it cites.
const maxTransportText = 300

// redactedError is a transport error reduced to its shown text and its stand-ins.
type redactedError struct {
	msg   string
	inner []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.inner }

// maxChain bounds the walk of a transport error's chain, in errors looked at
// and errors waiting, so that one unwrapping to itself, to an endless chain or
// to a hundred thousand errors costs no more than a real one.
const maxChain = 64

// standIns returns, in values that keep nothing of err, what errors.Is and
// errors.As may ask of it: each sentinel its chain matches, its first
// syscall.Errno, and whether its first net.Error is a timeout.
func standIns(err error) []error {
	sentinels := []error{
		context.Canceled,
		context.DeadlineExceeded,
		os.ErrDeadlineExceeded,
		io.ErrUnexpectedEOF,
		io.EOF,
	}
	var found []error
	var errno error
	var ne net.Error
	pending := []error{err} // a stack: the next error to look at is last
	for seen := 0; len(pending) > 0 && seen < maxChain; seen++ {
		e := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if e == nil {
			continue
		}
		for i, std := range sentinels {
			if std != nil && matches(e, std) {
				found = append(found, std)
				sentinels[i] = nil
			}
		}
		if errno == nil {
			errno = errnoOf(e)
		}
		if ne == nil {
			ne, _ = asItself[net.Error](e)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			pending = append(pending, u.Unwrap())
		case interface{ Unwrap() []error }:
			inner := u.Unwrap()
			inner = inner[:min(len(inner), maxChain-len(pending))]
			for i := len(inner) - 1; i >= 0; i-- {
				pending = append(pending, inner[i])
			}
		}
	}
	if errno != nil {
		found = append(found, errno)
	}
	if ne != nil {
		found = append(found, netError{timeout: ne.Timeout()})
	}
	return found
}

// matches reports whether e itself, not its chain, is target as errors.Is sees
// it; every target is a comparable sentinel.
func matches(e, target error) bool {
	is, ok := e.(interface{ Is(error) bool })
	return e == target || ok && is.Is(target)
}

// asItself returns e as a T, as errors.As would find it in e itself, not in its
// chain: e is a T, or says so through an As method.
func asItself[T any](e error) (T, bool) {
	if t, ok := e.(T); ok {
		return t, true
	}
	var t T
	if as, ok := e.(interface{ As(any) bool }); ok && as.As(&t) {
		return t, true
	}
	return *new(T), false
}

// netError stands in for a net.Error from a transport error's chain, keeping
// only whether it was a timeout.
type netError struct{ timeout bool }

func (e netError) Error() string   { return "network error" }
func (e netError) Timeout() bool   { return e.timeout }
func (e netError) Temporary() bool { return false } // as net/http's own errors say
