package blocklag

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
)

// ProbeError reports why one provider's probe failed. Every per-provider
// failure that [Monitor.Check] reports is a *ProbeError, gathered in a
// [*CheckError].
//
// Its message names the endpoint's ID and may show the host and port that a
// dial used, and text from outside: a value the provider sent, a transport
// error's text (net/http's, a proxy's, a Base's). Outside text is clipped
// and shown inside Go double quotes, so that none of it can read as the
// message's own words; no message holds a rune that [strconv.IsPrint]
// rejects or a byte that is not valid UTF-8: those are escaped, so a
// message is always one printable line.
//
// No message shows a secret of any configured endpoint's URL (endpoints of
// one provider share hosts and connections, so one's error may quote
// another's request). The secrets of a URL are:
//   - its user name and its password, at any length, and the whole user
//     information; an empty one has none;
//   - the base64 of "user:password" that a Basic Authorization header
//     carries, with and without its padding;
//   - its path unless it is "/", and its query;
//   - each path segment and each query value (split at both '&' and ';';
//     a bare key counts as a value) on its own, when it is at least 8
//     bytes long as written in the URL. Hosted providers' keys are longer,
//     while the short parts of their URL formats (v3, eth, mainnet, the 1 of
//     ?chain=1) are words that a message must be free to show; a short part
//     is still hidden wherever the whole path or query shows.
//
// Each is looked for in every form in which a text may hold it: as written
// in the URL, escapes and all; percent-decoded; percent-escaped as a path
// and as a query, with upper- or lower-case hex digits; and each of those
// as Go quotes it, as encoding/json writes it (escaping '&', '<' and '>' or
// not, and with '/' escaped too), and as an encoder that writes only ASCII
// does (\u00e9, as Python's does by default). Every form is found in the
// text as the message finally shows it, after escaping and after numbers
// are written, so that neither an escape (\a before "bcdef...") nor a
// number (an RPC error code equal to a numeric query value) can complete a
// secret; nor can the quoting of a log handler (slog's, encoding/json's).
// A found stretch is shown as "[redacted]", widened to whole characters
// and escapes, so that masking never unescapes a quote.
//
// The same holds for every error reachable from a ProbeError by unwrapping,
// for every field of the types below, and for the text forms of [Status].
// A field that holds a number (RPCError.Code, ChainIDError.Got) keeps the
// number.
type ProbeError struct {
	// Endpoint is the ID of the provider whose probe failed.
	Endpoint failnext.EndpointID

	// Err says why. It wraps a [*StatusError], a [*RPCError], a
	// [*ChainIDError] or [ErrBadAnswer] when the provider answered but not
	// as required, and for a timeout [context.DeadlineExceeded]. An error
	// from Config.Base or net/http is never kept itself: its text is read
	// once, when the probe fails, and Err wraps only stand-ins for the
	// standard errors it matched (the context errors,
	// [os.ErrDeadlineExceeded], [io.ErrUnexpectedEOF], [io.EOF], a
	// [syscall.Errno], and a [net.Error] that keeps Timeout), looking at
	// no more than the first 64 errors of its chain. A Base's own error
	// types are therefore not reachable with [errors.As]: their methods
	// could show what the message hides, or change later.
	Err error

	// secrets are the Monitor's, which Check sets; nil in a ProbeError built
	// by hand, whose message then masks nothing.
	secrets *secrets
}

// Error reads `blocklag: endpoint "ID": ` and then Err's text. In a
// ProbeError built by hand, any rune of that text that is not safe to show
// is escaped too. A nil *ProbeError reads "blocklag: nil ProbeError".
func (e *ProbeError) Error() string {
	if e == nil {
		return "blocklag: " + e.line()
	}
	return e.secrets.shown("blocklag: " + e.line())
}

// line is the message without its prefix, unmasked: how a CheckError
// lists it.
func (e *ProbeError) line() string {
	if e == nil {
		return "nil ProbeError"
	}
	var reason string
	if e.Err != nil {
		reason = escape(e.Err.Error())
	}
	return "endpoint " + strconv.Quote(string(e.Endpoint)) + ": " + reason
}

// Unwrap returns the reason the probe failed.
func (e *ProbeError) Unwrap() error { return e.Err }

// Reason classifies the failure by the codes in Err alone, never by message
// text: the first of the Reason constants, in the order they are listed,
// whose description matches. A nil *ProbeError, like one without Err,
// is ReasonTransport.
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
	case hasStatus && (status.StatusCode == http.StatusUnauthorized ||
		status.StatusCode == http.StatusPaymentRequired || status.StatusCode == http.StatusForbidden):
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

// Reason is a kind of probe failure, as [ProbeError.Reason] tells it. Its
// values are fit for a metric label.
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

// CheckError is what [Monitor.Check] returns whenever a probe failed. Its
// message is one line: how many probes of how many failed, whether the
// verdicts were published, and each ProbeError's message.
type CheckError struct {
	// Errors has one *ProbeError per failed endpoint, in configured order.
	Errors []*ProbeError

	// Published reports whether the Check published a snapshot, which it
	// does when at least one probe succeeded.
	Published bool

	// probes is how many endpoints the Check probed; zero in a CheckError
	// not made by Check, whose message then counts only Errors.
	probes int

	// secrets are the Monitor's, which Check sets, as in ProbeError.
	secrets *secrets
}

