package blocklag

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
)

// ProbeError reports why one provider's probe failed, in a [*CheckError].
//
// Its message names the endpoint and says what failed. Text blocklag did not
// write (a provider's value or message, a transport error, the ID) is shown
// byte by byte in printable ASCII without '"', '\', '<', '>', '&': '"' as an
// apostrophe, any other byte as '?'; a value is quoted and clipped to 100 bytes
// (300 for a transport error), "..." when cut. No message, unwrapped error,
// field or text form of [Status] shows a secret of any endpoint: user name,
// password, "user:password" and its base64, path but "/", query, and each
// segment or query value of 8 bytes with a digit or of 20. Texts and secrets
// are both read percent-decoded with '+' as a space, so each spelling shows as
// "[redacted]"; numeric fields stay exact.
type ProbeError struct {
	Endpoint failnext.EndpointID // the provider whose probe failed
	// Err wraps a [*StatusError], [*RPCError], [*ChainIDError] or [ErrBadAnswer]
	// for an answer amiss. A Base's error is never kept: Err wraps only stand-ins
	// for the standard errors its chain matched, [context.DeadlineExceeded] too.
	Err     error
	secrets *matcher // the Monitor's, set by Check; nil in one built by hand
}

// Error reads `blocklag: endpoint "ID": ` and then Err's text.
func (e *ProbeError) Error() string {
	if e == nil {
		return "blocklag: " + e.line()
	}
	return e.secrets.mask("blocklag: " + e.line())
}

// line is the message without its prefix, unmasked, as CheckError lists it.
func (e *ProbeError) line() string {
	if e == nil {
		return "nil ProbeError"
	}
	var reason string
	if e.Err != nil {
		reason = e.Err.Error()
		if e.secrets == nil { // built by hand, not by Check
			reason = sanitize(reason)
		}
	}
	return `endpoint "` + sanitize(string(e.Endpoint)) + `": ` + reason
}

// Unwrap returns the reason the probe failed.
func (e *ProbeError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Reason is the first Reason listed that Err's codes, never its text, match.
func (e *ProbeError) Reason() Reason {
	if e == nil {
		return ReasonTransport
	}
	var status *StatusError
	var rpc *RPCError
	var ne net.Error
	hasStatus := errors.As(e.Err, &status)
	hasRPC := errors.As(e.Err, &rpc)
	switch {
	case hasStatus && status.StatusCode == http.StatusTooManyRequests,
		hasRPC && (rpc.Code == 429 || rpc.Code == -32005):
		return ReasonRateLimited
	case hasStatus && slices.Contains([]int{http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden}, status.StatusCode):
		return ReasonUnauthorized
	case hasStatus:
		return ReasonHTTPStatus
	case hasRPC:
		return ReasonRPCError
	case errors.As(e.Err, new(*ChainIDError)):
		return ReasonWrongChain
	case errors.Is(e.Err, ErrBadAnswer):
		return ReasonBadAnswer
	case errors.Is(e.Err, context.DeadlineExceeded), errors.As(e.Err, &ne) && ne.Timeout():
		return ReasonTimeout
	}
	return ReasonTransport
}

// Reason is a kind of probe failure, fit for a metric label.
type Reason string

// The kinds of probe failure.
const (
	ReasonRateLimited  Reason = "rate_limited" // HTTP 429, or an RPC error with code 429 or -32005 (limit exceeded), also inside a StatusError of another status
	ReasonUnauthorized Reason = "unauthorized" // HTTP 401, 402 or 403
	ReasonHTTPStatus   Reason = "http_status"  // any other HTTP status but 200, redirects included
	ReasonRPCError     Reason = "rpc_error"    // any other JSON-RPC error
	ReasonWrongChain   Reason = "wrong_chain"  // a [*ChainIDError]
	ReasonBadAnswer    Reason = "bad_answer"   // an answer that matches [ErrBadAnswer]
	ReasonTimeout      Reason = "timeout"      // context.DeadlineExceeded, or a net.Error whose Timeout is true
	ReasonTransport    Reason = "transport"    // anything else: dial, TLS, a cut connection, a Base's own error
)

// CheckError is what [Monitor.Check] returns whenever a probe failed.
type CheckError struct {
	Errors    []*ProbeError // one per failed endpoint, in configured order
	Published bool          // whether the Check published: whether a probe succeeded
	probes    int           // how many endpoints Check probed; 0 in one built by hand
	secrets   *matcher      // as in ProbeError
}

// Error is one line: `blocklag: 2 of 3 probes failed, verdicts published:
// endpoint "a": HTTP status 429; endpoint "b": timed out after 2s`.
func (e *CheckError) Error() string {
	if e == nil {
		return "blocklag: nil CheckError"
	}
	published := "nothing published"
	if e.Published {
		published = "verdicts published"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "blocklag: %d of %d probes failed, %s", len(e.Errors), max(e.probes, len(e.Errors)), published)
	sep := ": "
	for _, pe := range e.Errors {
		b.WriteString(sep)
		b.WriteString(pe.line())
		sep = "; "
	}
	return e.secrets.mask(b.String())
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
	// RetryAfter is the Retry-After header: seconds, or an HTTP-date less the
	// answer's Date (else now); 0 when absent, unreadable or past.
	RetryAfter time.Duration
	RPC        *RPCError // the JSON-RPC 2.0 error object that the body held (id 1 or null), or nil
	secrets    *matcher  // as in ProbeError
}

// Error reads `HTTP status 429: RPC error -32005: "limit exceeded", retry after 1m0s`.
func (e *StatusError) Error() string {
	if e == nil {
		return "nil StatusError"
	}
	msg := "HTTP status " + strconv.Itoa(e.StatusCode)
	if e.RPC != nil {
		msg += ": " + e.RPC.Error()
	}
	if e.RetryAfter > 0 {
		msg += ", retry after " + e.RetryAfter.String()
	}
	return e.secrets.mask(msg)
}

// Unwrap returns RPC when set.
func (e *StatusError) Unwrap() error {
	if e == nil || e.RPC == nil {
		return nil // not a nil *RPCError, which errors.As would find
	}
	return e.RPC
}

// RPCError reports that a provider answered with a JSON-RPC error object.
type RPCError struct {
	Code    int
	Message string   // as the ProbeError's text shows it: sanitized, masked, clipped
	secrets *matcher // as in ProbeError
}

// Error reads `RPC error -32005: "limit exceeded"`, Message as outside text.
func (e *RPCError) Error() string {
	if e == nil {
		return "nil RPCError"
	}
	return e.secrets.mask("RPC error " + strconv.Itoa(e.Code) + `: "` + sanitize(e.Message) + `"`)
}

// ErrorCode returns Code, as go-ethereum's rpc.Error interface asks.
func (e *RPCError) ErrorCode() int { return e.Code }

// ChainIDError reports a provider on another chain than Config.ChainID.
type ChainIDError struct {
	Got, Want uint64
	secrets   *matcher // as in ProbeError
}

// Error reads "chain ID 11155111 (0xaa36a7), want 1".
func (e *ChainIDError) Error() string {
	if e == nil {
		return "nil ChainIDError"
	}
	return e.secrets.mask(fmt.Sprintf("chain ID %d (%#x), want %d", e.Got, e.Got, e.Want))
}

// ErrBadAnswer is matched by every answer that breaks the rules of a probe. A
// body shorter than its Content-Length fails as a cut connection instead.
var ErrBadAnswer = errors.New("bad answer")
