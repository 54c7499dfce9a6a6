package blocklag

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reasonCases is the one table of how a failure maps to its Reason. Other
// tests that need a failure's Reason take it from the failure's ProbeError.
// Each rule has a row, in the order Reason lists them, and then rows for
// failures that match two rules and get the one listed first.
var reasonCases = []struct {
	name string
	err  error
	want Reason
}{
	{"HTTP 429 is rate limited", &StatusError{StatusCode: 429}, ReasonRateLimited},
	{"an RPC error with code -32005 is rate limited", &RPCError{Code: -32005}, ReasonRateLimited},
	{"an RPC error with code 429 is rate limited", &RPCError{Code: 429}, ReasonRateLimited},
	{"HTTP 401 is unauthorized", &StatusError{StatusCode: 401}, ReasonUnauthorized},
	{"HTTP 402 is unauthorized", &StatusError{StatusCode: 402}, ReasonUnauthorized},
	{"HTTP 403 is unauthorized", &StatusError{StatusCode: 403}, ReasonUnauthorized},
	{"HTTP 503 is an HTTP status", &StatusError{StatusCode: 503}, ReasonHTTPStatus},
	{"HTTP 404 is an HTTP status", &StatusError{StatusCode: 404}, ReasonHTTPStatus},
	{"a redirect is an HTTP status", &StatusError{StatusCode: 302}, ReasonHTTPStatus},
	{"HTTP 101 is an HTTP status", &StatusError{StatusCode: 101}, ReasonHTTPStatus},
	{"an RPC error with another code is an RPC error", &RPCError{Code: -32601}, ReasonRPCError},
	{"an RPC error is read by its code, never by its message",
		&RPCError{Code: -32000, Message: "rate limit exceeded"}, ReasonRPCError},
	{"a chain ID error is the wrong chain", &ChainIDError{Got: 5, Want: 1}, ReasonWrongChain},
	{"ErrBadAnswer is a bad answer", ErrBadAnswer, ReasonBadAnswer},
	{"the deadline is a timeout", context.DeadlineExceeded, ReasonTimeout},
	{"a net.Error that timed out is a timeout", fakeNetError{timeout: true}, ReasonTimeout},
	{"a net.Error that did not time out is a transport failure",
		&net.OpError{Op: "dial", Err: errors.New("refused")}, ReasonTransport},
	{"a cancelled context is a transport failure", context.Canceled, ReasonTransport},
	{"a Base's own error is a transport failure", errors.New("circuit open"), ReasonTransport},
	{"no error at all is a transport failure", nil, ReasonTransport},

	{"a wrapped status is read through the wrapping",
		fmt.Errorf("x: %w", &StatusError{StatusCode: 429}), ReasonRateLimited},
	{"a joined chain ID error is read through the join",
		errors.Join(errors.New("x"), &ChainIDError{Got: 5, Want: 1}), ReasonWrongChain},
	{"a wrapped ErrBadAnswer is a bad answer", fmt.Errorf("x: %w", ErrBadAnswer), ReasonBadAnswer},
	{"a wrapped deadline is a timeout", fmt.Errorf("x: %w", context.DeadlineExceeded), ReasonTimeout},

	{"a rate-limiting RPC code inside a 503 is rate limited",
		&StatusError{StatusCode: 503, RPC: &RPCError{Code: -32005}}, ReasonRateLimited},
	{"a rate-limiting RPC code inside a redirect is rate limited",
		&StatusError{StatusCode: 302, RPC: &RPCError{Code: -32005}}, ReasonRateLimited},
	{"the RPC code 429 inside a 401 is rate limited",
		&StatusError{StatusCode: 401, RPC: &RPCError{Code: 429}}, ReasonRateLimited},
	{"a rate-limiting RPC code beside another status is rate limited",
		errors.Join(&StatusError{StatusCode: 503}, &RPCError{Code: -32005}), ReasonRateLimited},
	{"HTTP 429 beside a deadline is rate limited",
		errors.Join(&StatusError{StatusCode: 429}, context.DeadlineExceeded), ReasonRateLimited},
	{"another RPC code inside a 403 is unauthorized",
		&StatusError{StatusCode: 403, RPC: &RPCError{Code: -32001}}, ReasonUnauthorized},
	{"a refusing status beside another RPC error is unauthorized",
		errors.Join(&StatusError{StatusCode: 401}, &RPCError{Code: -32000}), ReasonUnauthorized},
	{"another RPC code inside a 500 is an HTTP status",
		&StatusError{StatusCode: 500, RPC: &RPCError{Code: -32603}}, ReasonHTTPStatus},
	{"an RPC error beside a chain ID error is an RPC error",
		errors.Join(&RPCError{Code: -32601}, &ChainIDError{Got: 5, Want: 1}), ReasonRPCError},
	{"a chain ID error beside ErrBadAnswer is the wrong chain",
		errors.Join(&ChainIDError{}, ErrBadAnswer), ReasonWrongChain},
	{"ErrBadAnswer beside a deadline is a bad answer",
		errors.Join(ErrBadAnswer, context.DeadlineExceeded), ReasonBadAnswer},
	{"ErrBadAnswer beside a net.Error that timed out is a bad answer",
		errors.Join(ErrBadAnswer, fakeNetError{timeout: true}), ReasonBadAnswer},
}

