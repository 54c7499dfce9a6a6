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

// failureCase is one way a probe fails, and how code must see it; statuses,
// bodies, transport errors and answer rules have tables of their own.
type failureCase struct {
	name         string
	body         string // what the provider answers eth_blockNumber with; "" is its own answer
	status       int    // the status it answers body with; 0 means 200
	chainAnswer  string // with chainStatus, what it answers eth_chainId with; "" sets no ChainID
	chainStatus  int
	base         func(*http.Request) (*http.Response, error) // set: the Base, instead of a provider
	probeTimeout time.Duration
	reason       Reason
	is           error            // when set, errors.Is(err, is) holds
	as           func(error) bool // when set, what errors.As must find
}

func statusIs(code int) func(error) bool {
	return func(err error) bool {
		var se *StatusError
		return errors.As(err, &se) && se.StatusCode == code
	}
}

func rpcIs(code int, message string) func(error) bool {
	return func(err error) bool {
		var re *RPCError
		return errors.As(err, &re) && re.Code == code && re.ErrorCode() == code && re.Message == message
	}
}

func chainIs(got, want uint64) func(error) bool {
	return func(err error) bool {
		var ce *ChainIDError
		return errors.As(err, &ce) && ce.Got == got && ce.Want == want
	}
}

var failures = []failureCase{
	{name: "RPC code -32005 is rate limited", body: rpcErrorAnswer(-32005, "daily request count exceeded"), reason: ReasonRateLimited, as: rpcIs(-32005, "daily request count exceeded")},
	{name: "RPC code 429 is rate limited", body: rpcErrorAnswer(429, "too many requests"), reason: ReasonRateLimited, as: rpcIs(429, "too many requests")},
	{name: "RPC code -32000 is an RPC error, whatever its message says", body: rpcErrorAnswer(-32000, "rate limit exceeded"), reason: ReasonRPCError, as: rpcIs(-32000, "rate limit exceeded")},
	{name: "RPC code -32601 is an RPC error", body: rpcErrorAnswer(-32601, "method not found"), reason: ReasonRPCError, as: rpcIs(-32601, "method not found")},
	{name: "another chain is the wrong chain", chainAnswer: answer(11155111), reason: ReasonWrongChain, as: chainIs(11155111, 1)},
	{name: "a rate-limited chain ID request is rate limited", chainAnswer: answer(1), chainStatus: 429, reason: ReasonRateLimited, as: statusIs(429)},
	{name: "an RPC error to the chain ID request is an RPC error", chainAnswer: rpcErrorAnswer(-32601, "no such method"), reason: ReasonRPCError, as: rpcIs(-32601, "no such method")},
	{name: "a bad chain ID answer is a bad answer", chainAnswer: `{"jsonrpc":"2.0","id":1,"result":"0x01"}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "HTTP 401 is unauthorized", body: "no key", status: 401, reason: ReasonUnauthorized, as: statusIs(401)},
	{name: "HTTP 502 is an HTTP status", body: "bad gateway", status: 502, reason: ReasonHTTPStatus, as: statusIs(502)},
	{name: "a body that is not JSON is a bad answer", body: "<html>", reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a ProbeTimeout is a timeout", base: func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}, probeTimeout: time.Millisecond, reason: ReasonTimeout, is: context.DeadlineExceeded},
	{name: "a Base's own error is a transport failure", base: func(*http.Request) (*http.Response, error) {
		return nil, errors.New("circuit open")
	}, reason: ReasonTransport},
}

// Every failure reaches code as a type through errors.As on Check's error, and
// its Reason comes from codes alone, never from the message.
func TestEveryFailureReachesCodeAsATypeWithItsReason(t *testing.T) {
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			pe, err := probeOne(t, f.config(t))
			if got := pe.Reason(); got != f.reason {
				t.Errorf("Reason() = %q, want %q; error: %v", got, f.reason, pe)
			}
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
	} else {
		p := newProvider(t, 100)
		if f.body != "" {
			p.on("eth_blockNumber", reply(f.status, f.body))
		}
		if f.chainAnswer != "" {
			p.on("eth_chainId", reply(f.chainStatus, f.chainAnswer))
			cfg.ChainID = 1
		}
		cfg.Endpoints = named("a", p.URL)
	}
	return cfg
}

// probeOne checks the one endpoint cfg has, "a", which must fail, and returns
// its ProbeError and Check's error.
func probeOne(t *testing.T, cfg Config) (*ProbeError, error) {
	t.Helper()
	err := check(mustNew(t, cfg))
	pe := probeErrors(t, err)["a"]
	if pe == nil {
		t.Fatalf("Check = %v, want a ProbeError for a", err)
	}
	return pe, err
}

// Reason looks through any wrapping, in the Err and around the ProbeError, and
// an Err that matches two kinds gets the one listed first.
func TestReasonFollowsTheListedOrderInHandBuiltErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Reason
	}{
		{"a wrapped status", fmt.Errorf("x: %w", &StatusError{StatusCode: 429}), ReasonRateLimited},
		{"a joined chain ID error", errors.Join(errors.New("x"), &ChainIDError{Got: 5, Want: 1}), ReasonWrongChain},
		{"a wrapped ErrBadAnswer", fmt.Errorf("x: %w", ErrBadAnswer), ReasonBadAnswer},
		{"a wrapped deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ReasonTimeout},
		{"a net.Error that is not a timeout", &net.OpError{Op: "dial", Err: errors.New("refused")}, ReasonTransport},
		{"no error at all", nil, ReasonTransport},

		{"a rate-limiting RPC code inside a redirect", &StatusError{StatusCode: 302, RPC: &RPCError{Code: -32005}}, ReasonRateLimited},
		{"a rate-limiting RPC code beside another status", errors.Join(&StatusError{StatusCode: 503}, &RPCError{Code: -32005}), ReasonRateLimited},
		{"HTTP 429 beside a deadline", errors.Join(&StatusError{StatusCode: 429}, context.DeadlineExceeded), ReasonRateLimited},
		{"a refusing status beside another RPC error", errors.Join(&StatusError{StatusCode: 401}, &RPCError{Code: -32000}), ReasonUnauthorized},
		{"an RPC error beside a chain ID error", errors.Join(&RPCError{Code: -32601}, &ChainIDError{Got: 5, Want: 1}), ReasonRPCError},
		{"a chain ID error beside ErrBadAnswer", errors.Join(&ChainIDError{}, ErrBadAnswer), ReasonWrongChain},
		{"ErrBadAnswer beside a deadline", errors.Join(ErrBadAnswer, context.DeadlineExceeded), ReasonBadAnswer},
		{"ErrBadAnswer beside a net.Error that timed out", errors.Join(ErrBadAnswer, fakeNetError{timeout: true}), ReasonBadAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name+" gives "+string(tt.want), func(t *testing.T) {
			pe := &ProbeError{Endpoint: "a", Err: tt.err}
			if got := pe.Reason(); got != tt.want {
				t.Errorf("Reason() = %q, want %q", got, tt.want)
			}
			var found *ProbeError
			if !errors.As(fmt.Errorf("loop: %w", pe), &found) || found.Reason() != tt.want {
				t.Errorf("errors.As through a wrapper finds %v", found)
			}
		})
	}
}

// Check's error is one line that counts the failures and says whether the
// verdicts were published, with each ProbeError in configured order.
func TestCheckErrorIsOneLineInConfiguredOrder(t *testing.T) {
	down, limited, up := newProvider(t, 100), newProvider(t, 100), newProvider(t, 100)
	down.on("eth_blockNumber", reply(503, ""))
	limited.on("eth_blockNumber", reply(429, ""))
	tests := []struct {
		name      string
		endpoints []string
		want      string
		published bool
	}{
		{"some failed and the verdicts were published", []string{"c", limited.URL, "b", up.URL, "a", down.URL},
			`blocklag: 2 of 3 probes failed, verdicts published: endpoint "c": HTTP status 429; endpoint "a": HTTP status 503`, true},
		{"all failed and nothing was published", []string{"a", down.URL, "b", limited.URL},
			`blocklag: 2 of 2 probes failed, nothing published: endpoint "a": HTTP status 503; endpoint "b": HTTP status 429`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(mustNew(t, Config{Endpoints: named(tt.endpoints...)}))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v (%T), want a *CheckError", err, err)
			}
			if err.Error() != tt.want || ce.Published != tt.published {
				t.Errorf("Check = %q, published %v; want %q, published %v", err, ce.Published, tt.want, tt.published)
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
	if err := check(mustNew(t, Config{Endpoints: named("b", up.URL)})); err != nil {
		t.Errorf("Check with every probe succeeding = %v, want nil", err)
	}
}

// Hand-built errors show one line, their outside text reduced.
func TestHandBuiltErrorsShowOneSafeLine(t *testing.T) {
	const hostile = "a\nb\x1b[2J\u0085\u202e\xff"
	pe := &ProbeError{Endpoint: hostile, Err: errors.New(hostile)}
	rpcErr := &RPCError{Code: 1, Message: hostile}
	rpc := &ProbeError{Endpoint: "b", Err: rpcErr}
	for _, err := range []error{pe, rpc, rpcErr, &CheckError{Errors: []*ProbeError{pe, rpc}}, (*ProbeError)(nil)} {
		if msg := err.Error(); hasControl(msg) || !strings.HasPrefix(msg, "blocklag: ") && err != error(rpcErr) {
			t.Errorf("%T reads %q", err, msg)
		}
	}
}

// A nil pointer of every error type has a text, a nil ProbeError has a
// reason, and a CheckError holding one reads as one line, neither panics nor
// matches what it does not hold.
func TestNilErrorsHaveATextAndNeverPanic(t *testing.T) {
	holdingNil := &CheckError{Errors: []*ProbeError{nil, {Endpoint: "b", Err: &StatusError{StatusCode: 503}}}}
	for _, err := range []error{(*ProbeError)(nil), (*CheckError)(nil), (*StatusError)(nil), (*RPCError)(nil), (*ChainIDError)(nil), holdingNil} {
		if err.Error() == "" {
			t.Errorf("%T's Error() is empty", err)
		}
	}
	if got := holdingNil.Error(); hasControl(got) || !strings.HasPrefix(got, "blocklag: 2 of 2 probes failed, nothing published: ") || !strings.HasSuffix(got, `; endpoint "b": HTTP status 503`) {
		t.Errorf("a CheckError holding a nil ProbeError reads %q", got)
	}
	if errors.Is(holdingNil, ErrBadAnswer) || (*ProbeError)(nil).Reason() != ReasonTransport {
		t.Errorf("a nil ProbeError matches ErrBadAnswer, or its Reason is not %q", ReasonTransport)
	}
}
