package failnext

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// EndpointID names an endpoint. New requires IDs to be non-empty and unique
// within a Config.
type EndpointID string

// Endpoint is one destination. URL is the complete address every attempt on
// this endpoint goes to: it replaces the request's URL, path and query
// included, and is never joined with it.
type Endpoint struct {
	ID  EndpointID
	URL string
}

// Config configures a Transport. New reads it once; later changes to it, or
// to the slices it holds, do not affect the Transport.
type Config struct {
	// Endpoints lists the destinations in priority order. It must not be
	// empty. Each URL must be an absolute http or https URL with a host and
	// without a '#'.
	Endpoints []Endpoint

	// Base sends each attempt. Nil means the value of http.DefaultTransport
	// when New runs.
	Base http.RoundTripper

	// PermissionPolicy decides, for requests whose context carries no
	// WithFailoverAllowed or WithFailoverDenied mark, whether they may fail
	// over. It is called at most once per request, with the caller's
	// request, before Eligible. Nil means every request defers to the method
	// rule (GET and HEAD only).
	PermissionPolicy func(*http.Request) Permission

	// Eligible, when not nil, is called once per configured endpoint, in
	// configured order, at the start of each request and before its first
	// attempt. Endpoints it rejects are left out of that whole request.
	Eligible func(EndpointID) bool

	// Cooldown controls how endpoints that keep failing are left out for a
	// while. The zero value turns it on with the defaults.
	Cooldown CooldownConfig

	// AdditionalTriggerStatusCodes adds status codes, each in 100..999, that
	// cause failover like 502, 503 and 504 do. Unlike those three they do not
	// count as failures for the cooldown.
	AdditionalTriggerStatusCodes []int

	// OnEvent, when not nil, is told what happens during each request. It is
	// called synchronously on the goroutine running RoundTrip, with the
	// request's context; calls for one request never overlap, but calls for
	// different requests may. A panic in it is not recovered.
	OnEvent func(context.Context, Event)
}

// CooldownConfig controls the cooldown. A zero Threshold means 3 and a zero
// Duration means 30 seconds. Disabled turns the cooldown off and must then be
// the only field set; negative values are always rejected.
type CooldownConfig struct {
	// Disabled turns the cooldown off: no failures are counted and no
	// endpoint is ever skipped for cooling down.
	Disabled bool

	// Threshold is how many failures in a row put an endpoint into cooldown.
	Threshold int

	// Duration is how long an endpoint stays in cooldown.
	Duration time.Duration
}

const (
	defaultCooldownThreshold = 3
	defaultCooldownDuration  = 30 * time.Second
)

// New checks cfg and returns a Transport built from a copy of it.
//
// The checks run in this order and the first one that fails decides the
// error: at least one endpoint; then, endpoint by endpoint, a non-empty ID,
// an ID not used by an earlier endpoint, and a URL that url.Parse accepts,
// that is absolute, has the scheme http or https (in any case), has a host
// and contains no '#'; then the Cooldown fields; then the additional
// trigger codes. Base, PermissionPolicy, Eligible and OnEvent are not
// checked. Every error message starts with "failnext: ", and a URL that
// url.Parse rejects gives an error that wraps the *url.Error.
func New(cfg Config) (*Transport, error) {
	endpoints, err := checkEndpoints(cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	cd, err := checkCooldown(cfg.Cooldown)
	if err != nil {
		return nil, err
	}
	triggers, err := checkTriggerCodes(cfg.AdditionalTriggerStatusCodes)
	if err != nil {
		return nil, err
	}
	base := cfg.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{
		endpoints: endpoints,
		base:      base,
		policy:    cfg.PermissionPolicy,
		eligible:  cfg.Eligible,
		onEvent:   cfg.OnEvent,
		triggers:  triggers,
		cooldown:  cd,
		now:       time.Now,
		health:    make([]health, len(endpoints)),
	}, nil
}

// checkEndpoints validates the endpoints in index order and returns them
// with their URLs parsed.
func checkEndpoints(eps []Endpoint) ([]endpoint, error) {
	if len(eps) == 0 {
		return nil, errors.New("failnext: no endpoints")
	}
	seen := make(map[EndpointID]bool, len(eps))
	out := make([]endpoint, 0, len(eps))
	for i, ep := range eps {
		if ep.ID == "" {
			return nil, fmt.Errorf("failnext: invalid endpoint at index %d: empty id", i)
		}
		if seen[ep.ID] {
			return nil, fmt.Errorf("failnext: duplicate endpoint id %q", ep.ID)
		}
		seen[ep.ID] = true
		u, err := checkURL(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("failnext: invalid endpoint %q url %q: %w", ep.ID, ep.URL, err)
		}
		out = append(out, endpoint{index: i, id: ep.ID, raw: ep.URL, url: u})
	}
	return out, nil
}

// checkURL applies the URL rules of New. The error it returns is the reason
// alone; the caller adds which endpoint it concerns.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case !u.IsAbs():
		return nil, errors.New("must be absolute")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("unsupported scheme %q", u.Scheme)
	case u.Host == "":
		return nil, errors.New("missing host")
	case strings.Contains(raw, "#"):
		return nil, errors.New("fragments are not allowed")
	}
	return u, nil
}

// checkCooldown validates c and returns the cooldown settings it stands for,
// defaults filled in. Negative values are checked before Disabled.
func checkCooldown(c CooldownConfig) (cooldownSettings, error) {
	switch {
	case c.Threshold < 0:
		return cooldownSettings{}, fmt.Errorf("failnext: invalid Cooldown.Threshold %d", c.Threshold)
	case c.Duration < 0:
		return cooldownSettings{}, fmt.Errorf("failnext: invalid Cooldown.Duration %s", c.Duration)
	case c.Disabled && (c.Threshold != 0 || c.Duration != 0):
		return cooldownSettings{}, errors.New("failnext: invalid Cooldown: " +
			"Disabled cannot be combined with Threshold or Duration")
	case c.Disabled:
		return cooldownSettings{}, nil
	}
	cd := cooldownSettings{enabled: true, threshold: c.Threshold, duration: c.Duration}
	if cd.threshold == 0 {
		cd.threshold = defaultCooldownThreshold
	}
	if cd.duration == 0 {
		cd.duration = defaultCooldownDuration
	}
	return cd, nil
}

// checkTriggerCodes validates the additional trigger codes in index order and
// returns them as a set.
func checkTriggerCodes(codes []int) (map[int]bool, error) {
	set := make(map[int]bool, len(codes))
	for i, code := range codes {
		if code < 100 || code > 999 {
			return nil, fmt.Errorf("failnext: invalid AdditionalTriggerStatusCodes[%d] %d", i, code)
		}
		set[code] = true
	}
	return set, nil
}
