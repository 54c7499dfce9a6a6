package blocklag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// Every request goes through Config.Base, which is never closed, to the URL as
// configured (readRequest checks the rest); the chain ID request goes out only
// with ChainID set, until the provider has confirmed.
func TestProbesArePostsToTheURLAsConfiguredThroughBase(t *testing.T) {
	tests := []struct {
		name    string
		chainID uint64
		heights int // height probes sent over three Checks of two endpoints
		chains  int // chain ID requests sent over those Checks
	}{
		{"without ChainID only height probes are sent", 0, 6, 0},
		{"with ChainID each endpoint is asked its chain once, in the first Check", 1, 6, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, 1)
			url := p.URL + "/v3/key?apikey=k&x=1"
			base := &recorder{}
			m := mustNew(t, Config{Endpoints: named("a", url, "b", url), ChainID: tt.chainID, Base: base})
			for range 3 {
				if err := check(m); err != nil {
					t.Fatal(err)
				}
			}
			if h, c := p.count("eth_blockNumber"), p.count("eth_chainId"); h != tt.heights || c != tt.chains || p.total() != h+c {
				t.Errorf("sent %d height probes, %d chain ID requests and %d in all; want %d, %d and no other", h, c, p.total(), tt.heights, tt.chains)
			}
			if uris, want := p.requestURIs(), map[string]int{"/v3/key?apikey=k&x=1": tt.heights + tt.chains}; !maps.Equal(uris, want) {
				t.Errorf("requests went to %v, want every one to the URL as configured, %v", uris, want)
			}
			if n := int(base.requests.Load()); n != tt.heights+tt.chains || base.closings.Load() != 0 {
				t.Errorf("Base saw %d requests and %d closes, want all requests and no close", n, base.closings.Load())
			}
		})
	}
}

