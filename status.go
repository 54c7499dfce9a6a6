package blocklag

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// Status is what the verdicts in force rest on: the snapshot that Eligible
// answers from, for logs, dashboards and alerts. It marshals to JSON for a
// status page and logs through log/slog as a group. blocklag itself exports
// no metrics: the module github.com/yermakovsa/failnext-blocklag/blocklagprom
// turns Status, and [Monitor.Stats], into Prometheus metrics.
//
// Before the first Check publishes, Status describes the fail-open state:
// Checked and Advanced are zero, Reference is 0, and every endpoint is
// eligible with no height, lag, latency or error.
type Status struct {
	// Checked is when the Check that published this snapshot finished
	// probing; zero while fail-open. A Check that publishes nothing (every
	// probe failed, or its context ended) leaves it as it was, so its age
	// tells how stale the verdicts are.
	Checked time.Time

	// Reference is the height that lag was measured from: the highest
	// successful height, or the one that Config.Quorum picks. 0 while
	// fail-open.
	Reference uint64

	// MaxLag is Config.MaxLag, the rule the verdicts follow, so that a
	// status page can show it beside them.
	MaxLag uint64

	// Advanced is when the front last moved: the Checked time of the latest
	// published Check whose reference is higher than that of the published
	// Check before it (the first published Check counts as higher), and in
	// which some endpoint reported a height at or above that reference and
	// above every height it had reported before. It never moves back, and
	// it is zero while fail-open.
	//
	// So it stays put when a lagging endpoint catches up, when an endpoint
	// returns to a height it had reached before, when heights dip and
	// recover, when an endpoint above a Quorum reference climbs, and when
	// an endpoint confirms Config.ChainID at the front's height. One case
	// moves it although the front had been there already: while the
	// endpoint that set the reference fails, another one climbing toward
	// the height it had reached.
	//
	// It never changes a verdict: some chains make no blocks while idle,
	// so whether the chain has stalled is for the reader to judge.
	Advanced time.Time

	// Endpoints has one entry per configured endpoint, in configured order.
	Endpoints []EndpointStatus
}

// EndpointStatus is one endpoint's part of a Status. Its probe succeeded
// in the Check in force when Err is nil and the Status's Checked is not
// zero (a Check has published).
type EndpointStatus struct {
	// ID is the endpoint's configured ID.
	ID failnext.EndpointID

	// Eligible is what Eligible(ID) answers from the same snapshot.
	Eligible bool

	// Height is the block height the endpoint reported. It means something
	// only when its probe succeeded; otherwise (a failed probe, fail-open)
	// it is 0.
	Height uint64

	// Lag is Reference minus Height when the endpoint answered below the
	// reference, and 0 at or above it. Like Height it means something only
	// when the probe succeeded, and is 0 otherwise.
	Lag uint64

	// Err is the *ProbeError that the publishing Check returned for this
	// endpoint (the same value, shared: treat it as read-only), or nil when
	// the endpoint answered, and while fail-open.
	Err error

	// Latency is how long the endpoint's probe took in the Check in force,
	// whether it succeeded or failed: from sending its height request until
	// that request and, when one was sent beside it, the chain ID request
	// had both ended. 0 while fail-open.
	Latency time.Duration

	// Advanced is the Checked time of the latest published Check in which
	// the endpoint reported a height above every height it had reported in
	// earlier published Checks, its first counted height included. A failed
	// probe keeps it as it was. Zero until its first height counts, so
	// always zero for an endpoint that has not confirmed Config.ChainID.
	Advanced time.Time
}

// Status returns the snapshot that Eligible answers from, as a copy the
// caller may keep and change. It reads one snapshot whole, never a mix of
// two, and never waits for a running Check. It is safe for concurrent use.
// A nil or zero Monitor returns the zero Status.
func (m *Monitor) Status() Status {
	if m == nil {
		return Status{}
	}
	s := m.current.Load()
	if s == nil {
		return Status{}
	}
	st := s.status
	st.Endpoints = slices.Clone(st.Endpoints)
	return st
}

// MarshalJSON gives the members checked, reference, max_lag, advanced and
// endpoints, in that order, with the times in RFC 3339:
//
//	{"checked":"2026-01-02T10:00:00Z","reference":110,"max_lag":3,"advanced":"2026-01-02T10:00:00Z","endpoints":[...]}
//
// checked and reference are there once a Check has published (Checked is
// not zero), reference even when it is 0; max_lag is always there;
// advanced is there when it is not zero. endpoints is always an array,
// empty for the zero Status, of the endpoints as
// [EndpointStatus.MarshalJSON] describes them. So while fail-open the JSON
// is {"max_lag":3,"endpoints":[{"id":"a","eligible":true},...]}.
func (s Status) MarshalJSON() ([]byte, error) {
	published := !s.Checked.IsZero()
	out := statusJSON{MaxLag: s.MaxLag, Endpoints: make([]endpointJSON, len(s.Endpoints))}
	if published {
		out.Checked, out.Reference = &s.Checked, &s.Reference
	}
	if !s.Advanced.IsZero() {
		out.Advanced = &s.Advanced
	}
	for i, e := range s.Endpoints {
		out.Endpoints[i] = e.json(published)
	}
	return json.Marshal(out)
}

