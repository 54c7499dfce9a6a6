package blocklag

import (
	"context"
	"io"
	"net"
	"os"
)

// maxChain bounds the walk of a transport error's chain, in errors looked at
// and errors waiting, so that one unwrapping to itself, to an endless chain or
// to a hundred thousand errors costs no more than a real one.
const maxChain = 64

// standIns returns, in values that keep nothing of err, what errors.Is and
// errors.As may ask of it: each sentinel its chain matches, its first
// syscall.Errno, and whether its first net.Error is a timeout. A method of
// the chain that panics ends the walk, and what it found before stands.
func standIns(err error) (found []error) {
	sentinels := []error{
		context.Canceled,
		context.DeadlineExceeded,
		os.ErrDeadlineExceeded,
		io.ErrUnexpectedEOF,
		io.EOF,
	}
	var errno error  // the first syscall.Errno, or nil
	var netErr error // a netError for the first net.Error, or nil
	defer func() {
		recover()
		if errno != nil {
			found = append(found, errno)
		}
		if netErr != nil {
			found = append(found, netErr)
		}
	}()
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
		if netErr == nil {
			if ne, ok := asItself[net.Error](e); ok {
				netErr = netError{timeout: ne.Timeout()}
			}
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
	var zero T
	return zero, false
}

// netError stands in for a net.Error from a transport error's chain, keeping
// only whether it was a timeout.
type netError struct{ timeout bool }

func (e netError) Error() string   { return "network error" }
func (e netError) Timeout() bool   { return e.timeout }
func (e netError) Temporary() bool { return false } // as net/http's own errors say