// A Base that breaks the RoundTripper contract fails the probe as a transport
// failure that says how (an answer without a body is an empty one), and a body
// it returned beside an error is closed all the same.
func TestBaseThatBreaksTheContractFailsTheProbe(t *testing.T) {
	closed := make(chan struct{})
	tests := []struct {
		name string
		base roundTripFunc
		want string
	}{
		{"neither an answer nor an error", func(*http.Request) (*http.Response, error) { return nil, nil },
			"Config.Base returned neither an answer nor an error"},
		{"an answer of stated length without a body", func(r *http.Request) (*http.Response, error) {
			resp := response(r, http.StatusOK, "", 5)
			resp.Body = nil
			return resp, nil
		}, `reading answer: "unexpected EOF"`},
		{"an answer together with an error", func(r *http.Request) (*http.Response, error) {
			resp := response(r, http.StatusOK, answer(100), -1)
			resp.Body = &onClose{ReadCloser: resp.Body, f: func() { close(closed) }}
			return resp, errors.New("circuit open")
		}, `"circuit open"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe, _ := probeOne(t, Config{Endpoints: named("a", "http://a.example"), Base: tt.base})
			if !strings.Contains(pe.Error(), tt.want) || pe.Reason() != ReasonTransport {
				t.Errorf("probe error %q (%s), want a transport failure saying %q", pe, pe.Reason(), tt.want)
			}
		})
	}
	select {
	case <-closed:
	default:
		t.Error("the answer that came with an error was not closed")
	}
}

// Any status but 200 fails the probe as a *StatusError after one request:
// nothing is retried, and no redirect is followed, whatever its Location. Its
// Reason tells a refusal from a broken provider. The body is read under the
// limits of any answer, and only a JSON-RPC 2.0 error object in it counts: the
// *StatusError keeps it as an *RPCError, whose code 429 or -32005 makes any
// status rate limited. Any other body, or one that breaks a limit, leaves a
// plain *StatusError: never a transport failure or a bad answer.
func TestStatusOtherThanOKFailsProbeOnceKeepingOnlyAJSONRPCError(t *testing.T) {
	infura := rpcErrorAnswer(-32005, "daily request count exceeded")
	limit := &RPCError{Code: -32005, Message: "daily request count exceeded"}
	const cut = "<cut>" // at the end of a body, where reading it fails
	const good = "http://good.example/"
	tests := []struct {
		name     string
		status   int
		location string // the Location header, as it is; "" sends none
		body     string
		length   int64 // the ContentLength that the Base states; 0 states none
		drip     bool  // after body, nothing comes until the probe gives up at ProbeTimeout
		spaces   bool  // after body, white space comes without end
		rpc      *RPCError
		reason   Reason
	}{
		{name: "a valid answer", status: 201, body: valid, reason: ReasonHTTPStatus},
		{name: "an empty answer", status: 204, reason: ReasonHTTPStatus},
		{name: "a valid answer", status: 401, body: valid, reason: ReasonUnauthorized},
		{name: "a valid answer", status: 402, body: valid, reason: ReasonUnauthorized},
		{name: "a valid answer", status: 403, body: valid, reason: ReasonUnauthorized},
		{name: "a valid answer", status: 404, body: valid, reason: ReasonHTTPStatus},
		{name: "a valid answer", status: 429, body: valid, reason: ReasonRateLimited},
		{name: "a valid answer", status: 500, body: valid, reason: ReasonHTTPStatus},
		{name: "a valid answer", status: 503, body: valid, reason: ReasonHTTPStatus},
		{name: "a redirect to a good provider", status: 301, location: good, body: valid, reason: ReasonHTTPStatus},
		{name: "a redirect to an invalid escape", status: 302, location: "/v3/%zz", body: valid, reason: ReasonHTTPStatus},
		{name: "a redirect to an unclosed IPv6 host", status: 303, location: "http://[::1", body: valid, reason: ReasonHTTPStatus},
		{name: "a temporary redirect to a good provider", status: 307, location: good, body: valid, reason: ReasonHTTPStatus},
		{name: "a redirect to a host with a space", status: 308, location: "http://rpc example:port/", body: valid, reason: ReasonHTTPStatus},
		{name: "a redirect without a Location", status: 302, body: valid, reason: ReasonHTTPStatus},
		{name: "Infura's rate limit", status: 429, body: infura, rpc: limit, reason: ReasonRateLimited},
		{name: "a rate limit with a null id", status: 429, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"slow down"}}`,
			rpc: &RPCError{Code: -32005, Message: "slow down"}, reason: ReasonRateLimited},
		{name: "a rate-limiting code in a 503", status: 503, body: infura, rpc: limit, reason: ReasonRateLimited},
		{name: "the code 429 in a 401", status: 401, body: rpcErrorAnswer(429, "too many requests"),
			rpc: &RPCError{Code: 429, Message: "too many requests"}, reason: ReasonRateLimited},
		{name: "another code in a 403", status: 403, body: rpcErrorAnswer(-32001, "invalid project id"),
			rpc: &RPCError{Code: -32001, Message: "invalid project id"}, reason: ReasonUnauthorized},
		{name: "another code in a 500", status: 500, body: rpcErrorAnswer(-32603, "internal error"),
			rpc: &RPCError{Code: -32603, Message: "internal error"}, reason: ReasonHTTPStatus},
		{name: "an error without a message", status: 500, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}`,
			rpc: &RPCError{Code: -32603}, reason: ReasonHTTPStatus},
		{name: "an escaped version and white space around", status: 429, body: " \r\n{\"error\":{\"code\":-32005,\"message\":\"x\"},\"id\":1,\"jsonrpc\":\"2\\u002e0\"}\n",
			rpc: &RPCError{Code: -32005, Message: "x"}, reason: ReasonRateLimited},
		{name: "a JSON-RPC error as long as its Content-Length", status: 429, body: infura, length: int64(len(infura)), rpc: limit, reason: ReasonRateLimited},
		{name: "a JSON-RPC error padded to 4096 bytes", status: 429, body: infura + strings.Repeat(" ", maxBody-len(infura)), rpc: limit, reason: ReasonRateLimited},

		{name: "a JSON-RPC error padded to 4097 bytes", status: 429, body: infura + strings.Repeat(" ", maxBody+1-len(infura)), reason: ReasonRateLimited},
		{name: "a JSON-RPC error longer than its Content-Length", status: 503, body: infura, length: int64(len(infura)) - 1, reason: ReasonHTTPStatus},
		{name: "a JSON-RPC error short of its Content-Length", status: 503, body: infura, length: int64(len(infura)) + 1, reason: ReasonHTTPStatus},
		{name: "a JSON-RPC error cut off by a read error", status: 503, body: infura + cut, reason: ReasonHTTPStatus},
		{name: "a JSON-RPC error followed by endless white space", status: 429, body: infura, spaces: true, reason: ReasonRateLimited},
		{name: "a JSON-RPC error that never ends", status: 503, body: infura, drip: true, reason: ReasonHTTPStatus},
		{name: "an HTML page", status: 502, body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", reason: ReasonHTTPStatus},
		{name: "an empty body", status: 503, body: "", reason: ReasonHTTPStatus},
		{name: "a JSON array", status: 503, body: "[" + infura + "]", reason: ReasonHTTPStatus},
		{name: "jsonrpc 1.0", status: 503, body: `{"jsonrpc":"1.0","id":1,"error":{"code":-32005,"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "id 2", status: 503, body: `{"jsonrpc":"2.0","id":2,"error":{"code":-32005,"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "id the string \"1\"", status: 503, body: `{"jsonrpc":"2.0","id":"1","error":{"code":-32005,"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "no id", status: 503, body: `{"jsonrpc":"2.0","error":{"code":-32005,"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "no error", status: 503, body: `{"jsonrpc":"2.0","id":1,"result":"0x64"}`, reason: ReasonHTTPStatus},
		{name: "a null error", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":null}`, reason: ReasonHTTPStatus},
		{name: "an error that is a string", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":"-32005"}`, reason: ReasonHTTPStatus},
		{name: "an error without a code", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "a code that is not an integer", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005.5,"message":"x"}}`, reason: ReasonHTTPStatus},
		{name: "a message that is not a string", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":5}}`, reason: ReasonHTTPStatus},
		{name: "a member named twice", status: 503, body: `{"jsonrpc":"2.0","id":1,"id":1,"error":{"code":-32005,"message":"x"}}`, reason: ReasonHTTPStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name+" in a "+strconv.Itoa(tt.status)+" fails after one request", func(t *testing.T) {
			var requests atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				text, broken := strings.CutSuffix(tt.body, cut)
				resp := response(r, tt.status, text, -1)
				if tt.location != "" {
					resp.Header["Location"] = []string{tt.location} // as it is, unlike Set
				}
				if tt.length != 0 {
					resp.ContentLength = tt.length
				}
				switch {
				case broken:
					resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(text), iotest.ErrReader(errors.New("connection reset"))))
				case tt.drip:
					resp.Body = &stallingBody{head: text, closed: make(chan struct{})}
				case tt.spaces:
					resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(text), spaces{}))
				}
				return resp, nil
			})
			cfg := Config{Endpoints: named("a", "http://a.example"), Base: base}
			if tt.drip {
				cfg.ProbeTimeout = 50 * time.Millisecond
			}
			pe, err := probeOne(t, cfg)
			se, ok := pe.Err.(*StatusError)
			if !ok || se.StatusCode != tt.status {
				t.Fatalf("probe error %v (%T), want a *StatusError %d itself", pe, pe.Err, tt.status)
			}
			// Compared by its exported fields: an RPCError keeps more.
			if (se.RPC == nil) != (tt.rpc == nil) || se.RPC != nil && (se.RPC.Code != tt.rpc.Code || se.RPC.Message != tt.rpc.Message) {
				t.Errorf("RPC = %v, want %v", se.RPC, tt.rpc)
			}
			want := fmt.Sprintf("HTTP status %d", tt.status)
			if tt.rpc != nil {
				want += fmt.Sprintf(": RPC error %d: %q", tt.rpc.Code, tt.rpc.Message)
			}
			if se.Error() != want {
				t.Errorf("message %q, want %q", se, want)
			}
			var rpc *RPCError
			if found := errors.As(err, &rpc); found != (tt.rpc != nil) || found && rpc != se.RPC {
				t.Errorf("errors.As finds the RPCError %v: %v, want %v", rpc, found, tt.rpc != nil)
			}
			if pe.Reason() != tt.reason || errors.Is(err, ErrBadAnswer) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Reason() = %s, want %s; and neither a bad answer nor a transport failure nor a timeout", pe.Reason(), tt.reason)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1: none retried, no redirect followed", n)
			}
		})
	}
}