// MarshalJSON gives the members id, eligible, height, lag, latency_seconds,
// advanced, reason and error, in that order:
//
//	{"id":"primary","eligible":true,"height":110,"lag":0,"latency_seconds":0.012,"advanced":"2026-01-02T10:00:00Z"}
//	{"id":"backup","eligible":false,"latency_seconds":0.3,"advanced":"2026-01-02T09:59:45Z","reason":"http_status","error":"blocklag: endpoint \"backup\": HTTP status 503"}
//
// height and lag are there only when the probe succeeded, even when they
// are 0, so that a failed endpoint shows no height that could pass for
// block 0. latency_seconds, Latency in seconds with fractions, is there
// once a Check has published. advanced is there when it is not zero.
// reason and error are there only when Err is set: error is Err's message
// (shown as outside text when Err is not a *ProbeError), and reason is
// [ProbeError.Reason] of the *ProbeError that Err is or wraps. For an Err that holds no
// *ProbeError, as a hand-built Status may have, reason is what
// ProbeError.Reason would say of a ProbeError wrapping Err: the kind its
// wrapped codes tell, else "transport".
//
// Marshaled on its own, an EndpointStatus cannot see its Status's
// Checked, so it counts a Check as published when Err is set or Advanced
// is not zero, and its probe as succeeded when, besides, Err is nil. For
// every Status that a Monitor returns that is the same test, since only a
// published Check sets Err, and an endpoint that answered in it has
// counted a height.
func (e EndpointStatus) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.json(e.Err != nil || !e.Advanced.IsZero()))
}

// statusJSON and endpointJSON give the JSON form its members, in order. A
// nil pointer is a member left out.
type statusJSON struct {
	Checked   *time.Time     `json:"checked,omitempty"`
	Reference *uint64        `json:"reference,omitempty"`
	MaxLag    uint64         `json:"max_lag"`
	Advanced  *time.Time     `json:"advanced,omitempty"`
	Endpoints []endpointJSON `json:"endpoints"`
}

type endpointJSON struct {
	ID       failnext.EndpointID `json:"id"`
	Eligible bool                `json:"eligible"`
	Height   *uint64             `json:"height,omitempty"`
	Lag      *uint64             `json:"lag,omitempty"`
	Latency  *float64            `json:"latency_seconds,omitempty"`
	Advanced *time.Time          `json:"advanced,omitempty"`
	Reason   *Reason             `json:"reason,omitempty"`
	Error    *string             `json:"error,omitempty"`
}

// json is e's JSON form in a Status that has published, or not.
func (e EndpointStatus) json(published bool) endpointJSON {
	out := endpointJSON{ID: e.ID, Eligible: e.Eligible}
	if e.succeeded(published) {
		out.Height, out.Lag = &e.Height, &e.Lag
	}
	if published {
		seconds := e.Latency.Seconds()
		out.Latency = &seconds
	}
	if !e.Advanced.IsZero() {
		out.Advanced = &e.Advanced
	}
	if e.Err != nil {
		reason, msg := failure(e.Err)
		out.Reason, out.Error = &reason, &msg
	}
	return out
}

// succeeded reports whether e's probe succeeded in the Check in force, for
// an e from a Status that has published, or not.
func (e EndpointStatus) succeeded(published bool) bool { return published && e.Err == nil }

// failure gives the reason and the message that the text forms of a Status
// show for an endpoint's Err.
func failure(err error) (Reason, string) {
	// Reason looks through Err's chain, so a *ProbeError that err is or
	// wraps gives its own reason, and any other err is classified alike.
	msg := err.Error()
	if _, ok := err.(*ProbeError); !ok {
		msg = reduce(msg) // a hand-built Status's own error: outside text
	}
	return (&ProbeError{Err: err}).Reason(), msg
}

// LogValue makes a Status log through log/slog as a group with the same
// members as its JSON, under the same rules for which are there: checked,
// reference, max_lag and advanced, then a group endpoints holding one
// group per endpoint, keyed by its ID and in configured order, with
// eligible, height, lag, latency (a duration), advanced, reason and
// error. With a TextHandler, slog.Info("check", "status", st) gives keys
// such as status.reference and status.endpoints.primary.lag, so an ID such
// as "reference" collides with nothing; an ID holding a dot reads
// ambiguously among such keys, though the JSONHandler nests it
// unambiguously.
func (s Status) LogValue() slog.Value {
	published := !s.Checked.IsZero()
	attrs := make([]slog.Attr, 0, 5)
	if published {
		attrs = append(attrs, slog.Time("checked", s.Checked), slog.Uint64("reference", s.Reference))
	}
	attrs = append(attrs, slog.Uint64("max_lag", s.MaxLag))
	if !s.Advanced.IsZero() {
		attrs = append(attrs, slog.Time("advanced", s.Advanced))
	}
	eps := make([]slog.Attr, len(s.Endpoints))
	for i, e := range s.Endpoints {
		eps[i] = slog.Attr{Key: string(e.ID), Value: e.logValue(published)}
	}
	return slog.GroupValue(append(attrs, slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)})...)
}

// logValue is one endpoint's group in Status.LogValue.
func (e EndpointStatus) logValue(published bool) slog.Value {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.Bool("eligible", e.Eligible))
	if e.succeeded(published) {
		attrs = append(attrs, slog.Uint64("height", e.Height), slog.Uint64("lag", e.Lag))
	}
	if published {
		attrs = append(attrs, slog.Duration("latency", e.Latency))
	}
	if !e.Advanced.IsZero() {
		attrs = append(attrs, slog.Time("advanced", e.Advanced))
	}
	if e.Err != nil {
		reason, msg := failure(e.Err)
		attrs = append(attrs, slog.String("reason", string(reason)), slog.String("error", msg))
	}
	return slog.GroupValue(attrs...)
}
