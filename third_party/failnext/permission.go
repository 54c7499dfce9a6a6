package failnext

import (
	"context"
	"net/http"
)

// permissionKey is the context key under which WithFailoverAllowed and
// WithFailoverDenied store their decision.
type permissionKey struct{}

// WithFailoverAllowed returns a copy of ctx that lets a request made with it
// fail over to the next endpoint, whatever its method. The innermost of
// WithFailoverAllowed and WithFailoverDenied on a context wins.
func WithFailoverAllowed(ctx context.Context) context.Context {
	return context.WithValue(ctx, permissionKey{}, true)
}

// WithFailoverDenied returns a copy of ctx that keeps a request made with it
// on the first endpoint it is sent to, whatever its method.
func WithFailoverDenied(ctx context.Context) context.Context {
	return context.WithValue(ctx, permissionKey{}, false)
}

// mayFailOver reports whether req may be sent again to another endpoint.
// Without an explicit decision only GET and HEAD, which are safe to repeat,
// may fail over.
func mayFailOver(req *http.Request) bool {
	if allowed, ok := req.Context().Value(permissionKey{}).(bool); ok {
		return allowed
	}
	return req.Method == http.MethodGet || req.Method == http.MethodHead
}
