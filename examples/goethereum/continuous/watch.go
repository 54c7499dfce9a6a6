package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// watcher is the command's loop: it checks lag and reads the latest block,
// each on its own schedule and under its own timeout, and logs one line for
// each check and each read. Only the goroutine in run uses it.
type watcher struct {
	s         settings
	monitor   *blocklag.Monitor
	endpoints []failnext.Endpoint
	read      func(context.Context) (uint64, error)
	logger    *log.Logger
}

// run checks at once and then every s.checkEvery, and reads at once and
// then every s.readEvery, until ctx ends.
func (w *watcher) run(ctx context.Context) {
	checkTicks := time.NewTicker(w.s.checkEvery)
	defer checkTicks.Stop()
	readTicks := time.NewTicker(w.s.readEvery)
	defer readTicks.Stop()

	w.check(ctx)
	w.readOnce(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-checkTicks.C:
			w.check(ctx)
		case <-readTicks.C:
			w.readOnce(ctx)
		}
	}
}

// check runs one Check and logs what the verdicts now rest on, from
// Monitor.Status. A Check that published nothing leaves the old verdicts in
// force; the line then says why and how old they are.
func (w *watcher) check(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, w.s.checkTimeout)
	defer cancel()
	before := w.monitor.Status().Checked
	err := w.monitor.Check(cctx)
	if ctx.Err() != nil {
		return // shutting down: the Check was cut short on purpose
	}
	st := w.monitor.Status()
	if !st.Checked.Equal(before) {
		w.logger.Printf("check: %s", describe(st))
		return
	}
	age := "the fail-open ones (every provider eligible)"
	if !st.Checked.IsZero() {
		age = fmt.Sprintf("those from %v ago", time.Since(st.Checked).Round(time.Second))
	}
	w.logger.Printf("check: no new verdicts (%s); still using %s: %s", oneLine(err), age, describe(st))
}

// describe renders a Status in one line, for example
// "ref=1234 primary=1230 (lag 4, ineligible) backup=1234 (eligible)".
func describe(st blocklag.Status) string {
	var b strings.Builder
	if !st.Checked.IsZero() {
		fmt.Fprintf(&b, "ref=%d", st.Reference)
	}
	for _, e := range st.Endpoints {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		verdict := "ineligible"
		if e.Eligible {
			verdict = "eligible"
		}
		var pe *blocklag.ProbeError
		switch {
		case st.Checked.IsZero():
			fmt.Fprintf(&b, "%s=unchecked (%s)", e.ID, verdict)
		case errors.As(e.Err, &pe):
			fmt.Fprintf(&b, "%s=failed (%s: %v)", e.ID, verdict, pe.Err)
		case e.Lag > 0:
			fmt.Fprintf(&b, "%s=%d (lag %d, %s)", e.ID, e.Height, e.Lag, verdict)
		default:
			fmt.Fprintf(&b, "%s=%d (%s)", e.ID, e.Height, verdict)
		}
	}
	return b.String()
}

// oneLine puts the probe errors that errors.Join put on separate lines on
// one line.
func oneLine(err error) string {
	if err == nil {
		return "no error"
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// readOnce reads the latest block number and logs it with the endpoint that
// served it, as failnext reported it. Reads may fail over, since
// eth_blockNumber has no side effects.
func (w *watcher) readOnce(ctx context.Context) {
	trail := &readTrail{}
	rctx := context.WithValue(failnext.WithFailoverAllowed(ctx), readTrailKey{}, trail)
	rctx, cancel := context.WithTimeout(rctx, w.s.readTimeout)
	defer cancel()
	n, err := w.read(rctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	served, failed := trail.result()
	if err != nil {
		w.logger.Printf("read: error: %s%s", redact(err, w.endpoints), failed)
		return
	}
	w.logger.Printf("read: block %d from %s%s", n, served, failed)
}

// readTrailKey is the context key under which readOnce leaves a readTrail
// for recordEvent.
type readTrailKey struct{}

// readTrail collects failnext's events for one read. failnext calls OnEvent
// on the goroutine that sends the request, which need not be readOnce's:
// that is up to go-ethereum's client. The lock keeps it correct either way.
type readTrail struct {
	mu     sync.Mutex
	served failnext.EndpointID // from the result event; "" until then, or when the read failed
	failed []string            // one per failed attempt, in order
}

// recordEvent is the transport's OnEvent: it adds each event of a read to
// the readTrail that the read's context carries.
func recordEvent(ctx context.Context, ev failnext.Event) {
	trail, ok := ctx.Value(readTrailKey{}).(*readTrail)
	if !ok {
		return
	}
	trail.mu.Lock()
	defer trail.mu.Unlock()
	switch {
	case ev.Kind == failnext.EventResult:
		trail.served = ev.Endpoint
	case ev.Kind == failnext.EventAttempt && ev.Err != nil:
		trail.failed = append(trail.failed, fmt.Sprintf("%s failed", ev.Endpoint))
	case ev.Kind == failnext.EventAttempt && ev.StatusCode != 200:
		trail.failed = append(trail.failed, fmt.Sprintf("%s answered %d", ev.Endpoint, ev.StatusCode))
	case ev.Kind == failnext.EventCooldownSkip:
		trail.failed = append(trail.failed, fmt.Sprintf("%s skipped, cooling down", ev.Endpoint))
	}
}

// result returns who served the read and, when some attempt went wrong
// first, a note saying which.
func (t *readTrail) result() (served, failed string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	served = string(t.served)
	if served == "" {
		served = "no endpoint"
	}
	if len(t.failed) > 0 {
		failed = " (" + strings.Join(t.failed, ", ") + ")"
	}
	return served, failed
}

// redact renders an error for one log line: without any endpoint URL
// (net/http quotes the request URL in its errors, failnext quotes endpoint
// URLs in some of its own, and provider URLs carry API keys), at most
// maxErrorText bytes long, and with every control character escaped, since
// go-ethereum's errors can carry what a provider answered word for word.
func redact(err error, endpoints []failnext.Endpoint) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	for _, ep := range endpoints {
		msg = strings.ReplaceAll(msg, ep.URL, "<"+string(ep.ID)+" URL>")
	}
	var b strings.Builder
	for i, r := range msg {
		if i >= maxErrorText {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// maxErrorText is how much of an error's text a log line shows.
const maxErrorText = 300
