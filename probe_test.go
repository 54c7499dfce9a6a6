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

// Every request goes through Config.Base, which is never closed, to the URL
// as configured (readRequest checks the rest); the chain ID request goes out
// only with ChainID set.
func TestProbesArePostsToTheURLAsConfiguredThroughBase(t *testing.T) {
	tests := []struct {
		name    string
		chainID uint64
		heights int // height probes sent over three Checks of two endpoints
		chains  int // chain ID requests sent over those Checks
	}{
		{"without ChainID only height probes are sent", 0, 6, 0},
		{"with ChainID the chain ID requests go to the same URL", 1, 6, 2},
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
			heights := p.count("eth_blockNumber")
			chains := p.count("eth_chainId")
			if heights != tt.heights || chains != tt.chains || p.total() != heights+chains {
				t.Errorf("sent %d height probes, %d chain ID requests and %d in all; "+
					"want %d, %d and no other", heights, chains, p.total(), tt.heights, tt.chains)
			}
			want := map[string]int{"/v3/key?apikey=k&x=1": tt.heights + tt.chains}
			if uris := p.requestURIs(); !maps.Equal(uris, want) {
				t.Errorf("requests went to %v, want every one to the URL as configured, %v", uris, want)
			}
			if n := int(base.requests.Load()); n != tt.heights+tt.chains || base.closings.Load() != 0 {
				t.Errorf("Base saw %d requests and %d closes, want all requests and no close",
					n, base.closings.Load())
			}
		})
	}
}

