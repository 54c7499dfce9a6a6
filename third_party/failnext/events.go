package failnext

import "context"

// EventKind says what an Event reports. Zero is not a kind.
type EventKind uint8

// The kinds of Event, in the order their values were assigned.
const (
	// EventAttempt follows every call to Base. Endpoint is the endpoint
	// tried; Attempt counts the calls to Base in this request, from 1;
	// StatusCode is the response's status, or 0 when the attempt ended with
	// an error (a response that came with an error counts as none); Err is
	// that error, or nil.
	EventAttempt EventKind = iota + 1
	// EventCooldownSkip reports that Endpoint was passed over because it is
	// cooling down. Only Endpoint is set.
	EventCooldownSkip
	// EventReplayError reports that the request body could not be produced
	// again for Endpoint, the next endpoint due to be tried, which is then
	// not tried. Err is the error from Request.GetBody.
	EventReplayError
	// EventResult is the last event of every request, sent exactly once
	// just before RoundTrip returns, early exits included. When a response
	// is returned, Endpoint is the endpoint that produced it and StatusCode
	// its status; when an error is returned, Err is that very error and the
	// other fields are zero. Attempt is always 0.
	EventResult
)

// Event is what Config.OnEvent is told. Fields a kind does not mention are
// zero.
type Event struct {
	Kind       EventKind
	Endpoint   EndpointID
	Attempt    int
	StatusCode int
	Err        error
}

// emit hands ev to OnEvent, if set, with the context of the request it
// belongs to.
func (t *Transport) emit(ctx context.Context, ev Event) {
	if t.onEvent != nil {
		t.onEvent(ctx, ev)
	}
}