// A failure's Reason is the same whether code asks the ProbeError, a
// ProbeError found through a wrapper, or the EndpointStatus that holds the
// failure.
func TestEachFailureHasTheFirstReasonItsCodesMatch(t *testing.T) {
	for _, tt := range reasonCases {
		t.Run(tt.name, func(t *testing.T) {
			pe := &ProbeError{Endpoint: "a", Err: tt.err}
			if got := pe.Reason(); got != tt.want {
				t.Errorf("ProbeError.Reason() = %q, want %q", got, tt.want)
			}
			var found *ProbeError
			if !errors.As(fmt.Errorf("loop: %w", pe), &found) || found.Reason() != tt.want {
				t.Errorf("errors.As through a wrapper finds %v", found)
			}
			if tt.err == nil {
				return // an endpoint without an error has no Reason, below
			}
			if got := (EndpointStatus{ID: "a", Err: tt.err}).Reason(); got != tt.want {
				t.Errorf("EndpointStatus.Reason() = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("an endpoint that answered has no reason", func(t *testing.T) {
		if got := (EndpointStatus{ID: "a"}).Reason(); got != "" {
			t.Errorf("EndpointStatus.Reason() = %q, want none", got)
		}
	})
}

// failureCase is one way a probe fails, and what code finds of it through
// Check's error. Statuses, bodies, transport errors and answer rules have
// tables of their own; this one has a failure of every Reason.
type failureCase struct {
	name         string
	body         string // what the provider answers eth_blockNumber with; "" is its own answer
	status       int    // the status it answers body with; 0 means 200
	chainAnswer  string // with chainStatus, what it answers eth_chainId with; "" sets no ChainID
	chainStatus  int
	base         func(*http.Request) (*http.Response, error) // set: the Base, instead of a provider
	probeTimeout time.Duration
	is           error            // when set, errors.Is(err, is) holds
	as           func(error) bool // when set, what errors.As must find
}

// rpcIs returns a function that reports whether errors.As finds an
// *RPCError with this code and message in an error.
func rpcIs(code int, message string) func(error) bool {
	return func(err error) bool {
		var re *RPCError
		return errors.As(err, &re) && re.Code == code && re.ErrorCode() == code && re.Message == message
	}
}

// chainIs returns a function that reports whether errors.As finds a
// *ChainIDError with these chain IDs in an error.
func chainIs(got, want uint64) func(error) bool {
	return func(err error) bool {
		var ce *ChainIDError
		return errors.As(err, &ce) && ce.Got == got && ce.Want == want
	}
}

// hangingBase is a Base that answers nothing until the request's context
// ends.
func hangingBase(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

var failures = []failureCase{
	{name: "an RPC error -32005 reaches code as an *RPCError",
		body: rpcErrorAnswer(-32005, "daily request count exceeded"),
		as:   rpcIs(-32005, "daily request count exceeded")},
	{name: "an RPC error 429 reaches code as an *RPCError",
		body: rpcErrorAnswer(429, "too many requests"),
		as:   rpcIs(429, "too many requests")},
	{name: "an RPC error -32601 reaches code as an *RPCError",
		body: rpcErrorAnswer(-32601, "method not found"),
		as:   rpcIs(-32601, "method not found")},
	{name: "another chain reaches code as a *ChainIDError",
		chainAnswer: answer(11155111),
		as:          chainIs(11155111, 1)},
	{name: "a rate-limited chain ID request reaches code as a *StatusError",
		chainAnswer: answer(1), chainStatus: 429,
		as: statusIs(429)},
	{name: "an RPC error to the chain ID request reaches code as an *RPCError",
		chainAnswer: rpcErrorAnswer(-32601, "no such method"),
		as:          rpcIs(-32601, "no such method")},
	{name: "a bad chain ID answer matches ErrBadAnswer",
		chainAnswer: `{"jsonrpc":"2.0","id":1,"result":"0x01"}`,
		is:          ErrBadAnswer},
	{name: "HTTP 401 reaches code as a *StatusError", body: "no key", status: 401, as: statusIs(401)},
	{name: "HTTP 502 reaches code as a *StatusError", body: "bad gateway", status: 502, as: statusIs(502)},
	{name: "a body that is not JSON matches ErrBadAnswer", body: "<html>", is: ErrBadAnswer},
	{name: "a ProbeTimeout matches the deadline",
		base: hangingBase, probeTimeout: time.Millisecond,
		is: context.DeadlineExceeded},
	{name: "a Base's own error is none of the typed failures",
		base: func(*http.Request) (*http.Response, error) { return nil, errors.New("circuit open") },
		as:   noTypedFailure},
}

// Every failure reaches code as its type or sentinel through errors.Is and
// errors.As on Check's error, and a failed chain ID request says so.
func TestEveryFailureReachesCodeThroughChecksError(t *testing.T) {
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			pe, err := probeOne(t, f.config(t))
			if f.is != nil && !errors.Is(err, f.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, f.is)
			}
			if f.as != nil && !f.as(err) {
				t.Errorf("errors.As does not find the failure's type and values in %v", err)
			}
			if f.chainAnswer != "" && !strings.HasPrefix(pe.Err.Error(), "chain ") {
				t.Errorf("%v does not say it was the chain ID request", pe)
			}
		})
	}
}

