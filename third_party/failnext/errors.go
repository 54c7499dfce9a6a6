package failnext

import (
	"errors"
	"fmt"
)

// ErrNoUsableEndpoint is returned by RoundTrip when no endpoint can be tried
// for a request: Eligible rejected them all, or every one it accepted is
// cooling down. Nothing is sent in that case.
var ErrNoUsableEndpoint = errors.New("failnext: no usable endpoint")

// ErrUnknownEndpoint is wrapped by the error RoundTrip returns when a request
// prefers, through WithPreferredEndpoint, an ID that is not configured. That
// error names the ID; test for it with errors.Is.
var ErrUnknownEndpoint = errors.New("failnext: unknown endpoint")

// errNilRequest is returned by RoundTrip for a nil request.
var errNilRequest = errors.New("failnext: nil request")

// nilResponseError is the attempt error that stands for a Base that returned
// neither a response nor an error. It names the endpoint's URL as configured.
func nilResponseError(rawURL string) error {
	return fmt.Errorf("failnext: upstream %s returned nil response", rawURL)
}

// AttemptError records one attempt that ended without a response.
type AttemptError struct {
	Endpoint EndpointID
	Err      error
}

// FailoverError is the error RoundTrip returns when a request ends with no
// response to return, even after a single attempt. Attempts lists, in order,
// the attempts that ended with an error; an attempt that got a trigger status
// is not among them, since its response would have been returned. Unwrap
// gives the cause that ended the request: the error of the last attempt, or
// the error from Request.GetBody when the body could not be produced again.
type FailoverError struct {
	Attempts []AttemptError

	cause error
}

// Error reports the number of failed attempts and the cause. It is safe to
// call on a nil *FailoverError.
func (e *FailoverError) Error() string {
	const prefix = "failnext: failover failed without HTTP response"
	switch {
	case e == nil:
		return prefix
	case e.cause == nil:
		return fmt.Sprintf("%s (attempts=%d)", prefix, len(e.Attempts))
	default:
		return fmt.Sprintf("%s (attempts=%d): %v", prefix, len(e.Attempts), e.cause)
	}
}

// Unwrap returns the cause that ended the request, or nil on a nil
// *FailoverError.
func (e *FailoverError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.cause
}