// spaces is an endless body of white space.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// StatusError.RetryAfter reads Retry-After: seconds, or an HTTP-date in any of
// its three forms taken from the answer's Date or, without a readable one, from
// the Check's clock (here 10:00:00, a Friday). It is 0 when absent, unreadable
// or past, and at most the largest Duration.
func TestRetryAfterIsReadInEveryForm(t *testing.T) {
	const (
		date   = "Fri, 02 Jan 2026 10:00:00 GMT" // the Check's clock, as an answer's Date
		oneMin = "Fri, 02 Jan 2026 10:01:00 GMT"
	)
	tests := []struct {
		name       string
		status     int    // 0 means 429
		retryAfter string // "" sends none
		date       string // the Date header; "" sends none
		want       time.Duration
	}{
		{name: "no header", want: 0},
		{name: "60 seconds", retryAfter: "60", want: time.Minute},
		{name: "0 seconds", retryAfter: "0", want: 0},
		{name: "seconds in a 503", status: 503, retryAfter: "120", want: 2 * time.Minute},
		{name: "the most seconds a Duration holds", retryAfter: "9223372036", want: 9223372036 * time.Second},
		{name: "one second more than a Duration holds", retryAfter: "9223372037", want: math.MaxInt64},
		{name: "more seconds than a uint64 holds", retryAfter: "99999999999999999999999", want: math.MaxInt64},
		{name: "negative seconds", retryAfter: "-5", want: 0},
		{name: "a fraction of seconds", retryAfter: "1.5", want: 0},
		{name: "seconds with a unit", retryAfter: "60s", want: 0},
		{name: "an IMF-fixdate a minute after the Date", retryAfter: oneMin, date: date, want: time.Minute},
		{name: "an RFC 850 date 90 s after the Date", retryAfter: "Friday, 02-Jan-26 10:01:30 GMT", date: date, want: 90 * time.Second},
		{name: "an asctime date 2 min after the Date", retryAfter: "Fri Jan  2 10:02:00 2026", date: date, want: 2 * time.Minute},
		{name: "a date a minute after a Date in another form", retryAfter: oneMin, date: "Friday, 02-Jan-26 10:00:00 GMT", want: time.Minute},
		{name: "a date taken from the Date, not the Check's clock", retryAfter: oneMin, date: "Fri, 02 Jan 2026 09:59:00 GMT", want: 2 * time.Minute},
		{name: "a date without a Date, from the Check's clock", retryAfter: "Fri, 02 Jan 2026 10:00:30 GMT", want: 30 * time.Second},
		{name: "a date beside an unreadable Date, from the Check's clock", retryAfter: "Fri, 02 Jan 2026 10:00:30 GMT", date: "yesterday", want: 30 * time.Second},
		{name: "a date before the Date", retryAfter: "Fri, 02 Jan 2026 09:00:00 GMT", date: date, want: 0},
		{name: "a date before the Check's clock", retryAfter: "Thu, 01 Jan 2026 10:00:00 GMT", want: 0},
		{name: "a date too far ahead for a Duration", retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", date: date, want: math.MaxInt64},
		{name: "a date in another zone than GMT", retryAfter: "Fri, 02 Jan 2026 11:01:00 CET", date: date, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := cmp.Or(tt.status, http.StatusTooManyRequests)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp := response(r, status, "", -1)
				if tt.retryAfter != "" {
					resp.Header.Set("Retry-After", tt.retryAfter)
				}
				if tt.date != "" {
					resp.Header.Set("Date", tt.date)
				}
				return resp, nil
			})
			m := mustNew(t, Config{Endpoints: named("a", "http://a.example"), Base: base})
			m.now = func() time.Time { return clockAt("10:00:00") }
			var se *StatusError
			if err := check(m); !errors.As(err, &se) || se.StatusCode != status {
				t.Fatalf("Check = %v, want a *StatusError %d", err, status)
			}
			if se.RetryAfter != tt.want {
				t.Errorf("RetryAfter = %v, want %v", se.RetryAfter, tt.want)
			}
			want := fmt.Sprintf("HTTP status %d", status)
			if tt.want > 0 {
				want += ", retry after " + tt.want.String()
			}
			if se.Error() != want {
				t.Errorf("message %q, want %q", se, want)
			}
		})
	}
}

