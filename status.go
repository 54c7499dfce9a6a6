package blocklag

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// Status is what the verdicts in force rest on: the snapshot that Eligible
// answers from, for logs, status pages and alerts (the module
// github.com/yermakovsa/failnext-blocklag/blocklagprom turns it into
// Prometheus metrics). While fail-open, Checked and Advanced are zero,
// Reference is 0, and every endpoint is eligible with nothing measured.
type Status struct {
	// Checked is when the Check that published this snapshot finished
	// probing; its age tells how stale the verdicts are.
	Checked   time.Time
	Reference uint64 // the height lag was measured from: the highest successful one, or Config.Quorum's pick
	MaxLag    uint64 // Config.MaxLag, the rule the verdicts follow

	// Advanced is when the front last moved: the Checked time of the latest
	// published Check whose reference is above the one before it (the
	// first counts as above) and in which some endpoint reported a height
	// at or above that reference and above all it had reported before. It
	// never moves back, and not for a lagging endpoint catching up, one
	// returning to a height it had reached, one above a Quorum reference,
	// or one confirming Config.ChainID; it does while the endpoint that set
	// the reference fails and another climbs toward it. It changes no
	// verdict: some chains make no blocks while idle.
	Advanced time.Time

	Endpoints []EndpointStatus // one per configured endpoint, in configured order
}

// EndpointStatus is one endpoint's part of a Status. Its probe succeeded
// in the Check in force when Err is nil and a Check has published.
type EndpointStatus struct {
	ID       failnext.EndpointID
	Eligible bool // what Eligible(ID) answers from the same snapshot

	// Height is the block height it reported, and Lag Reference minus
	// Height below the reference (0 at or above it); both 0 unless its
	// probe succeeded.
	Height, Lag uint64

	// Err is the *ProbeError that the publishing Check returned for it (a
	// shared value: treat it as read-only); nil when it answered.
	Err error

	// Latency is how long its probe took in the Check in force, success or
	// failure: until its height request and any chain ID request beside
	// it had both ended.
	Latency time.Duration

	// Advanced is the Checked time of the latest published Check in which
	// it reported a height above every height it had reported before (its
	// first counted height included); a failed probe keeps it. Zero until
	// its first height counts, as before it confirms Config.ChainID.
	Advanced time.Time
}

// Status returns the snapshot Eligible answers from, whole, as a copy the
// caller may keep. It never waits for a Check; a nil or zero Monitor gives
// the zero Status.
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
// endpoints, in that order, times in RFC 3339:
//
//	{"checked":"2026-01-02T10:00:00Z","reference":110,"max_lag":3,"advanced":"2026-01-02T10:00:00Z","endpoints":[...]}
//
// checked and reference are there once a Check has published, advanced
// when it is not zero, the endpoints as [EndpointStatus.MarshalJSON] says.
// So while fail-open: {"max_lag":3,"endpoints":[{"id":"a","eligible":true}]}.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.json()) }

// json is s's JSON form.
func (s Status) json() statusJSON {
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
	return out
}

// MarshalJSON gives the members id, eligible, height, lag, latency_seconds,
// advanced, reason and error, in that order:
//
//	{"id":"primary","eligible":true,"height":110,"lag":0,"latency_seconds":0.012,"advanced":"2026-01-02T10:00:00Z"}
//	{"id":"backup","eligible":false,"latency_seconds":0.3,"advanced":"2026-01-02T09:59:45Z","reason":"http_status","error":"blocklag: endpoint \"backup\": HTTP status 503"}
//
// height and lag are there only when the probe succeeded, even when 0, so
// that a failed endpoint shows no height that could pass for block 0;
// latency_seconds once a Check has published; advanced when not zero;
// reason and error when Err is set: the [ProbeError.Reason] of a
// ProbeError wrapping Err, and Err's message (shown as outside text when
// Err is not a *ProbeError). Marshaled on its own, an EndpointStatus
// counts a Check as published when Err is set or Advanced is not zero,
// which for a Status from a Monitor is the same test.
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

// json is e's JSON form in a Status that has published, or not: the one
// place that decides which members are there, for the JSON and slog forms.
func (e EndpointStatus) json(published bool) endpointJSON {
	out := endpointJSON{ID: e.ID, Eligible: e.Eligible}
	if published && e.Err == nil {
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
		// Reason looks through Err's chain, so a *ProbeError that Err is
		// or wraps gives its own reason, and any other Err is classified
		// alike; a hand-built Status's own error is outside text.
		reason, msg := (&ProbeError{Err: e.Err}).Reason(), e.Err.Error()
		if _, ok := e.Err.(*ProbeError); !ok {
			msg = sanitize(msg)
		}
		out.Reason, out.Error = &reason, &msg
	}
	return out
}

// LogValue makes a Status log through log/slog as a group with the members
// of its JSON, under the same rules: checked, reference, max_lag,
// advanced, then a group endpoints with one group per endpoint, keyed by
// its ID, with eligible, height, lag, latency (a duration), advanced,
// reason and error. So slog.Info("check", "status", st) gives keys such as
// status.endpoints.primary.lag, where no ID collides with reference.
func (s Status) LogValue() slog.Value {
	j := s.json()
	var attrs []slog.Attr
	if j.Checked != nil {
		attrs = append(attrs, slog.Time("checked", s.Checked), slog.Uint64("reference", s.Reference))
	}
	attrs = append(attrs, slog.Uint64("max_lag", s.MaxLag))
	if j.Advanced != nil {
		attrs = append(attrs, slog.Time("advanced", s.Advanced))
	}
	eps := make([]slog.Attr, len(s.Endpoints))
	for i, e := range j.Endpoints {
		group := []slog.Attr{slog.Bool("eligible", e.Eligible)}
		if e.Height != nil {
			group = append(group, slog.Uint64("height", *e.Height), slog.Uint64("lag", *e.Lag))
		}
		if e.Latency != nil {
			group = append(group, slog.Duration("latency", s.Endpoints[i].Latency))
		}
		if e.Advanced != nil {
			group = append(group, slog.Time("advanced", *e.Advanced))
		}
		if e.Error != nil {
			group = append(group, slog.String("reason", string(*e.Reason)), slog.String("error", *e.Error))
		}
		eps[i] = slog.Attr{Key: string(e.ID), Value: slog.GroupValue(group...)}
	}
	return slog.GroupValue(append(attrs, slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)})...)
}
