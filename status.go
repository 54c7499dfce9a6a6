package blocklag

import (
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// Status is what the verdicts in force rest on: the snapshot that Eligible
// answers from, for logs, dashboards and alerts. blocklag exports no metrics
// itself; Status gives the numbers to whoever does.
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
	// in this snapshot: when the front last moved. Zero while fail-open.
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
	// earlier published Checks. Zero until its first height counts.
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
