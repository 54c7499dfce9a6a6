// Package failnext is an offline stand-in for github.com/yermakovsa/failnext
// v0.6.0, an http.RoundTripper that sends each request to the first usable
// endpoint of a small ordered set and fails over to the next one on a
// transport error or a 502, 503 or 504 answer.
//
// It implements only the part of the real API that blocklag and its tests
// use, with the same names, signatures and observable behaviour. It is not
// the real module: see README.md for what it leaves out.
package failnext

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// EndpointID names an endpoint. IDs are unique within a Config.
type EndpointID string

// Endpoint is one destination. URL is the complete address that requests are
// sent to; the request's own URL is replaced by it, never joined with it.
type Endpoint struct {
	ID  EndpointID
	URL string
}

// Config configures a Transport.
type Config struct {
	// Endpoints lists the destinations in priority order. New copies it.
	Endpoints []Endpoint

	// Base sends each attempt. Nil means http.DefaultTransport.
	Base http.RoundTripper

	// Eligible, when not nil, is asked once per endpoint at the start of each
	// request, before the first attempt; endpoints it rejects are skipped for
	// that whole request.
	Eligible func(EndpointID) bool
}

// ErrNoUsableEndpoint is returned by RoundTrip when no endpoint is eligible
// for a request. No request is sent in that case.
var ErrNoUsableEndpoint = errors.New("failnext: no usable endpoint")

// AttemptError records why one attempt failed.
type AttemptError struct {
	Endpoint EndpointID
	Err      error
}

// FailoverError is returned by RoundTrip when every attempt failed and no
// response is left to return. Attempts lists the failed attempts in the order
// they were made; Unwrap gives the cause of the last one.
type FailoverError struct {
	Attempts []AttemptError

	cause error
}

func (e *FailoverError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "failnext: %d attempt(s) failed", len(e.Attempts))
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, "; %s: %v", a.Endpoint, a.Err)
	}
	return b.String()
}

// Unwrap returns the cause of the last failed attempt.
func (e *FailoverError) Unwrap() error { return e.cause }

// Transport is an http.RoundTripper over a fixed endpoint set. It is safe for
// concurrent use. Make one with New.
type Transport struct {
	endpoints []target // set by New, read-only afterwards
	base      http.RoundTripper
	eligible  func(EndpointID) bool
}

// target is an endpoint with its URL parsed once by New.
type target struct {
	id  EndpointID
	url *url.URL
}

// New validates cfg and returns a Transport. It fails when there are no
// endpoints, or when an endpoint has an empty or repeated ID or a URL that is
// not an absolute http or https URL with a host and without a fragment.
func New(cfg Config) (*Transport, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("failnext: no endpoints")
	}
	seen := make(map[EndpointID]bool, len(cfg.Endpoints))
	targets := make([]target, 0, len(cfg.Endpoints))
	for i, ep := range cfg.Endpoints {
		if ep.ID == "" {
			return nil, fmt.Errorf("failnext: endpoint %d: empty ID", i)
		}
		if seen[ep.ID] {
			return nil, fmt.Errorf("failnext: endpoint %d: duplicate ID %q", i, ep.ID)
		}
		seen[ep.ID] = true
		u, err := parseURL(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("failnext: endpoint %d (%q): %v", i, ep.ID, err)
		}
		targets = append(targets, target{id: ep.ID, url: u})
	}
	base := cfg.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{endpoints: targets, base: base, eligible: cfg.Eligible}, nil
}

// parseURL checks the rules New enforces. Its errors do not repeat the URL,
// which may hold credentials.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("URL does not parse")
	}
	switch {
	case !u.IsAbs():
		return nil, errors.New("URL is not absolute")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("URL scheme is not http or https")
	case u.Host == "":
		return nil, errors.New("URL has no host")
	case strings.Contains(raw, "#"):
		return nil, errors.New("URL has a fragment")
	}
	return u, nil
}

// CloseIdleConnections closes the idle connections of Base when Base has such
// a method. It is safe to call on a nil Transport.
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return
	}
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
