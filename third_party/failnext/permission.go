package failnext

import (
	"context"
	"net/http"
)

// Permission is a PermissionPolicy's answer about one request.
type Permission uint8

// The answers a PermissionPolicy can give. A value other than these three
// denies failover.
const (
	// PermissionDefer leaves the decision to the method rule: only GET and
	// HEAD may fail over. It is the zero value.
	PermissionDefer Permission = iota
	// PermissionAllow lets the request fail over.
	PermissionAllow
	// PermissionDeny keeps the request from failing over.
	PermissionDeny
)

// permissionKey is the context key of the mark set by WithFailoverAllowed
// and WithFailoverDenied; the value is a bool, true for allowed.
type permissionKey struct{}

// WithFailoverAllowed returns a copy of ctx that lets a request made with it
// fail over, whatever its method and whatever the PermissionPolicy says. Of
// WithFailoverAllowed and WithFailoverDenied, the one applied last (on the
// innermost context) wins.
//
// Permission is one condition among several: failover still needs an attempt
// that failed or got a trigger status, a later candidate that is not cooling
// down, and a body that can be sent again.
func WithFailoverAllowed(ctx context.Context) context.Context {
	return context.WithValue(ctx, permissionKey{}, true)
}

// WithFailoverDenied returns a copy of ctx that keeps a request made with it
// on the first endpoint it is sent to, whatever its method and whatever the
// PermissionPolicy says. Of WithFailoverAllowed and WithFailoverDenied, the
// one applied last (on the innermost context) wins.
func WithFailoverDenied(ctx context.Context) context.Context {
	return context.WithValue(ctx, permissionKey{}, false)
}

// mayFailOver decides, once per request, whether req may fail over. The
// first rule that answers wins: a mark on the request's context; then the
// policy, if any (PermissionDefer goes on, an unknown value denies); then
// the method, which must be exactly "GET" or "HEAD".
func (t *Transport) mayFailOver(req *http.Request) bool {
	if allowed, ok := req.Context().Value(permissionKey{}).(bool); ok {
		return allowed
	}
	if t.policy != nil {
		switch t.policy(req) {
		case PermissionAllow:
			return true
		case PermissionDefer:
			// Decided by the method below.
		default:
			return false
		}
	}
	return req.Method == http.MethodGet || req.Method == http.MethodHead
}
