package failnext

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Transport is an http.RoundTripper over the fixed endpoint set of the
// Config it was built from. Make one with New; a Transport is meant to be
// shared, and its methods may be called from many goroutines at once.
//
// All requests on one Transport share its cooldown state; separate
// Transports share nothing.
type Transport struct {
	// Set by New and only read afterwards, by any goroutine.
	endpoints []endpoint // in configured order
	base      http.RoundTripper
	policy    func(*http.Request) Permission
	eligible  func(EndpointID) bool
	onEvent   func(context.Context, Event)
	triggers  map[int]bool // the additional trigger codes only
	cooldown  cooldownSettings

	// now is the cooldown's clock. New sets it to time.Now; the package's
	// own tests replace it before the Transport serves any request, and it
	// is only read after that, and only while cooldown is enabled (never on
	// a zero Transport, where it is nil).
	now func() time.Time

	// mu guards health.
	mu sync.Mutex
	// health holds one entry per configured endpoint, at the endpoint's
	// index. RoundTrip reads and writes it, from any goroutine, only while
	// holding mu.
	health []health
}

// endpoint is a configured Endpoint with its URL parsed by New.
type endpoint struct {
	index int        // position in Config.Endpoints and in Transport.health
	id    EndpointID // the configured ID
	raw   string     // the URL exactly as configured
	url   *url.URL   // raw, parsed; never modified
}

// CloseIdleConnections calls CloseIdleConnections on the Transport's Base
// when Base has that method; with a nil Config.Base that is the
// http.DefaultTransport captured by New, which other clients share. It does
// nothing on a nil or zero-value Transport.
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return
	}
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
