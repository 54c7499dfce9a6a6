package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rpcAnswer is a JSON-RPC error answer with this code and message.
func rpcAnswer(code int, message string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":%q}}`, code, message)
}

// failureCase is one way a probe fails, and how code must see it.
type failureCase struct {
	name         string
	status       int    // the provider's HTTP status; 0 means 200
	body         string // what the provider answers eth_blockNumber with
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
		return errors.As(err, &ce) && *ce == ChainIDError{Got: got, Want: want}
	}
}

var failures = []failureCase{
	{name: "HTTP 429 is rate limited", status: 429, reason: ReasonRateLimited, as: statusIs(429)},
	{name: "RPC code -32005 is rate limited", body: rpcAnswer(-32005, "daily request count exceeded"), reason: ReasonRateLimited, as: rpcIs(-32005, "daily request count exceeded")},
	{name: "RPC code 429 is rate limited", body: rpcAnswer(429, "too many requests"), reason: ReasonRateLimited, as: rpcIs(429, "too many requests")},
	{name: "HTTP 401 is unauthorized", status: 401, reason: ReasonUnauthorized, as: statusIs(401)},
	{name: "HTTP 402 is unauthorized", status: 402, reason: ReasonUnauthorized, as: statusIs(402)},
	{name: "HTTP 403 is unauthorized", status: 403, reason: ReasonUnauthorized, as: statusIs(403)},
	{name: "a redirect is an HTTP status", status: 301, reason: ReasonHTTPStatus, as: statusIs(301)},
	{name: "HTTP 201 is an HTTP status", status: 201, reason: ReasonHTTPStatus, as: statusIs(201)},
	{name: "HTTP 404 is an HTTP status", status: 404, reason: ReasonHTTPStatus, as: statusIs(404)},
	{name: "HTTP 500 is an HTTP status", status: 500, reason: ReasonHTTPStatus, as: statusIs(500)},
	{name: "HTTP 503 is an HTTP status", status: 503, reason: ReasonHTTPStatus, as: statusIs(503)},
	{name: "RPC code -32000 is an RPC error, whatever its message says", body: rpcAnswer(-32000, "rate limit exceeded"), reason: ReasonRPCError, as: rpcIs(-32000, "rate limit exceeded")},
	{name: "RPC code -32601 is an RPC error", body: rpcAnswer(-32601, "method not found"), reason: ReasonRPCError, as: rpcIs(-32601, "method not found")},
	{name: "another chain is the wrong chain", chainAnswer: `{"jsonrpc":"2.0","id":1,"result":"0xaa36a7"}`, reason: ReasonWrongChain, as: chainIs(11155111, 1)},
	{name: "a rate-limited chain ID request is rate limited", chainAnswer: valid, chainStatus: 429, reason: ReasonRateLimited, as: statusIs(429)},
	{name: "an RPC error to the chain ID request is an RPC error", chainAnswer: rpcAnswer(-32601, "no such method"), reason: ReasonRPCError, as: rpcIs(-32601, "no such method")},
	{name: "a bad chain ID answer is a bad answer", chainAnswer: `{"jsonrpc":"2.0","id":1,"result":"0x01"}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a body that is not JSON is a bad answer", body: "<html>", reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a wrong jsonrpc is a bad answer", body: `{"jsonrpc":"1.0","id":1,"result":"0x64"}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a wrong id is a bad answer", body: `{"jsonrpc":"2.0","id":2,"result":"0x64"}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a missing result is a bad answer", body: `{"jsonrpc":"2.0","id":1}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a result that is not a canonical quantity is a bad answer", body: `{"jsonrpc":"2.0","id":1,"result":"0x064"}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a malformed error member is a bad answer", body: `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "an answer over 4096 bytes is a bad answer", body: valid + strings.Repeat(" ", maxBody), reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a body longer than its Content-Length is a bad answer", base: func(r *http.Request) (*http.Response, error) {
		resp := answerResponse(r, 100)
		resp.ContentLength = 10
		return resp, nil
	}, reason: ReasonBadAnswer, is: ErrBadAnswer},
	{name: "a body shorter than its Content-Length is a transport failure", base: func(r *http.Request) (*http.Response, error) {
		resp := answerResponse(r, 100)
		resp.ContentLength = 1000
		return resp, nil
	}, reason: ReasonTransport, is: io.ErrUnexpectedEOF},
	{name: "a ProbeTimeout is a timeout", base: func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}, probeTimeout: time.Millisecond, reason: ReasonTimeout, is: context.DeadlineExceeded},
	{name: "a net.Error timeout from Base is a timeout", base: func(*http.Request) (*http.Response, error) {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: fakeNetError{timeout: true}}
	}, reason: ReasonTimeout, as: func(err error) bool {
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}},
	{name: "a Base's own error is a transport failure", base: func(*http.Request) (*http.Response, error) {
		return nil, errors.New("circuit open")
	}, reason: ReasonTransport},
}

