package failnext

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// RoundTrip sends req to its candidates in turn until one gives an answer to
// return, and reports what happens to Config.OnEvent.
//
// The candidates are the endpoints Eligible accepts, in configured order,
// with a preferred endpoint (see WithPreferredEndpoint) moved to the front.
// Whether the request may fail over is decided once, before the candidates
// are worked out (see WithFailoverAllowed and Config.PermissionPolicy).
// Each attempt sends a clone of req to the endpoint's URL, which replaces the
// request's URL entirely; Host follows the new URL only when it equalled the
// original URL's host, and RequestURI is cleared.
//
// An attempt fails over only when it ended with a transport error or a
// trigger status, the request may fail over, a later candidate that is not
// cooling down exists, and the body can be sent again: it is nil or
// http.NoBody, or GetBody gives a fresh copy. Any other response is returned
// at once, whatever its status; its body is not read. A trigger response is
// kept while later candidates are tried, and returned if no newer response
// arrives; a newer one replaces it and the older one is closed.
//
// Errors: a nil request gives an error; ErrNoUsableEndpoint when no
// candidate can be tried; an error wrapping ErrUnknownEndpoint for an
// unknown preferred ID; the context's own error, unwrapped, when the
// request's context is done on entry or at any check after that; otherwise,
// when there is no response to return, a *FailoverError.
//
// The body of req passes to Base with the first attempt, and Base must close
// it. If RoundTrip returns before that, it closes the body itself. Every
// response RoundTrip does not return, it closes.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errNilRequest
	}
	c := &call{t: t, req: req, ctx: req.Context(), unsent: req.Body}
	defer c.release()
	resp, from, err := c.run()
	if err != nil {
		t.emit(c.ctx, Event{Kind: EventResult, Err: err})
		return nil, err
	}
	t.emit(c.ctx, Event{Kind: EventResult, Endpoint: from, StatusCode: resp.StatusCode})
	c.final = nil // the caller owns it from here on
	return resp, nil
}

// call is the state of one RoundTrip. It belongs to the goroutine running
// that RoundTrip and is never shared. Its body and response fields are what
// the call still owns: release closes whatever is left in them, which also
// covers a panic in OnEvent.
type call struct {
	t   *Transport
	req *http.Request
	ctx context.Context

	unsent  io.ReadCloser  // a body not yet handed to Base: req.Body, then each replayed copy
	current *http.Response // the last attempt's response, until it is kept or chosen
	kept    *http.Response // the newest trigger response, returned if nothing newer comes
	final   *http.Response // the response to return, until the EventResult callback is done
}

// release closes what the call still owns.
func (c *call) release() {
	if c.unsent != nil {
		c.unsent.Close()
	}
	closeResponse(c.current)
	closeResponse(c.kept)
	closeResponse(c.final)
}

