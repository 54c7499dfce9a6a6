package failnext

import (
	"errors"
	"io"
	"net/http"
	"net/url"
)

// RoundTrip sends req to the first eligible endpoint and, when that attempt
// fails with a transport error or a 502, 503 or 504 answer, to the next one,
// as long as the request may fail over and its body can be replayed.
//
// Any other response is returned as it is. A 502, 503 or 504 answer is kept
// while later endpoints are tried and returned when none of them gives a
// newer response. When nothing is left to return the error is a
// *FailoverError. When the request's context is done, its error is returned.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errors.New("failnext: nil request")
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req.Body)
		return nil, err
	}
	candidates := t.candidates()
	if len(candidates) == 0 {
		closeBody(req.Body)
		return nil, ErrNoUsableEndpoint
	}
	failover := mayFailOver(req)

	var (
		kept     *http.Response // last 502/503/504 answer, returned if nothing newer comes
		attempts []AttemptError
		cause    error
	)
	for i, c := range candidates {
		body := req.Body
		if i > 0 {
			var err error
			if body, err = replayBody(req); err != nil {
				break
			}
		}
		resp, err := t.base.RoundTrip(redirect(req, c.url, body))
		if err == nil && resp == nil {
			err = errors.New("failnext: base transport returned neither response nor error")
		}
		if err != nil && resp != nil {
			resp.Body.Close()
			resp = nil
		}
		if ctx.Err() != nil {
			closeResponse(resp)
			closeResponse(kept)
			return nil, ctx.Err()
		}
		if err == nil && !isTrigger(resp.StatusCode) {
			closeResponse(kept)
			return resp, nil
		}
		if resp != nil {
			closeResponse(kept)
			kept = resp
		} else {
			attempts = append(attempts, AttemptError{Endpoint: c.id, Err: err})
			cause = err
		}
		if !failover {
			break
		}
	}
	if kept != nil {
		return kept, nil
	}
	return nil, &FailoverError{Attempts: attempts, cause: cause}
}

// candidates asks Eligible once per endpoint and returns the eligible ones in
// configured order.
func (t *Transport) candidates() []target {
	if t.eligible == nil {
		return t.endpoints
	}
	out := make([]target, 0, len(t.endpoints))
	for _, ep := range t.endpoints {
		if t.eligible(ep.id) {
			out = append(out, ep)
		}
	}
	return out
}

// replayBody returns a fresh copy of req's body for a later attempt.
func replayBody(req *http.Request) (io.ReadCloser, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req.Body, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("failnext: request body cannot be replayed")
	}
	return req.GetBody()
}

// redirect returns a copy of req addressed to dest. The Host header follows
// dest only when it named the original URL's host; an empty Host stays empty
// and any other Host is kept.
func redirect(req *http.Request, dest *url.URL, body io.ReadCloser) *http.Request {
	out := req.Clone(req.Context())
	u := *dest
	out.URL = &u
	if req.Host != "" && req.Host == req.URL.Host {
		out.Host = dest.Host
	}
	out.Body = body
	out.RequestURI = ""
	return out
}

func isTrigger(status int) bool {
	return status == http.StatusBadGateway ||
		status == http.StatusServiceUnavailable ||
		status == http.StatusGatewayTimeout
}

func closeBody(b io.ReadCloser) {
	if b != nil {
		b.Close()
	}
}

func closeResponse(resp *http.Response) {
	if resp != nil {
		resp.Body.Close()
	}
}