// A Base that breaks the RoundTripper contract fails the probe as a
// transport failure that says how (an answer without a body is an empty
// one), and a body it returned beside an error is closed all the same.
func TestBaseThatBreaksTheContractFailsTheProbe(t *testing.T) {
	closed := make(chan struct{})
	tests := []struct {
		name string
		base roundTripFunc
		want string
	}{
		{
			name: "neither an answer nor an error",
			base: func(*http.Request) (*http.Response, error) { return nil, nil },
			want: "Config.Base returned neither an answer nor an error",
		},
		{
			name: "an answer of stated length without a body",
			base: func(r *http.Request) (*http.Response, error) {
				resp := response(r, http.StatusOK, "", 5)
				resp.Body = nil
				return resp, nil
			},
			want: `reading answer: "unexpected EOF"`,
		},
		{
			name: "an answer together with an error",
			base: func(r *http.Request) (*http.Response, error) {
				resp := response(r, http.StatusOK, answer(100), -1)
				return onceClosed(resp, func() { close(closed) }), errors.New("circuit open")
			},
			want: `"circuit open"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a transport failure", func(t *testing.T) {
			pe, err := probeOne(t, Config{Endpoints: named("a", "http://a.example"), Base: tt.base})
			if !strings.Contains(pe.Error(), tt.want) || !noTypedFailure(err) {
				t.Errorf("probe error %q, want a transport failure saying %q", pe, tt.want)
			}
		})
	}
	// Check has returned, so it has closed every body it will close.
	select {
	case <-closed:
	default:
		t.Error("the answer that came with an error was not closed")
	}
}

// Any status but 200 fails the probe as a *StatusError after one request:
// nothing is retried, and no redirect is followed, whatever its Location.
// Only a JSON-RPC 2.0 error object in the body counts: the *StatusError
// keeps it as an *RPCError. Any other body leaves a plain *StatusError:
// never a transport failure or a bad answer. How much of a body is read is
// pinned below, and which Reason a status gives in errors_test.go.
func TestStatusOtherThanOKFailsProbeOnceKeepingOnlyAJSONRPCError(t *testing.T) {
	infura := rpcErrorAnswer(-32005, "daily request count exceeded")
	limit := &RPCError{Code: -32005, Message: "daily request count exceeded"}
	const good = "http://good.example/"
	tests := []struct {
		name     string
		status   int
		location string // the Location header, as it is; "" sends none
		body     string
		rpc      *RPCError
	}{
		{name: "a valid answer", status: 201, body: valid},
		{name: "an empty answer", status: 204},
		{name: "a valid answer", status: 401, body: valid},
		{name: "a valid answer", status: 402, body: valid},
		{name: "a valid answer", status: 403, body: valid},
		{name: "a valid answer", status: 404, body: valid},
		{name: "a valid answer", status: 429, body: valid},
		{name: "a valid answer", status: 500, body: valid},
		{name: "a valid answer", status: 503, body: valid},
		{name: "a redirect to a good provider", status: 301, location: good, body: valid},
		{name: "a redirect to an invalid escape", status: 302, location: "/v3/%zz", body: valid},
		{name: "a redirect to an unclosed IPv6 host", status: 303, location: "http://[::1", body: valid},
		{name: "a temporary redirect to a good provider", status: 307, location: good, body: valid},
		{name: "a redirect to a host with a space", status: 308, location: "http://rpc example:port/",
			body: valid},
		{name: "a redirect without a Location", status: 302, body: valid},

		{name: "Infura's rate limit", status: 429, body: infura, rpc: limit},
		{name: "a rate limit with a null id", status: 429,
			body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"slow down"}}`,
			rpc:  &RPCError{Code: -32005, Message: "slow down"}},
		{name: "a rate-limiting code", status: 503, body: infura, rpc: limit},
		{name: "the code 429", status: 401, body: rpcErrorAnswer(429, "too many requests"),
			rpc: &RPCError{Code: 429, Message: "too many requests"}},
		{name: "another code", status: 403, body: rpcErrorAnswer(-32001, "invalid project id"),
			rpc: &RPCError{Code: -32001, Message: "invalid project id"}},
		{name: "an error without a message", status: 500,
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}`,
			rpc:  &RPCError{Code: -32603}},
		{name: "a rate limit without a message", status: 503,
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005}}`,
			rpc:  &RPCError{Code: -32005}},
		{name: "an escaped version and white space around", status: 429,
			body: " \r\n{\"error\":{\"code\":-32005,\"message\":\"x\"},\"id\":1,\"jsonrpc\":\"2\\u002e0\"}\n",
			rpc:  &RPCError{Code: -32005, Message: "x"}},

		{name: "an HTML page", status: 502,
			body: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"},
		{name: "an empty body", status: 503, body: ""},
		{name: "a JSON array", status: 503, body: "[" + infura + "]"},
		{name: "jsonrpc 1.0", status: 503,
			body: `{"jsonrpc":"1.0","id":1,"error":{"code":-32005,"message":"x"}}`},
		{name: "id 2", status: 503, body: `{"jsonrpc":"2.0","id":2,"error":{"code":-32005,"message":"x"}}`},
		{name: "id the string \"1\"", status: 503,
			body: `{"jsonrpc":"2.0","id":"1","error":{"code":-32005,"message":"x"}}`},
		{name: "no id", status: 503, body: `{"jsonrpc":"2.0","error":{"code":-32005,"message":"x"}}`},
		{name: "no error", status: 503, body: `{"jsonrpc":"2.0","id":1,"result":"0x64"}`},
		{name: "a null error", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":null}`},
		{name: "an error that is a string", status: 503, body: `{"jsonrpc":"2.0","id":1,"error":"-32005"}`},
		{name: "an error without a code", status: 503,
			body: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`},
		{name: "a code that is not an integer", status: 503,
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005.5,"message":"x"}}`},
		{name: "a message that is not a string", status: 503,
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":5}}`},
		{name: "a member named twice", status: 503,
			body: `{"jsonrpc":"2.0","id":1,"id":1,"error":{"code":-32005,"message":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name+" in a "+strconv.Itoa(tt.status)+" fails after one request", func(t *testing.T) {
			var requests atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				resp := response(r, tt.status, tt.body, -1)
				if tt.location != "" {
					resp.Header["Location"] = []string{tt.location} // as it is, unlike Set
				}
				return resp, nil
			})
			pe, err := probeOne(t, Config{Endpoints: named("a", "http://a.example"), Base: base})
			se, ok := pe.Err.(*StatusError)
			if !ok || se.StatusCode != tt.status {
				t.Fatalf("probe error %v (%T), want a *StatusError %d itself", pe, pe.Err, tt.status)
			}
			// Compared by its exported fields: an RPCError keeps more.
			if (se.RPC == nil) != (tt.rpc == nil) ||
				se.RPC != nil && (se.RPC.Code != tt.rpc.Code || se.RPC.Message != tt.rpc.Message) {
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
			if errors.Is(err, ErrBadAnswer) || errors.Is(err, io.ErrUnexpectedEOF) || timedOut(err) {
				t.Errorf("%v is a bad answer, a transport failure or a timeout; want the status alone", err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1: none retried, no redirect followed", n)
			}
		})
	}
}

// bodyCase is a way a Base hands over the body of an answer, and what a
// probe makes of it when the answer's status is 200.
type bodyCase struct {
	name   string
	length func(n int) int64 // the ContentLength the Base states for a body of n bytes
	header string            // the Content-Length header beside it; "" sends none
	empty  bool              // the body is sent empty, whatever its stated length
	padTo  int               // white space follows the body up to this many bytes in all
	then   func() io.Reader  // what the body gives after its bytes; nil ends it
	slow   bool              // the body outlasts the probe's ProbeTimeout of 50 ms
	// With status 200: "" means that the height is read, else part of the
	// probe's error; is is what that error matches, nil for a transport
	// failure.
	want string
	is   error
}

// The ContentLengths that a Base may state for a body of n bytes.
func itsLength(n int) int64    { return int64(n) }
func unknownLength(int) int64  { return -1 }
func unsetLength(int) int64    { return 0 }
func oneByteLess(n int) int64  { return int64(n) - 1 }
func oneByteMore(n int) int64  { return int64(n) + 1 }
func oneGiB(int) int64         { return 1 << 30 }
func resetReader() io.Reader   { return iotest.ErrReader(errors.New("connection reset")) }
func endlessSpaces() io.Reader { return spaces{} }
func dripOfSpaces() io.Reader  { return &stallingBody{drip: true} }

// bodyCases are the limits of reading any answer, whatever its status: at
// most 4096 bytes, as long as a stated Content-Length says (a ContentLength
// of 0 states one only beside a Content-Length header, as a Base building
// answers in memory often leaves it unset), and within the probe's time. A
// body longer than that is a bad answer; one that ends short of it cannot
// be told from a cut connection.
var bodyCases = []bodyCase{
	{name: "a body as long as its Content-Length", length: itsLength},
	{name: "a body without a Content-Length", length: unknownLength},
	{name: "a body whose ContentLength is left unset", length: unsetLength},
	{name: "a body padded to 4096 bytes", length: unknownLength, padTo: maxBody},
	{name: "a body padded to 4097 bytes", length: unknownLength, padTo: maxBody + 1,
		want: "larger than 4096", is: ErrBadAnswer},
	{name: "a body above the limit and short of its Content-Length of 1 GiB",
		length: oneGiB, padTo: maxBody + 1, want: "larger than 4096", is: ErrBadAnswer},
	{name: "a body followed by endless white space", length: unknownLength, then: endlessSpaces,
		want: "larger than 4096", is: ErrBadAnswer},
	{name: "a read error after 4097 bytes, which are as many as are read", length: unknownLength,
		padTo: maxBody + 1, then: resetReader, want: "larger than 4096", is: ErrBadAnswer},
	{name: "a body one byte longer than its Content-Length", length: oneByteLess,
		want: "longer than its Content-Length", is: ErrBadAnswer},
	{name: "a body whose Content-Length header says it is empty", length: unsetLength, header: "0",
		want: "longer than its Content-Length", is: ErrBadAnswer},
	{name: "a body one byte short of its Content-Length", length: oneByteMore,
		want: "unexpected EOF", is: io.ErrUnexpectedEOF},
	{name: "an empty body with a Content-Length", length: itsLength, empty: true,
		want: "unexpected EOF", is: io.ErrUnexpectedEOF},
	{name: "a read error after as much as its Content-Length says", length: itsLength, then: resetReader,
		want: "connection reset"},
	{name: "a body that never ends", length: unknownLength, then: dripOfSpaces, slow: true,
		want: "timed out", is: context.DeadlineExceeded},
}

// config is a Config of one endpoint, "a", whose Base answers with status
// and body, handed over as c says.
func (c bodyCase) config(status int, body string) Config {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		length := c.length(len(body))
		sent := body
		if c.empty {
			sent = ""
		}
		sent += strings.Repeat(" ", max(0, c.padTo-len(sent)))
		resp := response(r, status, sent, length)
		if c.header != "" {
			resp.Header.Set("Content-Length", c.header)
		}
		if c.then != nil {
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(sent), c.then()))
		}
		return resp, nil
	})
	cfg := Config{Endpoints: named("a", "http://a.example"), Base: base}
	if c.slow {
		cfg.ProbeTimeout = 50 * time.Millisecond
	}
	return cfg
}

// A 200 answer's body reaches the answer rules only when it is read whole
// within the limits, and so does a JSON-RPC error in a 429's body; a 429
// whose body breaks a limit fails as its status alone.
func TestBodyIsReadWithinTheSameLimitsWhateverTheStatus(t *testing.T) {
	infura := rpcErrorAnswer(-32005, "daily request count exceeded")
	for _, tt := range bodyCases {
		t.Run(tt.name+" in a 200 answer", func(t *testing.T) {
			m := mustNew(t, tt.config(http.StatusOK, valid))
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
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v does not match %v", err, tt.is)
			}
			if tt.is == nil && !noTypedFailure(err) {
				t.Errorf("%v is not a transport failure", err)
			}
		})
		t.Run(tt.name+" in a 429 answer", func(t *testing.T) {
			pe, err := probeOne(t, tt.config(http.StatusTooManyRequests, infura))
			se, ok := pe.Err.(*StatusError)
			if !ok || se.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("probe error %v (%T), want a *StatusError 429 itself", pe, pe.Err)
			}
			if kept := se.RPC != nil && se.RPC.Code == -32005; kept != (tt.want == "") {
				t.Errorf("RPC = %v; want the RPC error kept only from a body read whole", se.RPC)
			}
			if errors.Is(err, ErrBadAnswer) || errors.Is(err, io.ErrUnexpectedEOF) || timedOut(err) {
				t.Errorf("%v is a bad answer, a transport failure or a timeout; want the status alone", err)
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

// StatusError.RetryAfter reads Retry-After: seconds, or an HTTP-date in any
// of its three forms taken from the answer's Date or, without a readable
// one, from the Check's clock (here 10:00:00, a Friday). It is 0 when
// absent, unreadable or past, and at most the largest Duration.
func TestRetryAfterIsReadInEveryForm(t *testing.T) {
	const (
		date   = "Fri, 02 Jan 2026 10:00:00 GMT" // the Check's clock, as an answer's Date
		oneMin = "Fri, 02 Jan 2026 10:01:00 GMT"
		at1030 = "Fri, 02 Jan 2026 10:00:30 GMT"
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
		{name: "more seconds than a uint64 holds", retryAfter: "99999999999999999999999",
			want: math.MaxInt64},
		{name: "negative seconds", retryAfter: "-5", want: 0},
		{name: "a fraction of seconds", retryAfter: "1.5", want: 0},
		{name: "seconds with a unit", retryAfter: "60s", want: 0},
		{name: "an IMF-fixdate a minute after the Date", retryAfter: oneMin, date: date, want: time.Minute},
		{name: "an RFC 850 date 90 s after the Date", retryAfter: "Friday, 02-Jan-26 10:01:30 GMT",
			date: date, want: 90 * time.Second},
		{name: "an asctime date 2 min after the Date", retryAfter: "Fri Jan  2 10:02:00 2026", date: date,
			want: 2 * time.Minute},
		{name: "a date a minute after a Date in another form", retryAfter: oneMin,
			date: "Friday, 02-Jan-26 10:00:00 GMT", want: time.Minute},
		{name: "a date taken from the Date, not the Check's clock", retryAfter: oneMin,
			date: "Fri, 02 Jan 2026 09:59:00 GMT", want: 2 * time.Minute},
		{name: "a date without a Date, from the Check's clock", retryAfter: at1030, want: 30 * time.Second},
		{name: "a date beside an unreadable Date, from the Check's clock", retryAfter: at1030,
			date: "yesterday", want: 30 * time.Second},
		{name: "a date before the Date", retryAfter: "Fri, 02 Jan 2026 09:00:00 GMT", date: date, want: 0},
		{name: "a date before the Check's clock", retryAfter: "Thu, 01 Jan 2026 10:00:00 GMT", want: 0},
		{name: "a date too far ahead for a Duration", retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", date: date,
			want: math.MaxInt64},
		{name: "a date in another zone than GMT", retryAfter: "Fri, 02 Jan 2026 11:01:00 CET", date: date,
			want: 0},
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

// An endpoint is asked its chain ID in every Check until it answers right,
// and never after. Until then its probe fails saying why, and its height
// counts for nothing, however far ahead.
func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	const anotherChain = "chain ID 11155111 (0xaa36a7), want 1"
	tests := []struct {
		name       string
		height     uint64 // the endpoint's; the confirmed one is at 100
		result     string // the chain ID answer in the first two Checks; "" answers HTTP 503
		heightDown bool   // the height probe answers HTTP 502 in the first two Checks
		want       string // the probe's error in those Checks
		asked      int    // chain ID requests in four Checks: 3 (two refused), or 1 if the first confirms
	}{
		{"after a failed chain ID request", 100, "", false, "chain ID request: HTTP status 503", 3},
		{"after a chain ID that is not canonical", 100, `"0x01"`, false,
			`chain ID request: result "0x01" is not a canonical hex quantity`, 3},
		{"after naming another chain at a plausible height", 100, `"0xaa36a7"`, false, anotherChain, 3},
		{"after naming another chain far ahead", 1_000_000, `"0xaa36a7"`, false, anotherChain, 3},
		{"after both requests failed, reported as the chain ID failure", 100, "", true,
			"chain ID request: HTTP status 503", 3},
		{"after a failed height probe beside the right chain", 100, `"0x1"`, true, "HTTP status 502", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newProvider(t, tt.height)
			good := newProvider(t, 100)
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
				st := m.Status()
				if st.Reference != 100 || st.Endpoints[0].Height != 0 || st.Endpoints[0].Err != errs["n"] {
					t.Errorf("Check %d: Status %+v, want reference 100, and n with its error and no height",
						i, st)
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
		t.Errorf("Check 2 = %v after %d chain ID requests, want nil after the first Check's one",
			err, p.count("eth_chainId"))
	}
}

// Each handler holds its answer until the other request of the probe has
// arrived, so requests sent one after the other would hang until the
// deadline.
func TestChainIDRequestRunsAlongsideHeightProbe(t *testing.T) {
	p := newProvider(t, 1)
	arrived := map[string]chan struct{}{
		"eth_blockNumber": make(chan struct{}),
		"eth_chainId":     make(chan struct{}),
	}
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

// net/http hands a 101 answer over with the raw connection as its body,
// which the context no longer closes: the probe closes it when its time is
// up, so the answer fails as its status and the Check publishes, plainly
// and over TLS.
func TestSwitchingProtocolsAnswerFailsAsItsStatus(t *testing.T) {
	tests := []struct {
		name  string
		start func(*httptest.Server)
	}{
		{"a 101 answer fails as its status", (*httptest.Server).Start},
		{"a 101 answer fails as its status over TLS", (*httptest.Server).StartTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each waits for its ProbeTimeout
			hold := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				readRequest(t, r)
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				buf.WriteString("HTTP/1.1 101 Switching Protocols\r\n" +
					"Connection: Upgrade\r\nUpgrade: blocklag-test\r\n\r\n")
				buf.Flush()
				<-hold
			}))
			tt.start(srv)
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(hold) }) // before Close, which waits for the handler
			good := newProvider(t, 100)
			m := mustNew(t, Config{
				Endpoints:    named("upgraded", srv.URL, "good", good.URL),
				Base:         srv.Client().Transport,
				ProbeTimeout: 2 * time.Second, // time enough for the TLS handshake on a busy machine
			})
			done := make(chan error, 1)
			go func() { done <- check(m) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute): // a guard against hanging, not a synchronisation
				t.Fatal("the 101 answer still holds the Check after a minute")
			}
			pe := probeErrors(t, err)["upgraded"]
			if pe == nil || !statusIs(http.StatusSwitchingProtocols)(pe) {
				t.Errorf("Check = %v, want the upgraded endpoint failed with HTTP status 101", err)
			}
			wantEligible(t, m, verdicts{"good": true, "upgraded": false})
		})
	}
}

// A URL's user name and password go out as Basic auth, decoded, as
// http.Client would send them; a URL without them sends none.
func TestUserinfoGoesOutAsBasicAuth(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"a URL's escaped user name and password go out decoded", "http://us%20er:p%40ss@a.example/",
			"us er:p@ss"},
		{"a URL without them sends no Basic auth", "http://a.example/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if user, password, ok := r.BasicAuth(); ok {
					got = user + ":" + password
				}
				return response(r, http.StatusOK, answer(1), -1), nil
			})
			err := check(mustNew(t, Config{Endpoints: named("a", tt.url), Base: base}))
			if err != nil || got != tt.want {
				t.Errorf("Check = %v with Basic auth %q, want %q", err, got, tt.want)
			}
		})
	}
}

// stallingBody hands over head, then waits until closed and answers io.EOF,
// as a custom body may; with drip set it hands over a space every 2 ms
// instead, whatever Close does. A second Close panics.
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
	if b.closed != nil {
		close(b.closed)
	}
	return nil
}

// A probe whose deadline ends while its body is read, or before its Base
// answers, fails as a timeout, never as what the cut body held: half an
// answer, a whole one followed by a stall, a drip that ignores Close, an
// answer handed back late. Its body is closed exactly once.
func TestCutOrLateAnswerFailsAsTimeout(t *testing.T) {
	tests := []struct {
		name string
		body *stallingBody
		late bool // the Base answers only once the request's context ended
	}{
		{"nothing before the stall", &stallingBody{}, false},
		{"half an answer", &stallingBody{head: `{"jsonrpc":"2.0",`}, false},
		{"a whole answer, then a stall", &stallingBody{head: answer(100)}, false},
		{"a drip that ignores Close", &stallingBody{drip: true}, false},
		{"an answer handed back late", &stallingBody{head: answer(100)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name+" fails as a timeout", func(t *testing.T) {
			tt.body.closed = make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if tt.late {
					<-r.Context().Done()
				}
				resp := response(r, http.StatusOK, "", -1)
				resp.Body = tt.body
				return resp, nil
			})
			pe, _ := probeOne(t, Config{
				Endpoints:    named("a", "http://rpc.example/"),
				Base:         base,
				ProbeTimeout: 50 * time.Millisecond,
			})
			if !timedOut(pe) || errors.Is(pe, ErrBadAnswer) {
				t.Errorf("probe error %v, want a timeout", pe)
			}
			if n := tt.body.closes.Load(); n != 1 {
				t.Errorf("body closed %d times, want once", n)
			}
		})
	}
}