// config is a Config of one endpoint, "a", that fails as f says.
func (f failureCase) config(t *testing.T) Config {
	t.Helper()
	cfg := Config{ProbeTimeout: f.probeTimeout}
	if f.base != nil {
		cfg.Endpoints = named("a", "http://a.example/v3/KEY")
		cfg.Base = roundTripFunc(f.base)
		return cfg
	}
	p := newProvider(t, 100)
	if f.body != "" {
		p.on("eth_blockNumber", reply(f.status, f.body))
	}
	if f.chainAnswer != "" {
		p.on("eth_chainId", reply(f.chainStatus, f.chainAnswer))
		cfg.ChainID = 1
	}
	cfg.Endpoints = named("a", p.URL)
	return cfg
}

// Check's error is one line that counts the failures and says whether the
// verdicts were published, with each ProbeError in configured order.
func TestCheckErrorIsOneLineInConfiguredOrder(t *testing.T) {
	down := newProvider(t, 100)
	down.on("eth_blockNumber", reply(503, ""))
	limited := newProvider(t, 100)
	limited.on("eth_blockNumber", reply(429, ""))
	up := newProvider(t, 100)
	tests := []struct {
		name      string
		endpoints []string
		want      string
		published bool
	}{
		{
			name:      "some failed and the verdicts were published",
			endpoints: []string{"c", limited.URL, "b", up.URL, "a", down.URL},
			want: `blocklag: 2 of 3 probes failed, verdicts published: ` +
				`endpoint "c": HTTP status 429; endpoint "a": HTTP status 503`,
			published: true,
		},
		{
			name:      "all failed and nothing was published",
			endpoints: []string{"a", down.URL, "b", limited.URL},
			want: `blocklag: 2 of 2 probes failed, nothing published: ` +
				`endpoint "a": HTTP status 503; endpoint "b": HTTP status 429`,
			published: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(mustNew(t, Config{Endpoints: named(tt.endpoints...)}))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v (%T), want a *CheckError", err, err)
			}
			if err.Error() != tt.want || ce.Published != tt.published {
				t.Errorf("Check = %q, published %v; want %q, published %v",
					err, ce.Published, tt.want, tt.published)
			}
			if len(ce.Errors) != len(ce.Unwrap()) {
				t.Errorf("Unwrap gives %d errors, Errors holds %d", len(ce.Unwrap()), len(ce.Errors))
			}
			for _, pe := range ce.Errors {
				if msg := pe.Error(); !strings.HasPrefix(msg, `blocklag: endpoint "`) {
					t.Errorf("a ProbeError alone reads %q, want it to start with its prefix", msg)
				}
			}
		})
	}
	t.Run("none failed and Check returns nil", func(t *testing.T) {
		if err := check(mustNew(t, Config{Endpoints: named("b", up.URL)})); err != nil {
			t.Errorf("Check with every probe succeeding = %v, want nil", err)
		}
	})
}