// An answer must be as long as its Content-Length says (a ContentLength of 0
// states one only beside a Content-Length header, as a Base building answers in
// memory often leaves it unset). A body longer than that, or over 4096 bytes
// whatever it says, is a bad answer; one that ends short of it cannot be told
// from a cut connection.
func TestAnswerMustBeAsLongAsItsContentLengthSays(t *testing.T) {
	const broken = "<a read error>" // at the end of a body, where reading it fails
	tests := []struct {
		name   string
		length int64  // the ContentLength the Base reports
		header string // the Content-Length header it sends; "" sends none
		body   string
		want   string // "" means height 100 is read; else part of the error
		kind   error  // what Check's error matches with errors.Is, if anything
		reason Reason
	}{
		{name: "a body as long as it says", length: int64(len(valid)), body: valid},
		{name: "a body without a length", length: -1, body: valid},
		{name: "a body whose length is left unset", length: 0, body: valid},
		{name: "a body longer than it says", length: int64(len(valid)), body: valid + " trailing",
			want: "longer than its Content-Length", kind: ErrBadAnswer, reason: ReasonBadAnswer},
		{name: "a body one byte longer than it says", length: int64(len(valid)) - 1, body: valid,
			want: "longer than its Content-Length", kind: ErrBadAnswer, reason: ReasonBadAnswer},
		{name: "a body that says, header and all, that it is empty", length: 0, header: "0", body: valid,
			want: "longer than its Content-Length", kind: ErrBadAnswer, reason: ReasonBadAnswer},
		{name: "a body one byte shorter than it says", length: int64(len(valid)) + 1, body: valid,
			want: "unexpected EOF", kind: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "an empty body with a length", length: int64(len(valid)), body: "",
			want: "unexpected EOF", kind: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "a read error after as much as it says", length: int64(len(valid)), body: valid + broken,
			want: "connection reset", reason: ReasonTransport},
		{name: "a body above the limit without a length", length: -1, body: valid + strings.Repeat(" ", maxBody),
			want: "larger than 4096", kind: ErrBadAnswer, reason: ReasonBadAnswer},
		{name: "a body above the limit and shorter than its length of 1 GiB", length: 1 << 30, body: valid + strings.Repeat(" ", maxBody),
			want: "larger than 4096", kind: ErrBadAnswer, reason: ReasonBadAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				text, failing := strings.CutSuffix(tt.body, broken)
				resp := response(r, http.StatusOK, text, tt.length)
				if failing {
					resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(text), iotest.ErrReader(errors.New("connection reset"))))
				}
				if tt.header != "" {
					resp.Header.Set("Content-Length", tt.header)
				}
				return resp, nil
			})
			m := mustNew(t, Config{Endpoints: named("a", "http://a.example"), Base: base})
			err := check(m)
			if tt.want == "" {
				if st := m.Status(); err != nil || st.Reference != 100 {
					t.Errorf("Check = %v, reference %d; want height 100 read", err, st.Reference)
				}
				return
			}
			pe := probeErrors(t, err)["a"]
			if pe == nil || !strings.Contains(pe.Error(), tt.want) {
				t.Fatalf("Check = %v, want a ProbeError saying %q", err, tt.want)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("%v does not match %v", err, tt.kind)
			}
			if got := pe.Reason(); got != tt.reason {
				t.Errorf("Reason() = %q, want %q", got, tt.reason)
			}
		})
	}
}

