package failnext

import (
	"net/http"
	"time"
)

// cooldownSettings is a CooldownConfig after validation, defaults filled in.
// When enabled is false nothing is counted and no endpoint ever cools down.
type cooldownSettings struct {
	enabled   bool
	threshold int           // > 0 when enabled
	duration  time.Duration // > 0 when enabled
}

// health is the cooldown state of one endpoint.
type health struct {
	// streak counts the qualifying failures in a row since the endpoint last
	// answered otherwise, entered cooldown or left it.
	streak int
	// until is when the current cooldown ends; zero when the endpoint has
	// not entered cooldown since it last left one. The endpoint is cooling
	// while the clock reads before until.
	until time.Time
}

// cooling reports whether the endpoint at index i is in cooldown now. An
// endpoint whose cooldown has ended leaves it here with a fresh streak.
func (t *Transport) cooling(i int) bool {
	if !t.cooldown.enabled {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	h := &t.health[i]
	return h.coolingAt(now)
}

// record counts the outcome of one attempt on the endpoint at index i. A
// qualifying failure adds to the streak and, when the streak reaches the
// threshold, starts a cooldown that ends Duration after now; any other
// outcome resets the streak. While the endpoint is cooling, outcomes are
// not counted: they neither extend nor end the cooldown.
func (t *Transport) record(i int, failed bool) {
	if !t.cooldown.enabled {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	h := &t.health[i]
	if h.coolingAt(now) {
		return
	}
	if !failed {
		h.streak = 0
		return
	}
	h.streak++
	if h.streak >= t.cooldown.threshold {
		h.streak = 0
		h.until = now.Add(t.cooldown.duration)
	}
}

// coolingAt reports whether h is cooling at now. If a cooldown has ended by
// now, it clears h, so that counting starts again from zero. The caller
// holds the Transport's mu.
func (h *health) coolingAt(now time.Time) bool {
	if h.until.IsZero() {
		return false
	}
	if now.Before(h.until) {
		return true
	}
	*h = health{}
	return false
}

// qualifiesAsFailure reports whether an attempt outcome counts towards the
// cooldown: a transport error, or a status of exactly 502, 503 or 504. The
// additional trigger codes do not count; they reset the streak like any
// other answer.
func qualifiesAsFailure(resp *http.Response, err error) bool {
	return err != nil || builtinTrigger(resp.StatusCode)
}
