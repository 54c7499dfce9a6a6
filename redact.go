package blocklag

import "github.com/yermakovsa/failnext-blocklag/internal/redact"

// Redact returns err as a [ProbeError] shows a transport error: its text
// redacted, in the alphabet and clipped to 300 bytes, unwrapping only to
// stand-ins for the standard errors of its chain, such as
// [context.DeadlineExceeded]. Pass a read's error through it before it is
// logged: go-ethereum's errors quote the provider's answer, which may echo
// its key. It returns nil for nil, and takes what fmt prints for an error
// whose Error method panics.
func (m *Monitor) Redact(err error) error {
	if err == nil {
		return nil
	}
	var r *redact.Redactor
	if m != nil {
		r = m.redactor
	}
	text := r.Outside(errorText(err), redact.ErrorLimit)
	return &redactedError{msg: text, inner: standIns(err)}
}