// An endpoint is asked its chain ID in every Check until it answers right, and
// never after. Until then its probe fails saying why, and its height counts for
// nothing, however far ahead.
func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	tests := []struct {
		name       string
		height     uint64 // the endpoint's; the confirmed one is at 100
		result     string // the chain ID answer in the first two Checks; "" answers HTTP 503
		heightDown bool   // the height probe answers HTTP 502 in the first two Checks
		want       string // the probe's error in those Checks
		asked      int    // chain ID requests in four Checks: 3 (two refused), or 1 if the first confirms
	}{
		{"after a failed chain ID request", 100, "", false, "chain ID request: HTTP status 503", 3},
		{"after a chain ID that is not canonical", 100, `"0x01"`, false, `chain ID request: result "0x01" is not a canonical hex quantity`, 3},
		{"after naming another chain at a plausible height", 100, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", 3},
		{"after naming another chain far ahead", 1_000_000, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", 3},
		{"after both requests failed, reported as the chain ID failure", 100, "", true, "chain ID request: HTTP status 503", 3},
		{"after a failed height probe beside the right chain", 100, `"0x1"`, true, "HTTP status 502", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, good := newProvider(t, tt.height), newProvider(t, 100)
			if tt.result == "" {
				n.on("eth_chainId", reply(http.StatusServiceUnavailable, ""))
			} else {
				n.serveChain(tt.result)
			}
			if tt.heightDown {
				n.on("eth_blockNumber", reply(http.StatusBadGateway, ""))
			}
			m := mustNew(t, Config{Endpoints: named("n", n.URL, "good", good.URL), ChainID: 1})
			for i := 1; i <= 2; i++ {
				errs := probeErrors(t, check(m))
				if pe := errs["n"]; len(errs) != 1 || pe == nil || pe.Err.Error() != tt.want {
					t.Fatalf("Check %d: errors %v, want only n's, saying %q", i, errs, tt.want)
				}
				wantEligible(t, m, verdicts{"n": false, "good": true})
				if st := m.Status(); st.Reference != 100 || st.Endpoints[0].Height != 0 || st.Endpoints[0].Err != errs["n"] {
					t.Errorf("Check %d: Status %+v, want reference 100, and n with its error and no height", i, st)
				}
			}
			n.on("eth_chainId", nil)
			n.on("eth_blockNumber", nil)
			n.serveChain(`"0x1"`)
			for i := 3; i <= 4; i++ {
				if err := check(m); err != nil || !m.Eligible("n") {
					t.Fatalf("Check %d: %v, eligible %v; want nil and true", i, err, m.Eligible("n"))
				}
			}
			if got := n.count("eth_chainId"); got != tt.asked {
				t.Errorf("%d chain ID requests over four Checks, want %d", got, tt.asked)
			}
			if got := n.count("eth_blockNumber"); got != 4 {
				t.Errorf("%d height probes over four Checks, want 4", got)
			}
		})
	}
}

