package blocklag

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// Every error type here keeps its finished text in msg when Check builds it:
// the message is redacted there and then, so that no error value holds a
// secret, or anything that could find one. An error built by hand has no
// msg, and formats its own fields, outside text in the alphabet.

// ProbeError reports why one provider's probe failed, in a [*CheckError].
//
// Its message names the endpoint and says what failed. Text that blocklag
// did not write (a provider's value or message, a transport error, the ID)
// is shown in printable ASCII without '"', '\', '<', '>' and '&': a '"' as an
// apostrophe, any other byte as '?'. A provider's value is clipped to 100
// bytes and a transport error to 300, with "..." when cut. No message,
// field, unwrapped error or form of [Status] shows a secret of any endpoint,
// however it is escaped: its user name and password, its path and query and
// each part of them that looks like a key show as "[redacted]".
type ProbeError struct {
	Endpoint failnext.EndpointID // the provider whose probe failed
	// Err wraps a [*StatusError], [*RPCError], [*ChainIDError] or
	// [ErrBadAnswer], or stand-ins for the standard errors, such as
	// [context.DeadlineExceeded], that an error of the Base matched.
	Err error
	msg string // the finished text; "" in one built by hand
}

// Error reads `blocklag: endpoint "ID": ` and then the text of Err.
func (e *ProbeError) Error() string {
	if e == nil {
		return "blocklag: nil ProbeError"
	}
	if e.msg != "" {
		return e.msg
	}
	reason := ""
	if e.Err != nil {
		reason = redact.Alphabet(errorText(e.Err))
	}
	return e.format(reason)
}

// format writes the message around the text of Err.
func (e *ProbeError) format(errText string) string {
	return `blocklag: endpoint "` + redact.Alphabet(string(e.Endpoint)) + `": ` + errText
}

// Unwrap returns Err.
func (e *ProbeError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Reason is the first [Reason] listed whose codes Err matches.
func (e *ProbeError) Reason() Reason {
	if e == nil {
		return ReasonTransport
	}
	return reasonOf(e.Err)
}

// CheckError is what [Monitor.Check] returns whenever a probe failed.
type CheckError struct {
	Errors    []*ProbeError // one per failed endpoint, in configured order
	Published bool          // whether the Check published, which it does when a probe succeeded
	probes    int           // how many endpoints the Check probed; 0 in one built by hand
	msg       string        // the finished text; "" in one built by hand
}

// Error is one line: `blocklag: 2 of 3 probes failed, verdicts published:
// endpoint "a": HTTP status 429; endpoint "b": timed out after 2s`.
func (e *CheckError) Error() string {
	if e == nil {
		return "blocklag: nil CheckError"
	}
	if e.msg != "" {
		return e.msg
	}
	return e.format()
}

// format writes the message from the fields, each ProbeError's text
// without its own "blocklag: ".
func (e *CheckError) format() string {
	published := "nothing published"
	if e.Published {
		published = "verdicts published"
	}
	probes := max(e.probes, len(e.Errors))
	var b strings.Builder
	fmt.Fprintf(&b, "blocklag: %d of %d probes failed, %s", len(e.Errors), probes, published)
	for i, pe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimPrefix(pe.Error(), "blocklag: "))
	}
	return b.String()
}

// Unwrap returns the ProbeErrors, for [errors.Is] and [errors.As].
func (e *CheckError) Unwrap() []error {
	if e == nil {
		return nil
	}
	errs := make([]error, len(e.Errors))
	for i, pe := range e.Errors {
		errs[i] = pe // a nil one unwraps to nothing
	}
	return errs
}

// StatusError reports an HTTP status other than 200, redirects included.
type StatusError struct {
	StatusCode int
	// RetryAfter is the answer's Retry-After: its seconds, or its HTTP-date
	// less the answer's Date, else the Check's clock. It is 0 when absent,
	// unreadable or past.
	RetryAfter time.Duration
	RPC        *RPCError // the JSON-RPC error object in the body (id 1 or null), or nil
	msg        string    // the finished text; "" in one built by hand
}

// Error reads `HTTP status 429: RPC error -32005: "limit exceeded", retry
// after 1m0s`.
func (e *StatusError) Error() string {
	if e == nil {
		return "nil StatusError"
	}
	if e.msg != "" {
		return e.msg
	}
	return e.format()
}