// Every failure reaches code as a type, through errors.As on Check's error,
// and its Reason comes from codes alone.
func TestFailureKinds(t *testing.T) {
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			pe, err := f.probe(t)
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

// probe runs one Check of a provider that fails as f says, and returns its
// ProbeError and Check's error.
func (f failureCase) probe(t *testing.T) (*ProbeError, error) {
	t.Helper()
	cfg := Config{ProbeTimeout: f.probeTimeout}
	if f.base != nil {
		cfg.Endpoints = named("a", "http://a.example/v3/KEY")
		cfg.Base = roundTripFunc(f.base)
	} else {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			req := readRequest(t, r)
			status, body := f.status, f.body
			if req.Method == "eth_chainId" {
				status, body = f.chainStatus, f.chainAnswer
			} else if body == "" {
				body = answer(json.RawMessage("1"), 100)
			}
			if status != 0 {
				w.WriteHeader(status)
			}
			io.WriteString(w, body)
		})
		cfg.Endpoints = named("a", srv.URL)
		if f.chainAnswer != "" {
			cfg.ChainID = 1
		}
	}
	return probeOne(t, cfg)
}

// probeOne checks the one endpoint cfg has, "a", which must fail, and
// returns its ProbeError and Check's error.
func probeOne(t *testing.T, cfg Config) (*ProbeError, error) {
	t.Helper()
	err := check(mustNew(t, cfg))
	pe := probeErrors(t, err)["a"]
	if pe == nil {
		t.Fatalf("Check = %v, want a ProbeError for a", err)
	}
	return pe, err
}

// Reason looks through any wrapping, of the ProbeError's Err and around the
// ProbeError itself, and a hand-built ProbeError is classified like one that
// Check made.
func TestReasonOfHandBuiltErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Reason
	}{
		{"a wrapped status", fmt.Errorf("x: %w", &StatusError{StatusCode: 429}), ReasonRateLimited},
		{"a wrapped RPC error", fmt.Errorf("x: %w", &RPCError{Code: -32005}), ReasonRateLimited},
		{"a joined chain ID error", errors.Join(errors.New("x"), &ChainIDError{Got: 5, Want: 1}), ReasonWrongChain},
		{"a wrapped ErrBadAnswer", fmt.Errorf("x: %w", ErrBadAnswer), ReasonBadAnswer},
		{"a wrapped deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ReasonTimeout},
		{"a net.Error that is not a timeout", &net.OpError{Op: "dial", Err: errors.New("refused")}, ReasonTransport},
		{"no error at all", nil, ReasonTransport},
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
func TestCheckError(t *testing.T) {
	down := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	limited := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
	up := newProvider(t, 100)
	tests := []struct {
		name      string
		endpoints []string
		want      string
		published bool
	}{
		{"some failed and the verdicts were published", []string{"c", limited.URL, "b", up.URL, "a", down.URL},
			`blocklag: 2 of 3 probes failed, verdicts published: blocklag: endpoint "c": HTTP status 429; blocklag: endpoint "a": HTTP status 503`, true},
		{"all failed and nothing was published", []string{"a", down.URL, "b", limited.URL},
			`blocklag: 2 of 2 probes failed, nothing published: blocklag: endpoint "a": HTTP status 503; blocklag: endpoint "b": HTTP status 429`, false},
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
		})
	}
	if err := check(mustNew(t, Config{Endpoints: named("b", up.URL)})); err != nil {
		t.Errorf("Check with every probe succeeding = %v, want nil", err)
	}
}

// Text that reached a hand-built error's fields unescaped cannot forge a
// line through its message: each type escapes what it shows.
func TestHandBuiltErrorsShowOneSafeLine(t *testing.T) {
	const hostile = "a\nb\x1b[2J\u0085\u202e\xff"
	pe := &ProbeError{Endpoint: hostile, Err: errors.New(hostile)}
	rpc := &ProbeError{Endpoint: "b", Err: &RPCError{Code: 1, Message: hostile}}
	for _, err := range []error{
		pe,
		rpc,
		&RPCError{Code: 1, Message: hostile},
		&CheckError{Errors: []*ProbeError{pe, rpc}},
	} {
		if msg := err.Error(); hasControl(msg) {
			t.Errorf("%T shows %q", err, msg)
		}
	}
	if got, want := (&CheckError{Errors: []*ProbeError{pe}}).Error(), "blocklag: 1 of 1 probes failed, nothing published: "; !strings.HasPrefix(got, want) {
		t.Errorf("a hand-built CheckError reads %q, want it to start %q", got, want)
	}
}

// An RPCError's Message is what the ProbeError's text shows, masked,
// escaped and clipped, so that code sees no more than a log does.
func TestRPCErrorMessageIsWhatTheMessageShows(t *testing.T) {
	long := strings.Repeat("x", 150)
	tests := []struct {
		name    string
		message string
		want    string
	}{
		{"a plain message is kept", "header not found", "header not found"},
		{"a secret it echoes is masked", "invalid project id SECRETKEY", "invalid project id [redacted]"},
		{"a control character is escaped", "a\nb\u202e", `a\nb\u202e`},
		{"a long message is clipped", long, long[:100] + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, rpcAnswer(-32000, tt.message)) })
			pe, _ := probeOne(t, Config{Endpoints: named("a", srv.URL+"/v3/SECRETKEY")})
			var re *RPCError
			if !errors.As(pe, &re) || re.Message != tt.want {
				t.Fatalf("RPCError %+v, want Message %q", re, tt.want)
			}
			if want := fmt.Sprintf(`blocklag: endpoint "a": RPC error -32000: "%s"`, tt.want); pe.Error() != want {
				t.Errorf("message %q, want %q", pe.Error(), want)
			}
		})
	}
}