// A chain ID confirmed in a Check that publishes nothing stays confirmed.
func TestChainIDConfirmedInACheckThatPublishesNothingIsKept(t *testing.T) {
	p := newProvider(t, 100)
	p.on("eth_blockNumber", reply(http.StatusBadGateway, ""))
	m := mustNew(t, Config{Endpoints: named("a", p.URL), ChainID: 1})
	if err := check(m); len(probeErrors(t, err)) != 1 || !m.Eligible("a") {
		t.Fatalf("Check 1 = %v, want a failure and the fail-open verdict kept", err)
	}
	p.on("eth_blockNumber", nil)
	if err := check(m); err != nil || p.count("eth_chainId") != 1 {
		t.Errorf("Check 2 = %v after %d chain ID requests, want nil after the first Check's one", err, p.count("eth_chainId"))
	}
}

// Each handler holds its answer until the other request of the probe has
// arrived, so requests sent one after the other would hang until the deadline.
func TestChainIDRequestRunsAlongsideHeightProbe(t *testing.T) {
	p := newProvider(t, 1)
	arrived := map[string]chan struct{}{"eth_blockNumber": make(chan struct{}), "eth_chainId": make(chan struct{})}
	other := map[string]string{"eth_blockNumber": "eth_chainId", "eth_chainId": "eth_blockNumber"}
	for method := range arrived {
		p.on(method, func(w http.ResponseWriter, r *http.Request) {
			close(arrived[method])
			select {
			case <-arrived[other[method]]:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, answer(1)) // height 1, and chain ID 1
		})
	}
	m := mustNew(t, Config{Endpoints: named("n", p.URL), ChainID: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Check(ctx); err != nil {
		t.Fatalf("Check: %v (were the two requests sent one after the other?)", err)
	}
}

// net/http hands a 101 answer over with the raw connection as its body, which
// the context no longer closes: the probe closes it when its time is up, so the
// answer fails as its status and the Check publishes, plainly and over TLS.
func TestSwitchingProtocolsAnswerFailsAsItsStatus(t *testing.T) {
	for name, start := range map[string]func(*httptest.Server){
		"a 101 answer fails as its status":          (*httptest.Server).Start,
		"a 101 answer fails as its status over TLS": (*httptest.Server).StartTLS,
	} {
		t.Run(name, func(t *testing.T) {
			hold := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				readRequest(t, r)
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: blocklag-test\r\n\r\n")
				buf.Flush()
				<-hold
			}))
			start(srv)
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(hold) }) // before Close, which waits for the handler
			good := newProvider(t, 100)
			m := mustNew(t, Config{Endpoints: named("upgraded", srv.URL, "good", good.URL), Base: srv.Client().Transport, ProbeTimeout: time.Second})
			done := make(chan error, 1)
			go func() { done <- check(m) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the 101 answer still holds the Check after a minute")
			}
			if pe := probeErrors(t, err)["upgraded"]; pe == nil || !statusIs(http.StatusSwitchingProtocols)(err) || pe.Reason() != ReasonHTTPStatus {
				t.Errorf("Check = %v, want the upgraded endpoint failed with HTTP status 101", err)
			}
			wantEligible(t, m, verdicts{"good": true, "upgraded": false})
		})
	}
}

