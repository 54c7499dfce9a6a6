package blocklag

import "github.com/yermakovsa/failnext-blocklag/internal/redact"

// Redact returns err with its text shown as a [ProbeError] shows a transport
// error: every endpoint's secrets redacted, in the alphabet, clipped to 300
// bytes. Pass the errors of the application's reads through it before they
// are logged: a provider may echo its key in an answer, and go-ethereum's
// errors print the answer's body. The result unwraps only to stand-ins for
// the standard errors in err's chain, such as [context.DeadlineExceeded].
// Redact returns nil for nil, and on a Monitor not made by [New] redacts
// no secret. When err's Error method panics, as a typed nil pointer's may,
// its text is what fmt prints for it.
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