// Error reads, for example, `blocklag: 2 of 3 probes failed, verdicts
// published: endpoint "a": HTTP status 429; endpoint "b": timed out after
// 2s`: "blocklag:" once, then each ProbeError's message without that
// prefix, separated by "; ".
func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "blocklag: %d of %d probes failed, ", len(e.Errors), max(e.probes, len(e.Errors)))
	if e.Published {
		b.WriteString("verdicts published")
	} else {
		b.WriteString("nothing published")
	}
	for i, pe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(pe.line())
	}
	return e.secrets.shown(b.String())
}

// Unwrap returns the ProbeErrors, so that [errors.Is] and [errors.As] look
// through each of them.
func (e *CheckError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, pe := range e.Errors {
		errs[i] = pe
	}
	return errs
}

// StatusError reports that a provider answered with an HTTP status other
// than 200; a redirect is one, whatever its Location holds, since probes
// follow none. Its fields hold only numbers and the already-safe text of
// an RPCError.
type StatusError struct {
	StatusCode int

	// RetryAfter is how long the answer's Retry-After header asked us to
	// wait: its number of seconds, or the time from the answer's Date
	// header (or, without a readable one, from the Check's clock) to its
	// HTTP-date, in any of the three forms [http.ParseTime] reads. It is 0
	// when the header is absent, unreadable or in the past, and never
	// negative: a value too large for a Duration is the largest Duration.
	// blocklag itself never waits: the next Check probes as usual.
	RetryAfter time.Duration

	// RPC is the JSON-RPC error that the answer's body carried, when the
	// body was a JSON-RPC 2.0 error object ("jsonrpc" the string "2.0",
	// "id" the number 1 or null, and an "error" object whose "code" is an
	// integer and whose "message", if any, a string) within the limits
	// every answer keeps: at most 4096 bytes, and as long as its
	// Content-Length states. Its Message is masked, escaped and clipped
	// like that of any RPCError. Nil for any other body.
	RPC *RPCError

	secrets *secrets // as in ProbeError
}

// Error reads "HTTP status 503", then, when RPC is set, ": " and RPC's
// text, then, when RetryAfter is set, ", retry after " and the duration:
//
//	HTTP status 429: RPC error -32005: "daily request count exceeded", retry after 1m0s
func (e *StatusError) Error() string {
	msg := "HTTP status " + strconv.Itoa(e.StatusCode)
	if e.RPC != nil {
		msg += ": " + e.RPC.Error()
	}
	if e.RetryAfter > 0 {
		msg += ", retry after " + e.RetryAfter.String()
	}
	return e.secrets.shown(msg)
}

// Unwrap returns RPC when it is set, and nil otherwise, so that
// [errors.As] finds the *RPCError inside a StatusError, and go-ethereum's
// rpc.Error interface its code.
func (e *StatusError) Unwrap() error {
	if e.RPC == nil {
		return nil // not a nil *RPCError, which errors.As would find
	}
	return e.RPC
}

// RPCError reports that a provider answered with a JSON-RPC error object.
type RPCError struct {
	// Code is the error's code.
	Code int

	// Message is the provider's message as the ProbeError's text shows it
	// between quotes: escaped as Go quotes it, clipped to 100 bytes, in
	// which case it ends in "...", and with every endpoint's secrets masked
	// in the final text, also as a log handler would quote it (a secret
	// that the dots complete takes them into its "[redacted]").
	Message string

	secrets *secrets // as in ProbeError
}

// Error reads `RPC error -32005: "limit exceeded"`. Message is already
// escaped; only in an RPCError built by hand is anything escaped again.
func (e *RPCError) Error() string {
	return e.secrets.shown("RPC error " + strconv.Itoa(e.Code) + `: "` + escape(e.Message) + `"`)
}

// ErrorCode returns Code, so that go-ethereum's rpc.Error interface finds
// an RPCError too.
func (e *RPCError) ErrorCode() int { return e.Code }

// ChainIDError reports that, with Config.ChainID set, a provider answered
// eth_chainId with another chain.
type ChainIDError struct {
	Got, Want uint64

	secrets *secrets // as in ProbeError
}

// Error reads "chain ID 11155111 (0xaa36a7), want 1".
func (e *ChainIDError) Error() string {
	return e.secrets.shown(fmt.Sprintf("chain ID %d (%#x), want %d", e.Got, e.Got, e.Want))
}

// ErrBadAnswer is matched, through [errors.Is], by every failure of an
// answer to break the rules a probe checks: a body over 4096 bytes or longer
// than its stated Content-Length, one that is not a single JSON object, a
// jsonrpc that is not "2.0", an id that is not the number 1, a missing or
// malformed result, a malformed error member; for an eth_chainId answer
// too. A body that ends before its stated length cannot be told from a cut
// connection, and fails as a transport error wrapping [io.ErrUnexpectedEOF].
var ErrBadAnswer = errors.New("bad answer")
