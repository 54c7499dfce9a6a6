package blocklag

import (
	"context"
	"io"
	"net"
	"os"
)

// transportError turns an error from Config.Base, or from reading an
// answer's body, into one that is safe to show and that stays as it is.
// err's text is read once, here, and shown as a piece of outside text; the
// result never unwraps to err or to anything in its chain, only to
// stand-ins for the standard errors that chain matched: a Base's error may
// have an As or Format method, or a text that changes later, and any of
// those could show what the message hides.
func transportError(err error, s *secrets) error {
	return &redactedError{msg: `"` + s.piece(err.Error(), maxTransportText) + `"`, inner: standIns(err)}
}

// maxTransportText is how many bytes a message gives a transport error's
// text: more than a provider's value gets, since net/http's own
// explanation comes ahead of any answer bytes it cites.
const maxTransportText = 300

// redactedError is a transport error reduced to its shown text and the
// stand-ins that errors.Is and errors.As still need to tell a timeout, a
// cancellation, a cut-off answer or a refused connection.
type redactedError struct {
	msg   string
	inner []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.inner }

// maxChain bounds the walk of a transport error's chain: at most this many
// errors are looked at, and at most this many wait their turn. Real chains
// are a handful deep; a Base's error that unwraps to itself, to an endless
// chain or to a hundred thousand errors would otherwise stall a Check or
// fill its memory.
const maxChain = 64

// standIns returns what a caller may ask of a transport error with
// errors.Is and errors.As, in values whose text is fixed and that keep no
// reference to err: each standard sentinel that err's chain matches, the
// first syscall.Errno it holds (a number, whose text the system defines),
// and a netError that keeps only whether the chain's first net.Error is a
// timeout. It visits the chain in the order errors.Is does, within
// maxChain.
func standIns(err error) []error {
	sentinels := []error{context.Canceled, context.DeadlineExceeded, os.ErrDeadlineExceeded, io.ErrUnexpectedEOF, io.EOF}
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

// matches reports whether e itself, not its chain, is target as errors.Is
// sees it: equal, or saying so through an Is method. Every target is a
// comparable sentinel, so the comparison cannot panic.
func matches(e, target error) bool {
	if e == target {
		return true
	}
	is, ok := e.(interface{ Is(error) bool })
	return ok && is.Is(target)
}

// asItself returns e as a T, as errors.As would find it in e itself, not
// in its chain: e is a T, or says so through an As method.
func asItself[T any](e error) (T, bool) {
	if t, ok := e.(T); ok {
		return t, true
	}
	var t T
	if as, ok := e.(interface{ As(any) bool }); ok && as.As(&t) {
		return t, true
	}
	var zero T
	return zero, false
}

// netError stands in for a net.Error from a transport error's chain,
// keeping only whether it was a timeout.
type netError struct{ timeout bool }

func (e netError) Error() string {
	if e.timeout {
		return "network timeout"
	}
	return "network error"
}

func (e netError) Timeout() bool { return e.timeout }

// Temporary is part of net.Error; like net/http's own errors, a netError
// says false.
func (e netError) Temporary() bool { return false }