// A URL's user name and password go out as Basic auth, decoded, as http.Client
// would send them; a URL without them sends none.
func TestUserinfoGoesOutAsBasicAuth(t *testing.T) {
	for url, want := range map[string]string{"http://us%20er:p%40ss@a.example/": "us er:p@ss", "http://a.example/": ""} {
		var got string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if user, password, ok := r.BasicAuth(); ok {
				got = user + ":" + password
			}
			return response(r, http.StatusOK, answer(1), -1), nil
		})
		if err := check(mustNew(t, Config{Endpoints: named("a", url), Base: base})); err != nil || got != want {
			t.Errorf("%s: Check = %v with Basic auth %q, want %q", url, err, got, want)
		}
	}
}

// stallingBody hands over head, then waits until closed and answers io.EOF, as
// a custom body may; with drip set it hands over a space every 2 ms instead,
// whatever Close does. A second Close panics.
type stallingBody struct {
	head   string
	drip   bool
	closed chan struct{}
	closes atomic.Int32
}

func (b *stallingBody) Read(p []byte) (int, error) {
	switch {
	case b.drip:
		time.Sleep(2 * time.Millisecond) // the drip itself, not a wait for another goroutine
		p[0] = ' '
		return 1, nil
	case b.head != "":
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	<-b.closed
	return 0, io.EOF
}

func (b *stallingBody) Close() error {
	if b.closes.Add(1) > 1 {
		panic("body closed twice")
	}
	close(b.closed)
	return nil
}

// A probe whose deadline ends while its body is read, or before its Base
// answers, fails as a timeout, never as what the cut body held: half an answer,
// a whole one followed by a stall, a drip that ignores Close, an answer handed
// back late. Its body is closed exactly once.
func TestCutOrLateAnswerFailsAsTimeout(t *testing.T) {
	for _, tt := range []struct {
		name string
		body *stallingBody
		late bool // the Base answers only once the request's context ended
	}{
		{"nothing before the stall", &stallingBody{}, false},
		{"half an answer", &stallingBody{head: `{"jsonrpc":"2.0",`}, false},
		{"a whole answer, then a stall", &stallingBody{head: answer(100)}, false},
		{"a drip that ignores Close", &stallingBody{drip: true}, false},
		{"an answer handed back late", &stallingBody{head: answer(100)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.body.closed = make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if tt.late {
					<-r.Context().Done()
				}
				resp := response(r, http.StatusOK, "", -1)
				resp.Body = tt.body
				return resp, nil
			})
			pe, _ := probeOne(t, Config{Endpoints: named("a", "http://rpc.example/"), Base: base, ProbeTimeout: 50 * time.Millisecond})
			if pe == nil || pe.Reason() != ReasonTimeout {
				t.Errorf("probe error %v, want a timeout", pe)
			}
			if n := tt.body.closes.Load(); n != 1 {
				t.Errorf("body closed %d times, want once", n)
			}
		})
	}
}
