package blocklag

// Redact returns an error that shows err's text as a probe's transport
// error is shown: every endpoint's secrets masked, reduced to the alphabet
// that [ProbeError] states, and clipped to 300 bytes. Use it on the errors
// of the application's own reads before logging them: a provider may echo
// its key in an answer's body, and go-ethereum's errors print that body.
//
// The error unwraps only to stand-ins for the standard errors that err's
// chain matched, such as [context.DeadlineExceeded], never to err itself.
// Redact returns nil for a nil err. On a nil Monitor, or one not made by
// [New], it reduces and clips the text but knows no secret to mask.
func (m *Monitor) Redact(err error) error {
	if err == nil {
		return nil
	}
	var secrets *matcher
	if m != nil {
		secrets = m.secrets
	}
	text := secrets.maskAndClip(err.Error(), maxTransportText)
	return &redactedError{msg: text, inner: standIns(err)}
}