// run carries out the request. On success it returns c.final together with
// the endpoint that produced it.
func (c *call) run() (*http.Response, EndpointID, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, "", err
	}
	mayFailOver := c.t.mayFailOver(c.req)
	cands, err := c.t.candidates(c.ctx)
	if err != nil {
		return nil, "", err
	}
	i, err := c.nextUsable(cands, 0)
	if err != nil {
		return nil, "", err
	}
	if i < 0 {
		return nil, "", ErrNoUsableEndpoint
	}

	var (
		failed   []AttemptError // attempts that ended with an error, in order
		cause    error          // what ended the request if nothing is returned
		keptFrom EndpointID     // the endpoint that produced c.kept
	)
	for n := 1; ; n++ {
		ep := cands[i]
		if err := c.ctx.Err(); err != nil {
			return nil, "", err
		}
		resp, err := c.attempt(ep)
		c.current = resp
		c.t.emit(c.ctx, Event{
			Kind:       EventAttempt,
			Endpoint:   ep.id,
			Attempt:    n,
			StatusCode: statusOf(resp),
			Err:        err,
		})
		if err := c.ctx.Err(); err != nil {
			return nil, "", err
		}
		c.t.record(ep.index, qualifiesAsFailure(resp, err))

		if err == nil && !c.t.isTrigger(resp.StatusCode) {
			if err := c.ctx.Err(); err != nil {
				return nil, "", err
			}
			c.final, c.current = resp, nil
			return resp, ep.id, nil
		}
		if resp != nil {
			closeResponse(c.kept)
			c.kept, keptFrom, c.current = resp, ep.id, nil
		} else {
			failed = append(failed, AttemptError{Endpoint: ep.id, Err: err})
			cause = err
		}

		if !mayFailOver || i+1 == len(cands) {
			break
		}
		next, err := c.nextUsable(cands, i+1)
		if err != nil {
			return nil, "", err
		}
		if next < 0 {
			break
		}
		replayable, err := c.replayBody()
		if err != nil {
			c.t.emit(c.ctx, Event{Kind: EventReplayError, Endpoint: cands[next].id, Err: err})
			cause = err
			break
		}
		if !replayable {
			break
		}
		i = next
	}

	if err := c.ctx.Err(); err != nil {
		return nil, "", err
	}
	if c.kept != nil {
		c.final, c.kept = c.kept, nil
		return c.final, keptFrom, nil
	}
	return nil, "", &FailoverError{Attempts: failed, cause: cause}
}

// nextUsable returns the index of the first candidate at or after from that
// is not cooling down, or -1 if there is none. It reports each cooling
// candidate it passes over, and stops with the context's error if the
// context is done after such a report.
func (c *call) nextUsable(cands []endpoint, from int) (int, error) {
	for j := from; j < len(cands); j++ {
		if !c.t.cooling(cands[j].index) {
			return j, nil
		}
		c.t.emit(c.ctx, Event{Kind: EventCooldownSkip, Endpoint: cands[j].id})
		if err := c.ctx.Err(); err != nil {
			return -1, err
		}
	}
	return -1, nil
}

// attempt hands c.unsent to Base in a request for ep and returns the
// outcome in normal form: either a response or an error, never both and
// never neither.
func (c *call) attempt(ep endpoint) (*http.Response, error) {
	out := redirect(c.req, ep.url, c.unsent)
	c.unsent = nil // Base owns it now, whatever happens
	resp, err := c.t.base.RoundTrip(out)
	switch {
	case err != nil:
		closeResponse(resp)
		return nil, err
	case resp == nil:
		return nil, nilResponseError(ep.raw)
	}
	return resp, nil
}

// replayBody prepares the body of the next attempt in c.unsent. It reports
// false when the body cannot be produced again because GetBody is missing,
// and returns GetBody's error when GetBody fails.
func (c *call) replayBody() (bool, error) {
	body := c.req.Body
	if body == nil || body == http.NoBody {
		c.unsent = body
		return true, nil
	}
	if c.req.GetBody == nil {
		return false, nil
	}
	fresh, err := c.req.GetBody()
	if err != nil {
		if fresh != nil {
			fresh.Close()
		}
		return false, err
	}
	c.unsent = fresh
	return true, nil
}

// redirect returns a clone of req addressed to dest and carrying body. Host
// follows dest only when it named the original URL's host; an empty Host
// stays empty and any other Host is kept.
func redirect(req *http.Request, dest *url.URL, body io.ReadCloser) *http.Request {
	out := req.Clone(req.Context())
	u := *dest
	out.URL = &u
	if req.Host != "" && req.URL != nil && req.Host == req.URL.Host {
		out.Host = dest.Host
	}
	out.Body = body
	out.RequestURI = ""
	return out
}

// isTrigger reports whether a response with this status may fail over: 502,
// 503, 504 or one of the additional trigger codes.
func (t *Transport) isTrigger(status int) bool {
	return builtinTrigger(status) || t.triggers[status]
}

// builtinTrigger reports whether status is one of the trigger codes that are
// always in force.
func builtinTrigger(status int) bool {
	return status == http.StatusBadGateway ||
		status == http.StatusServiceUnavailable ||
		status == http.StatusGatewayTimeout
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func closeResponse(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}
