package blocklag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The bodies of the two requests a probe sends. The id never changes, so a
// provider that answers every request with id 1 is still judged.
const (
	blockNumberRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`
	chainIDRequest     = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
)

// userAgent names blocklag to providers, so that their dashboards tell its
// probes from the application's reads, with the module's version when the build
// records one.
var userAgent = func() string {
	const module = "github.com/yermakovsa/failnext-blocklag"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append(info.Deps, &info.Main) {
			if m.Path == module && strings.HasPrefix(m.Version, "v") {
				return "failnext-blocklag/" + m.Version
			}
		}
	}
	return "failnext-blocklag"
}()

// probe asks one provider for its height and, when askChain is set, its chain
// ID beside it, under one ProbeTimeout.
func (m *Monitor) probe(ctx context.Context, ep endpoint, askChain bool) outcome {
	if m.probeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, m.probeTimeout, errProbeTimeout)
		defer cancel()
	}
	var chain chan error // made only when needed: most probes never ask
	if askChain {
		chain = make(chan error, 1)
		go func() { chain <- m.confirmChain(ctx, ep) }()
	}
	var o outcome
	o.height, o.err = m.requestQuantity(ctx, ep, blockNumberRequest)
	if chain != nil {
		if err := <-chain; err != nil {
			return outcome{err: err}
		}
		o.confirmed = true
	}
	return o
}

// errProbeTimeout is the cause of a probe's own deadline, which tells it from
// the end of the Check's time (an *outOfCheckTime) and of its context.
var errProbeTimeout = errors.New("probe timeout")

// outOfCheckTime is the cause of the deadline that withinCheckTime sets; after
// is how long the probes had.
type outOfCheckTime struct{ after time.Duration }

func (e *outOfCheckTime) Error() string {
	return fmt.Sprintf("ran out of the Check's time after %v", e.after)
}

// confirmChain returns nil when the provider reports Config.ChainID as its
// chain ID, judged as the height is, and otherwise says why not.
func (m *Monitor) confirmChain(ctx context.Context, ep endpoint) error {
	id, err := m.requestQuantity(ctx, ep, chainIDRequest)
	if err != nil {
		return annotate("chain ID request", err, m.redactor)
	}
	if id != m.chainID {
		wrong := &ChainIDError{Got: id, Want: m.chainID}
		wrong.msg = m.redactor.Message(wrong.format())
		return wrong
	}
	return nil
}

// requestQuantity posts one request to ep and returns the quantity that its
// answer carries, by the rules of the package doc's section on probes. It
// calls the Base's RoundTrip itself, with Basic auth from the URL's userinfo
// as http.Client would set it, so that nothing is redirected and no error
// quotes the URL.
func (m *Monitor) requestQuantity(ctx context.Context, ep endpoint, request string) (uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, strings.NewReader(request))
	if err != nil {
		// New parsed the URL, so this cannot happen; the error would quote it.
		return 0, errors.New("cannot build the request")
	}
	req.Header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
		// Left unset, net/http would ask for gzip and decode it unseen, so that
		// maxBody would count decoded bytes: a few bytes of deflate can stand
		// for megabytes, or for an endless stream.
		"Accept-Encoding": {"identity"},
		"User-Agent":      {userAgent},
	}
	setBasicAuth(req)
	resp, err := m.base.RoundTrip(req)
	if err == nil && resp != nil && ctx.Err() != nil {
		err = context.Cause(ctx) // an answer after the probe's end is too late to count
	}
	if resp != nil && resp.Body == nil {
		resp.Body = http.NoBody
	}
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return 0, m.transportFailure(ctx, "", err)
	} else if resp == nil {
		return 0, errors.New("Config.Base returned neither an answer nor an error")
	}
	defer closeWhenDone(ctx, resp.Body)()
	body, err := m.readBody(ctx, resp)
	if resp.StatusCode != http.StatusOK {
		return 0, m.statusError(resp, body) // readBody's error, if any, left body nil
	}
	if err != nil {
		return 0, err
	}
	return parseQuantity(body, m.redactor)
}

// closeWhenDone closes body once ctx ends, whatever the body does (net/http
// hands a 101 answer over with the raw connection as its body, which the
// context no longer closes). closeNow waits for a close that ctx started, or
// closes body itself: exactly once, as a second Close may panic.
func closeWhenDone(ctx context.Context, body io.Closer) (closeNow func()) {
	closeOnce := sync.OnceFunc(func() { body.Close() })
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		closeOnce()
		close(closed)
	})
	return func() {
		if !stop() {
			<-closed
		}
		closeOnce()
	}
}

// readBody reads at most maxBody+1 bytes of resp's body. Once ctx ends, the
// read fails as that end, never as what the body held. When the response
// states its length and the body, within maxBody, has another, the read
// fails: as a bad answer when the body is longer, and as a cut connection
// (io.ErrUnexpectedEOF) when it is shorter.
func (m *Monitor) readBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	within := readerFunc(func(p []byte) (int, error) {
		n, err := resp.Body.Read(p)
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		return n, err
	})
	body, err := io.ReadAll(io.LimitReader(within, maxBody+1))
	n := int64(len(body))
	if err == nil && n <= maxBody && statesLength(resp) && n != resp.ContentLength {
		if n > resp.ContentLength {
			// Only a custom Base can hand over more than it stated:
			// http.Transport stops at the length.
			return nil, badAnswer(m.redactor, "answer longer than its Content-Length of %d bytes",
				resp.ContentLength)
		}
		err = io.ErrUnexpectedEOF // a cut connection, as net/http itself reports one
	}
	if err != nil {
		return nil, m.transportFailure(ctx, "reading answer", err)
	}
	return body, nil
}

// readerFunc is a function that reads as an io.Reader does.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// statusError is the failure of an answer whose status is not 200, whatever its
// body (nil when it broke a limit): a JSON-RPC error object in it, as Infura
// sends with its 429, is kept.
func (m *Monitor) statusError(resp *http.Response, body []byte) *StatusError {
	se := &StatusError{
		StatusCode: resp.StatusCode,
		RetryAfter: retryAfter(resp.Header, m.now),
		RPC:        errorObject(body, m.redactor),
	}
	se.msg = m.redactor.Message(se.format())
	return se
}

// retryAfter reads h's Retry-After header as StatusError.RetryAfter says.
func retryAfter(h http.Header, now func() time.Time) time.Duration {
	value := h.Get("Retry-After")
	if value == "" {
		return 0
	}
	if strings.Trim(value, "0123456789") == "" {
		// Only digits: delay-seconds, which ParseUint fails only when too
		// large for any Duration.
		seconds, err := strconv.ParseUint(value, 10, 64)
		if err != nil || seconds > uint64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(seconds) * time.Second
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	from, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		from = now()
	}
	// Sub gives the largest or smallest Duration rather than wrapping.
	return max(at.Sub(from), 0)
}

// statesLength reports whether resp states its length: a 0 only with a
// Content-Length header, as a Base's answers often leave the field unset.
func statesLength(resp *http.Response) bool {
	return resp.ContentLength > 0 || resp.ContentLength == 0 && resp.Header.Get("Content-Length") != ""
}

// transportFailure returns why sending or reading failed, after the words
// doing when they are set: the end of the probe's time when that ended it,
// else transportError's copy of err.
func (m *Monitor) transportFailure(ctx context.Context, doing string, err error) error {
	cause := context.Cause(ctx)
	if late, ok := cause.(*outOfCheckTime); ok {
		return annotate(late.Error(), context.DeadlineExceeded, m.redactor)
	}
	if cause == errProbeTimeout {
		words := fmt.Sprintf("timed out after %v", m.probeTimeout)
		return annotate(words, context.DeadlineExceeded, m.redactor)
	}
	err = transportError(err, m.redactor)
	if doing != "" {
		err = annotate(doing, err, m.redactor)
	}
	return err
}
