package blocklag

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// Reason is a kind of probe failure, fit for a metric label.
type Reason string

// The kinds of probe failure. A failure has the first one listed that its
// codes match, never its text. An RPC error counts as rate limited also
// inside a StatusError of another status.
const (
	ReasonRateLimited  Reason = "rate_limited" // HTTP 429, or an RPC error with code 429 or -32005
	ReasonUnauthorized Reason = "unauthorized" // HTTP 401, 402 or 403
	ReasonHTTPStatus   Reason = "http_status"  // any other HTTP status but 200, redirects included
	ReasonRPCError     Reason = "rpc_error"    // any other JSON-RPC error
	ReasonWrongChain   Reason = "wrong_chain"  // a [*ChainIDError]
	ReasonBadAnswer    Reason = "bad_answer"   // an answer that matches [ErrBadAnswer]
	ReasonTimeout      Reason = "timeout"      // a deadline, or a net.Error whose Timeout is true
	ReasonTransport    Reason = "transport"    // anything else: dial, TLS, a cut connection, a Base's error
)

// reasonRules decides the Reason of a probe's failure: the first rule that
// matches it. Being the one place where every Reason appears, it is also the
// list that Stats counts by, so a Reason added to it is counted and shown.
var reasonRules = []struct {
	reason  Reason
	matches func(error) bool
}{
	{ReasonRateLimited, isRateLimited},
	{ReasonUnauthorized, isUnauthorized},
	{ReasonHTTPStatus, func(err error) bool { return errors.As(err, new(*StatusError)) }},
	{ReasonRPCError, func(err error) bool { return errors.As(err, new(*RPCError)) }},
	{ReasonWrongChain, func(err error) bool { return errors.As(err, new(*ChainIDError)) }},
	{ReasonBadAnswer, func(err error) bool { return errors.Is(err, ErrBadAnswer) }},
	{ReasonTimeout, isTimeout},
	{ReasonTransport, func(error) bool { return true }},
}

// reasonIndex returns the index in reasonRules of err's Reason.
func reasonIndex(err error) int {
	for i, rule := range reasonRules {
		if rule.matches(err) {
			return i
		}
	}
	return len(reasonRules) - 1 // not reached: the last rule matches anything
}

// reasonOf returns the Reason of a probe that failed with err.
func reasonOf(err error) Reason {
	return reasonRules[reasonIndex(err)].reason
}

func isRateLimited(err error) bool {
	var status *StatusError
	if errors.As(err, &status) && status.StatusCode == http.StatusTooManyRequests {
		return true
	}
	var rpc *RPCError
	return errors.As(err, &rpc) && (rpc.Code == 429 || rpc.Code == -32005)
}

func isUnauthorized(err error) bool {
	var status *StatusError
	if !errors.As(err, &status) {
		return false
	}
	switch status.StatusCode {
	case http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden:
		return true
	}
	return false
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
