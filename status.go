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
// turns Status into Prometheus gauges.
//
// Before the first Check publishes, Status describes the fail-open state:
// Checked is zero, Reference is 0, and every endpoint is eligible with no
// height, lag or error.
type Status struct {
	// Checked is when the Check that published this snapshot finished
	// probing; zero while fail-open. A Check that publishes nothing (every
	// probe failed, or its context ended) leaves it as it was, so its age
	// tells how stale the verdicts are: alert when it grows past a few check
	// intervals.
	Checked time.Time

	// Reference is the height that lag was measured from: the highest
	// successful height, or the one that Config.Quorum picks. 0 while
	// fail-open.
	Reference uint64

	// Advanced is the latest Advanced among the endpoints that are eligible
	// in this snapshot: when the front last moved. Zero while fail-open. A
	// lagging endpoint catching up does not move it, nor does one dipping
	// and recovering. It never changes a verdict, and some chains make no
	// blocks while idle; alert when it falls far behind Checked if yours
	// should not stand still.
	Advanced time.Time

	// Endpoints has one entry per configured endpoint, in configured order.
	Endpoints []EndpointStatus
}

// EndpointStatus is one endpoint's part of a Status.
type EndpointStatus struct {
	// ID is the endpoint's configured ID.
	ID failnext.EndpointID

	// Eligible is what Eligible(ID) answers from the same snapshot.
	Eligible bool

	// Height is the block height the endpoint reported. It is 0 when its
	// probe failed, and while fail-open.
	Height uint64

	// Lag is Reference minus Height when the endpoint answered below the
	// reference, and 0 otherwise: at or above the reference, after a failed
	// probe, and while fail-open.
	Lag uint64

	// Err is the *ProbeError that the publishing Check returned for this
	// endpoint (the same value, shared: treat it as read-only), or nil when
	// the endpoint answered, and while fail-open.
	Err error

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

// MarshalJSON gives the members checked, reference, advanced and endpoints,
// in that order, with the times in RFC 3339. A zero time is left out, so a
// fail-open Status has neither checked nor advanced. endpoints is always an
// array, empty for the zero Status.
func (s Status) MarshalJSON() ([]byte, error) {
	eps := s.Endpoints
	if eps == nil {
		eps = []EndpointStatus{}
	}
	return json.Marshal(struct {
		Checked   time.Time        `json:"checked,omitzero"`
		Reference uint64           `json:"reference"`
		Advanced  time.Time        `json:"advanced,omitzero"`
		Endpoints []EndpointStatus `json:"endpoints"`
	}{s.Checked, s.Reference, s.Advanced, eps})
}

// MarshalJSON gives the members id, eligible, height, lag, advanced and
// error, in that order. height and lag are always there; a zero advanced is
// left out, and error, the message of Err, is there only when Err is set.
func (e EndpointStatus) MarshalJSON() ([]byte, error) {
	var msg string
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		ID       failnext.EndpointID `json:"id"`
		Eligible bool                `json:"eligible"`
		Height   uint64              `json:"height"`
		Lag      uint64              `json:"lag"`
		Advanced time.Time           `json:"advanced,omitzero"`
		Error    string              `json:"error,omitempty"`
	}{e.ID, e.Eligible, e.Height, e.Lag, e.Advanced, msg})
}

// LogValue makes a Status log through log/slog as a group: checked,
// reference and advanced, each left out when zero, then one group per
// endpoint, keyed by its ID and in configured order, holding eligible,
// height, lag, and error only when Err is set. With a TextHandler,
// slog.Info("check", "status", st) gives keys such as status.reference and
// status.primary.lag. An endpoint ID such as "reference", or one holding a
// dot, reads ambiguously beside those keys: pick IDs that do not.
func (s Status) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 3+len(s.Endpoints))
	if !s.Checked.IsZero() {
		attrs = append(attrs, slog.Time("checked", s.Checked))
	}
	if s.Reference != 0 {
		attrs = append(attrs, slog.Uint64("reference", s.Reference))
	}
	if !s.Advanced.IsZero() {
		attrs = append(attrs, slog.Time("advanced", s.Advanced))
	}
	for _, e := range s.Endpoints {
		attrs = append(attrs, slog.Attr{Key: string(e.ID), Value: e.logValue()})
	}
	return slog.GroupValue(attrs...)
}

// logValue is one endpoint's group in Status.LogValue.
func (e EndpointStatus) logValue() slog.Value {
	attrs := []slog.Attr{slog.Bool("eligible", e.Eligible), slog.Uint64("height", e.Height), slog.Uint64("lag", e.Lag)}
	if e.Err != nil {
		attrs = append(attrs, slog.String("error", e.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}
