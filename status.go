package blocklag

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/internal/redact"
)

// Status is the snapshot that Eligible answers from, for logs and status
// pages. Until a Check publishes, only MaxLag and each endpoint's ID and
// verdict are set.
type Status struct {
	Checked   time.Time // when the Check that published it finished probing; zero until one does
	Reference uint64    // the height that lag was measured from
	MaxLag    uint64    // Config.MaxLag, the rule the verdicts follow
	MaxAhead  uint64    // Config.MaxAhead, the other rule they follow; 0 when off
	// Advanced is when the front last moved: the Checked time of the latest Check whose reference
	// rose with an endpoint at a new high of its own, as one climbing to a failed leader's height.
	Advanced  time.Time
	Endpoints []EndpointStatus // one per endpoint, in configured order
}

// EndpointStatus is one endpoint's part of a Status.
type EndpointStatus struct {
	ID       failnext.EndpointID
	Eligible bool          // what Eligible(ID) answers from the same snapshot
	Height   uint64        // the height it reported; 0 when its probe failed
	Lag      uint64        // how many blocks Height is below the reference, or 0
	Ahead    uint64        // how many blocks Height is above the reference, or 0
	Err      error         // its *ProbeError, shared with the Check's error; nil when it answered
	Latency  time.Duration // how long its probe took, with the chain ID request if it sent one
	Advanced time.Time     // the Checked time of its latest height above all its earlier ones
}

// Reason is the [Reason] of Err, or "" when Err is nil.
func (e EndpointStatus) Reason() Reason {
	if e.Err == nil {
		return ""
	}
	return reasonOf(e.Err)
}

// published reports whether a Check has published s: whether it is more than
// the fail-open snapshot.
func (s Status) published() bool {
	return !s.Checked.IsZero()
}

// Status returns the snapshot in force as a copy, never waiting for a Check.
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

// MarshalJSON writes these members, in this order:
//
//	{"checked":"2026-01-02T10:00:00Z","reference":110,"max_lag":3,
//	 "advanced":"2026-01-02T10:00:00Z","endpoints":[
//	  {"id":"a","eligible":true,"height":110,"lag":0,"latency_seconds":0.012,
//	   "advanced":"2026-01-02T10:00:00Z"},
//	  {"id":"b","eligible":false,"latency_seconds":0.3,"reason":"http_status",
//	   "error":"blocklag: endpoint \"b\": HTTP status 503"}]}
//
// checked, reference and latency_seconds are there once a Check has
// published; height and lag when the endpoint's probe succeeded, even at 0;
// reason and error when it failed; max_ahead, ahead and advanced when they
// are not zero.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.json()) }

// json is s's JSON form.
func (s Status) json() statusJSON {
	published := s.published()
	out := statusJSON{
		MaxLag:    s.MaxLag,
		MaxAhead:  s.MaxAhead,
		Endpoints: make([]endpointJSON, len(s.Endpoints)),
	}
	if published {
		out.Checked = &s.Checked
		out.Reference = &s.Reference
	}
	if !s.Advanced.IsZero() {
		out.Advanced = &s.Advanced
	}
	for i, e := range s.Endpoints {
		out.Endpoints[i] = e.json(published)
	}
	return out
}

// MarshalJSON writes one endpoint as [Status.MarshalJSON] does in its Status.
func (e EndpointStatus) MarshalJSON() ([]byte, error) {
	// It was probed by a published Check when it has an error or has
	// advanced: a probe that succeeds always counts its first height.
	probed := e.Err != nil || !e.Advanced.IsZero()
	return json.Marshal(e.json(probed))
}

// statusJSON and endpointJSON give the JSON form its members, in order. A
// nil pointer is a member left out.
type statusJSON struct {
	Checked   *time.Time     `json:"checked,omitempty"`
	Reference *uint64        `json:"reference,omitempty"`
	MaxLag    uint64         `json:"max_lag"`
	MaxAhead  uint64         `json:"max_ahead,omitempty"`
	Advanced  *time.Time     `json:"advanced,omitempty"`
	Endpoints []endpointJSON `json:"endpoints"`
}

type endpointJSON struct {
	ID       failnext.EndpointID `json:"id"`
	Eligible bool                `json:"eligible"`
	Height   *uint64             `json:"height,omitempty"`
	Lag      *uint64             `json:"lag,omitempty"`
	Ahead    uint64              `json:"ahead,omitempty"`
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
		out.Height = &e.Height
		out.Lag = &e.Lag
		out.Ahead = e.Ahead
	}
	if published {
		seconds := e.Latency.Seconds()
		out.Latency = &seconds
	}
	if !e.Advanced.IsZero() {
		out.Advanced = &e.Advanced
	}
	if e.Err != nil {
		reason := e.Reason()
		msg := errorText(e.Err)
		if _, ok := e.Err.(*ProbeError); !ok {
			msg = redact.Alphabet(msg) // the error of a Status built by hand is outside text
		}
		out.Reason = &reason
		out.Error = &msg
	}
	return out
}

// LogValue logs the JSON form's members, each endpoint a group keyed by its
// ID: status.endpoints.primary.lag.
func (s Status) LogValue() slog.Value {
	j := s.json()
	var attrs []slog.Attr
	if j.Checked != nil {
		attrs = append(attrs, slog.Time("checked", s.Checked))
		attrs = append(attrs, slog.Uint64("reference", s.Reference))
	}
	attrs = append(attrs, slog.Uint64("max_lag", s.MaxLag))
	if j.MaxAhead != 0 {
		attrs = append(attrs, slog.Uint64("max_ahead", s.MaxAhead))
	}
	if j.Advanced != nil {
		attrs = append(attrs, slog.Time("advanced", s.Advanced))
	}
	eps := make([]slog.Attr, len(s.Endpoints))
	for i, e := range j.Endpoints {
		group := []slog.Attr{slog.Bool("eligible", e.Eligible)}
		if e.Height != nil {
			group = append(group, slog.Uint64("height", *e.Height))
			group = append(group, slog.Uint64("lag", *e.Lag))
		}
		if e.Ahead != 0 {
			group = append(group, slog.Uint64("ahead", e.Ahead))
		}
		if e.Latency != nil {
			group = append(group, slog.Float64("latency_seconds", *e.Latency))
		}
		if e.Advanced != nil {
			group = append(group, slog.Time("advanced", *e.Advanced))
		}
		if e.Error != nil {
			group = append(group, slog.String("reason", string(*e.Reason)))
			group = append(group, slog.String("error", *e.Error))
		}
		eps[i] = slog.Attr{Key: string(e.ID), Value: slog.GroupValue(group...)}
	}
	return slog.GroupValue(append(attrs, slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)})...)
}