func (e *StatusError) format() string {
	msg := "HTTP status " + strconv.Itoa(e.StatusCode)
	if e.RPC != nil {
		msg += ": " + e.RPC.Error()
	}
	if e.RetryAfter > 0 {
		msg += ", retry after " + e.RetryAfter.String()
	}
	return msg
}

// Unwrap returns RPC when it is set.
func (e *StatusError) Unwrap() error {
	if e == nil || e.RPC == nil {
		return nil // not a nil *RPCError, which errors.As would find
	}
	return e.RPC
}

// RPCError reports that a provider answered with a JSON-RPC error object.
type RPCError struct {
	Code int
	// Message is the provider's message as a ProbeError shows it, redacted
	// and clipped. It is empty when the object had none.
	Message string
	msg     string // the finished text; "" in one built by hand
}

// Error reads `RPC error -32005: "limit exceeded"`.
func (e *RPCError) Error() string {
	if e == nil {
		return "nil RPCError"
	}
	if e.msg != "" {
		return e.msg
	}
	return e.format()
}

func (e *RPCError) format() string {
	return "RPC error " + strconv.Itoa(e.Code) + `: "` + redact.Alphabet(e.Message) + `"`
}

// ErrorCode returns Code, as go-ethereum's rpc.Error interface asks.
func (e *RPCError) ErrorCode() int { return e.Code }

// ChainIDError reports a provider on another chain than Config.ChainID.
type ChainIDError struct {
	Got  uint64 // the chain ID the provider answered
	Want uint64 // Config.ChainID
	msg  string // the finished text; "" in one built by hand
}

// Error reads "chain ID 11155111 (0xaa36a7), want 1".
func (e *ChainIDError) Error() string {
	if e == nil {
		return "nil ChainIDError"
	}
	if e.msg != "" {
		return e.msg
	}
	return e.format()
}

func (e *ChainIDError) format() string {
	return fmt.Sprintf("chain ID %d (%#x), want %d", e.Got, e.Got, e.Want)
}

// ErrBadAnswer is matched by every answer that breaks the rules of a probe.
// A body shorter than its Content-Length fails as a cut connection instead.
var ErrBadAnswer = errors.New("bad answer")

// badAnswer returns the failure of an answer that breaks a rule, in the
// words that format and args give, redacted.
func badAnswer(r *redact.Redactor, format string, args ...any) error {
	return &badAnswerError{msg: r.Message(fmt.Sprintf(format, args...))}
}

// badAnswerError is an answer that broke a rule.
type badAnswerError struct{ msg string }

func (e *badAnswerError) Error() string { return e.msg }

// Is makes every badAnswerError match ErrBadAnswer.
func (e *badAnswerError) Is(target error) bool { return target == ErrBadAnswer }

// annotate returns err after a few words that say what failed, the message
// redacted whole: the two together may show what neither shows alone.
func annotate(words string, err error, r *redact.Redactor) error {
	return &annotatedError{msg: r.Message(words + ": " + err.Error()), err: err}
}

// annotatedError is an error that annotate made.
type annotatedError struct {
	msg string
	err error
}

func (e *annotatedError) Error() string { return e.msg }
func (e *annotatedError) Unwrap() error { return e.err }

// transportError turns an error from Config.Base, or from reading a body,
// into one safe to show that stays as it is: err's text is read once, as
// outside text, and the result unwraps only to stand-ins, never to err.
func transportError(err error, r *redact.Redactor) error {
	text := r.Outside(errorText(err), redact.ErrorLimit)
	// Redacted again with its quotes, which may complete a secret that
	// begins or ends with a quote.
	return &redactedError{msg: r.Message(`"` + text + `"`), inner: standIns(err)}
}

// errorText returns err's text, or what fmt prints for err when its Error
// method panics, as one of a typed nil pointer may.
func errorText(err error) (text string) {
	defer func() {
		if recover() != nil {
			text = fmt.Sprint(err)
		}
	}()
	return err.Error()
}

// redactedError is an error kept as its redacted text and its stand-ins.
type redactedError struct {
	msg   string
	inner []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.inner }
