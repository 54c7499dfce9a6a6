package failnext

import (
	"context"
	"fmt"
)

// preferredKey is the context key of the ID set by WithPreferredEndpoint.
type preferredKey struct{}

// WithPreferredEndpoint returns a copy of ctx that asks for a request made
// with it to try the endpoint id first. The innermost call wins.
//
// The preference only reorders the candidates: the others follow in their
// configured order, and failover goes on through them as usual. It does not
// make a cooling endpoint usable and does not change the permission. If the
// ID is configured but Eligible rejects it, the preference is ignored; if the
// ID is not configured (the empty ID never is), RoundTrip fails with an
// error that wraps ErrUnknownEndpoint and sends nothing.
func WithPreferredEndpoint(ctx context.Context, id EndpointID) context.Context {
	return context.WithValue(ctx, preferredKey{}, id)
}

// candidates returns the endpoints a request may use, in the order it will
// consider them. It calls Eligible once for every configured endpoint, in
// configured order, before looking at the preference in ctx.
func (t *Transport) candidates(ctx context.Context) ([]endpoint, error) {
	out := make([]endpoint, 0, len(t.endpoints))
	for _, ep := range t.endpoints {
		if t.eligible == nil || t.eligible(ep.id) {
			out = append(out, ep)
		}
	}
	id, ok := ctx.Value(preferredKey{}).(EndpointID)
	if !ok {
		return out, nil
	}
	if !t.configured(id) {
		return nil, fmt.Errorf("%w %q", ErrUnknownEndpoint, id)
	}
	for i, ep := range out {
		if ep.id == id {
			copy(out[1:i+1], out[:i])
			out[0] = ep
			break
		}
	}
	return out, nil
}

// configured reports whether id names one of the Transport's endpoints.
func (t *Transport) configured(id EndpointID) bool {
	for _, ep := range t.endpoints {
		if ep.id == id {
			return true
		}
	}
	return false
}