// Hand-built errors show one line, their outside text in the alphabet, and all but
// a lone RPCError start with blocklag's prefix.
func TestHandBuiltErrorsShowOneSafeLine(t *testing.T) {
	const hostile = "a\nb\x1b[2J\u0085\u202e\xff"
	pe := &ProbeError{Endpoint: hostile, Err: errors.New(hostile)}
	rpcErr := &RPCError{Code: 1, Message: hostile}
	rpc := &ProbeError{Endpoint: "b", Err: rpcErr}
	tests := []struct {
		name     string
		err      error
		prefixed bool
	}{
		{"a ProbeError with an outside ID and text", pe, true},
		{"a ProbeError holding an RPCError", rpc, true},
		{"an RPCError alone", rpcErr, false},
		{"a CheckError of both", &CheckError{Errors: []*ProbeError{pe, rpc}}, true},
		{"a nil ProbeError", (*ProbeError)(nil), true},
		{"a ProbeError whose Err panics in Error", &ProbeError{Endpoint: "c", Err: (*panicking)(nil)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name+" reads as one safe line", func(t *testing.T) {
			msg := tt.err.Error()
			if hasControl(msg) {
				t.Errorf("%T reads %q", tt.err, msg)
			}
			if tt.prefixed && !strings.HasPrefix(msg, "blocklag: ") {
				t.Errorf("%T reads %q, without blocklag's prefix", tt.err, msg)
			}
		})
	}
}

// A nil pointer of every error type has a text, a nil ProbeError has a
// reason, and a CheckError holding one reads as one line, neither panics nor
// matches what it does not hold.
func TestNilErrorsHaveATextAndNeverPanic(t *testing.T) {
	fine := &ProbeError{Endpoint: "b", Err: &StatusError{StatusCode: 503}}
	holdingNil := &CheckError{Errors: []*ProbeError{nil, fine}}
	nils := []error{
		(*ProbeError)(nil),
		(*CheckError)(nil),
		(*StatusError)(nil),
		(*RPCError)(nil),
		(*ChainIDError)(nil),
		holdingNil,
	}
	for _, err := range nils {
		if err.Error() == "" {
			t.Errorf("%T's Error() is empty", err)
		}
	}
	got := holdingNil.Error()
	wantStart := "blocklag: 2 of 2 probes failed, nothing published: "
	wantEnd := `; endpoint "b": HTTP status 503`
	if hasControl(got) || !strings.HasPrefix(got, wantStart) || !strings.HasSuffix(got, wantEnd) {
		t.Errorf("a CheckError holding a nil ProbeError reads %q", got)
	}
	if errors.Is(holdingNil, ErrBadAnswer) {
		t.Error("a CheckError holding a nil ProbeError matches ErrBadAnswer")
	}
	if got := (*ProbeError)(nil).Reason(); got != ReasonTransport {
		t.Errorf("a nil ProbeError's Reason is %q, want %q", got, ReasonTransport)
	}
}
