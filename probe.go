package blocklag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// blockNumberRequest is the body of every height probe. The id never
// changes, so a provider that answers every request with id 1, whatever the
// request carried, is still judged on its height.
const blockNumberRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`

// chainIDRequest asks a provider which chain it serves. Like the height
// probe, it always carries id 1.
const chainIDRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`

// probe asks one provider for its height and, when askChain is set, for
// its chain ID at the same time, both under one ProbeTimeout. A chain ID
// failure or mismatch fails the probe whatever the height answer was, since
// a height from another chain means nothing here. Errors describe the
// failure without the provider's URL; Check wraps them in a *ProbeError.
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
	o.height, o.err = m.fetch(ctx, ep, blockNumberRequest)
	if chain != nil {
		if err := <-chain; err != nil {
			return outcome{err: err}
		}
		o.confirmed = true
	}
	return o
}

// errProbeTimeout is the cause of a probe's own deadline. It tells that
// deadline apart from the end of the Check's context, whose cause differs.
var errProbeTimeout = errors.New("probe timeout")

// confirmChain returns nil when the provider reports Config.ChainID as its
// chain ID, and otherwise says why not. It sends the request and judges the
// answer exactly as the height probe does. A mismatch shows both IDs in
// decimal, as users configure them, with the hex the provider sent.
func (m *Monitor) confirmChain(ctx context.Context, ep endpoint) error {
	id, err := m.fetch(ctx, ep, chainIDRequest)
	if err != nil {
		return prefix("chain ID request", err, m.secrets)
	}
	if id != m.chainID {
		return &ChainIDError{Got: id, Want: m.chainID, secrets: m.secrets}
	}
	return nil
}

// fetch posts one JSON-RPC request to ep with JSON Content-Type and Accept
// headers, and returns the quantity its answer carries. Any status but 200
// fails it without its body being read, and so does a body of another
// length than its Content-Length; otherwise judge decides on the answer, of
// which it reads at most maxBody+1 bytes. It always closes the
// response body. A request cut short by the probe's own deadline fails with
// an error that says so and wraps context.DeadlineExceeded.
func (m *Monitor) fetch(ctx context.Context, ep endpoint, request string) (uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, strings.NewReader(request))
	if err != nil {
		// New parsed the same URL, so this cannot happen; the error itself
		// would quote the URL, so it is not passed on.
		return 0, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	// Left unset, net/http would ask for gzip and decode it unseen, so that
	// maxBody would count decoded bytes: a few bytes of deflate can stand
	// for megabytes, or for an endless stream that yields nothing.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, m.sendError(ctx, "", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, &StatusError{StatusCode: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if n := int64(len(body)); err == nil && n <= maxBody && statesLength(resp) && n != resp.ContentLength {
		if n > resp.ContentLength {
			// Only a custom Base can hand over more than it stated:
			// http.Transport stops at the length.
			return 0, &badAnswer{msg: m.secrets.shown(fmt.Sprintf("answer longer than its Content-Length of %d bytes", resp.ContentLength))}
		}
		err = io.ErrUnexpectedEOF // a cut connection, as net/http itself reports one
	}
	if err != nil {
		return 0, m.sendError(ctx, "reading answer", err)
	}
	height, refused := judge(body)
	if refused != nil {
		return 0, refused.resolve(m.secrets)
	}
	return height, nil
}

// statesLength reports whether resp states the length of its body. A
// ContentLength of 0 says so only with a Content-Length header beside it:
// a Base that builds its answers in memory often leaves the field unset.
func statesLength(resp *http.Response) bool {
	return resp.ContentLength > 0 || resp.ContentLength == 0 && resp.Header.Get("Content-Length") != ""
}

// sendError explains why sending a request or reading its answer failed,
// after the words doing (none when empty): the probe's own timeout when
// that is what ended it, and otherwise transportError's fixed copy of err,
// with every endpoint's secrets masked.
func (m *Monitor) sendError(ctx context.Context, doing string, err error) error {
	if context.Cause(ctx) == errProbeTimeout {
		return prefix(fmt.Sprintf("timed out after %v", m.probeTimeout), context.DeadlineExceeded, m.secrets)
	}
	err = transportError(err, m.secrets)
	if doing != "" {
		err = prefix(doing, err, m.secrets)
	}
	return err
}

// prefix puts before err a few words that say what failed. The message
// is masked whole, once: the words and err's text together may show what
// neither shows alone.
func prefix(words string, err error, s *secrets) error {
	return &prefixed{msg: s.shown(words + ": " + err.Error()), err: err}
}

// prefixed is an error that prefix made.
type prefixed struct {
	msg string
	err error
}

func (e *prefixed) Error() string { return e.msg }
func (e *prefixed) Unwrap() error { return e.err }
