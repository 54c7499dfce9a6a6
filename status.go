package blocklag

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// Status is the snapshot that Eligible answers from, for logs and status
// pages; while fail-open, only MaxLag, IDs and verdicts are set.
type Status struct {
	Checked   time.Time // when the publishing Check finished probing
	Reference uint64    // the height lag is measured from
	MaxLag    uint64    // Config.MaxLag
	// Advanced is the Checked time of the latest Check whose reference rose with
	// an endpoint's new high at or above it (also while the leader fails).
	Advanced  time.Time
	Endpoints []EndpointStatus // in configured order
}

// EndpointStatus is one endpoint's part of a Status.
type EndpointStatus struct {
	ID                 failnext.EndpointID
	Eligible           bool          // what Eligible(ID) answers from the same snapshot
	Height, Lag, Ahead uint64        // its height, and how far below or above the reference; 0 if it failed
	Err                error         // its *ProbeError (shared: read-only), or nil
	Latency            time.Duration // how long its probe took
	Advanced           time.Time     // the Checked time of its latest new high
}

// Reason is the [ProbeError.Reason] of Err's chain, or "" when Err is nil.
func (e EndpointStatus) Reason() Reason {
	if e.Err == nil {
		return ""
	}
	return (&ProbeError{Err: e.Err}).Reason()
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
//	{"checked":"2026-01-02T10:00:00Z","reference":110,"max_lag":3,"advanced":"2026-01-02T10:00:00Z","endpoints":[
//	 {"id":"a","eligible":true,"height":110,"lag":0,"latency_seconds":0.012,"advanced":"2026-01-02T10:00:00Z"},
//	 {"id":"b","eligible":false,"latency_seconds":0.3,"reason":"http_status","error":"blocklag: endpoint \"b\": HTTP status 503"}]}
//
// checked, reference and latency_seconds once a Check has published; height
// and lag when the probe succeeded, reason and error when not; the rest if set.
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

// MarshalJSON writes one endpoint as [Status.MarshalJSON] does.
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
		out.Height, out.Lag, out.Ahead = &e.Height, &e.Lag, e.Ahead
	}
	if published {
		seconds := e.Latency.Seconds()
		out.Latency = &seconds
	}
	if !e.Advanced.IsZero() {
		out.Advanced = &e.Advanced
	}
	if e.Err != nil {
		// A hand-built Status's own error is outside text.
		reason, msg := e.Reason(), e.Err.Error()
		if _, ok := e.Err.(*ProbeError); !ok {
			msg = sanitize(msg)
		}
		out.Reason, out.Error = &reason, &msg
	}
	return out
}

// LogValue logs the JSON members, the endpoints as groups keyed by ID:
// status.endpoints.primary.lag.
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
			group = append(group, slog.String("reason", string(*e.Reason)), slog.String("error", *e.Error))
		}
		eps[i] = slog.Attr{Key: string(e.ID), Value: slog.GroupValue(group...)}
	}
	return slog.GroupValue(append(attrs, slog.Attr{Key: "endpoints", Value: slog.GroupValue(eps...)})...)
}
