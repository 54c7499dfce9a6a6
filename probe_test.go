package blocklag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// Every request goes through Config.Base, which is never closed, and is a
// POST to the URL as configured, with JSON headers and one of two exact
// bodies (the provider checks those on every request); the chain ID request
// goes out only with ChainID set, and only until the provider has
// confirmed.
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

// Any status but 200 fails the probe, whatever the body holds, and the
// provider is asked once: a failed probe is not retried, and a redirect is
// not followed. The status reaches code as a *StatusError, and its Reason
// tells a provider that refused us from one that is broken.
func TestStatusOtherThanOKFailsProbeOnce(t *testing.T) {
	tests := []struct {
		status int
		reason Reason
	}{
		{201, ReasonHTTPStatus},
		{204, ReasonHTTPStatus},
		{301, ReasonHTTPStatus},
		{401, ReasonUnauthorized},
		{402, ReasonUnauthorized},
		{403, ReasonUnauthorized},
		{404, ReasonHTTPStatus},
		{429, ReasonRateLimited},
		{500, ReasonHTTPStatus},
		{503, ReasonHTTPStatus},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("status %d fails after one request as %s", tt.status, tt.reason), func(t *testing.T) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", reply(tt.status, valid)) // no body with 204, which has none
			err := check(mustNew(t, Config{Endpoints: named("a", p.URL)}))
			want := fmt.Sprintf("HTTP status %d", tt.status)
			pe := probeErrors(t, err)["a"]
			if pe == nil || pe.Err.Error() != want || p.total() != 1 {
				t.Fatalf("probe error %v after %d requests, want %q after 1", pe, p.total(), want)
			}
			if got := pe.Reason(); got != tt.reason {
				t.Errorf("Reason() = %q, want %q", got, tt.reason)
			}
			if !statusIs(tt.status)(err) {
				t.Errorf("errors.As does not find a *StatusError with code %d in %v", tt.status, err)
			}
		})
	}
}

// An answer is read as long as its Content-Length says, and a Base that
// hands over a body of another length fails the probe, as one without a
// length is read up to the limit. A ContentLength of 0 states a length only
// with a Content-Length header beside it: a Base that builds its answers in
// memory often leaves the field unset. A body longer than its length, or
// over 4096 bytes whatever its length, is a bad answer; one that ends before
// its length cannot be told from a cut connection.
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
		{name: "a body far shorter than a length above the limit", length: 5000, body: valid,
			want: "unexpected EOF", kind: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "a body far shorter than a length of 1 GiB", length: 1 << 30, body: valid,
			want: "unexpected EOF", kind: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "an empty body with a length", length: int64(len(valid)), body: "",
			want: "unexpected EOF", kind: io.ErrUnexpectedEOF, reason: ReasonTransport},
		{name: "a read error after as much as it says", length: int64(len(valid)), body: valid + broken,
			want: "connection reset", reason: ReasonTransport},
		{name: "a body above the limit without a length", length: -1, body: valid + strings.Repeat(" ", maxBody),
			want: "larger than 4096", kind: ErrBadAnswer, reason: ReasonBadAnswer},
		{name: "a body above the limit and longer than its length", length: maxBody + 1, body: valid + strings.Repeat(" ", maxBody),
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

// An endpoint is asked its chain ID in every Check until it answers right,
// and never again after that. Until then it fails its probe, with an error
// that says why, and its height counts for nothing: it is not eligible, and
// the reference stays the confirmed provider's even when the other is far
// ahead. Its chain ID and height answers are judged apart.
func TestChainIDIsAskedUntilConfirmed(t *testing.T) {
	tests := []struct {
		name       string
		height     uint64 // the endpoint's; the confirmed one is at 100
		result     string // the chain ID answer in the first two Checks; "" answers HTTP 503
		heightDown bool   // the height probe answers HTTP 502 in the first two Checks
		want       string // the probe's error in those Checks
		confirms   bool   // the first Check already confirms
	}{
		{"after a failed chain ID request", 100, "", false, "chain ID request: HTTP status 503", false},
		{"after a chain ID that is not canonical", 100, `"0x01"`, false, `chain ID request: result "0x01" is not a canonical hex quantity`, false},
		{"after naming another chain at a plausible height", 100, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", false},
		{"after naming another chain far ahead", 1_000_000, `"0xaa36a7"`, false, "chain ID 11155111 (0xaa36a7), want 1", false},
		{"after both requests failed, reported as the chain ID failure", 100, "", true, "chain ID request: HTTP status 503", false},
		{"after a failed height probe beside the right chain", 100, `"0x1"`, true, "HTTP status 502", true},
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
			want := 3 // two refused, one confirming
			if tt.confirms {
				want = 1
			}
			if got := n.count("eth_chainId"); got != want {
				t.Errorf("%d chain ID requests over four Checks, want %d", got, want)
			}
			if got := n.count("eth_blockNumber"); got != 4 {
				t.Errorf("%d height probes over four Checks, want 4", got)
			}
		})
	}
}

// A confirmation of the chain ID is kept even by a Check that publishes
// nothing: here every endpoint confirms its chain in the first Check while
// every height probe fails, and the second Check asks none of them again.
func TestChainIDConfirmedInACheckThatPublishesNothingIsKept(t *testing.T) {
	a, b := newProvider(t, 100), newProvider(t, 100)
	for _, p := range []*provider{a, b} {
		p.on("eth_blockNumber", reply(http.StatusBadGateway, ""))
	}
	m := mustNew(t, Config{Endpoints: named("a", a.URL, "b", b.URL), ChainID: 1})
	var ce *CheckError
	if err := check(m); !errors.As(err, &ce) || ce.Published || len(ce.Errors) != 2 {
		t.Fatalf("Check 1 = %v, want every probe failed and nothing published", err)
	}
	for _, p := range []*provider{a, b} {
		p.on("eth_blockNumber", nil)
	}
	if err := check(m); err != nil {
		t.Fatalf("Check 2 = %v, want nil", err)
	}
	for id, p := range map[string]*provider{"a": a, "b": b} {
		if got := p.count("eth_chainId"); got != 1 {
			t.Errorf("%s was asked its chain ID %d times over two Checks, want once, in the first", id, got)
		}
	}
}

// Each handler holds its answer until the other request of the same probe
// has arrived, so a Check that sent them one after the other would never
// finish; the deadline only turns that hang into a failure.
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
