package blocklag

import (
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// snapshot is one set of verdicts together with what they rest on. Once
// published it is never modified, so readers may use it without a lock.
type snapshot struct {
	// eligible has an entry for every configured ID. It is what Eligible
	// reads, so that Eligible stays a single map lookup.
	eligible map[failnext.EndpointID]bool

	// status is the same verdicts with their heights, lags and errors, in
	// configured order. Status hands out copies of it, never the original.
	status Status
}

// failOpen is the snapshot in force until the first Check publishes: every
// configured endpoint is eligible, and nothing has been measured.
func failOpen(eps []endpoint) *snapshot {
	s := newSnapshot(len(eps))
	for _, ep := range eps {
		s.add(EndpointStatus{ID: ep.id, Eligible: true})
	}
	return s
}

// newSnapshot returns an empty snapshot with room for n endpoints.
func newSnapshot(n int) *snapshot {
	return &snapshot{
		eligible: make(map[failnext.EndpointID]bool, n),
		status:   Status{Endpoints: make([]EndpointStatus, 0, n)},
	}
}

// add records one endpoint's verdict in both views, so that they cannot
// disagree.
func (s *snapshot) add(e EndpointStatus) {
	s.eligible[e.ID] = e.Eligible
	s.status.Endpoints = append(s.status.Endpoints, e)
}

// progress is what one endpoint has shown over the published Checks: the
// highest height it reported, and the Checked time of the Check in which it
// first reported that height. A zero advanced means no height has counted
// yet, since a Check's time is never zero.
type progress struct {
	top      uint64
	advanced time.Time
}

// count records height as reported at checked, moving advanced only when
// height is above every height counted before.
func (p *progress) count(height uint64, checked time.Time) {
	if p.advanced.IsZero() || height > p.top {
		p.top, p.advanced = height, checked
	}
}

// compare judges one Check's outcomes, given in endpoint order, as of
// checked. It returns nil when no probe succeeded, since there is then
// nothing to compare against, and leaves progress as it was. Otherwise a
// successful endpoint is eligible when it is at most maxLag blocks behind the
// reference height, and a failed one is not; progress, one per endpoint,
// counts each successful height, and the snapshot shows it. Since progress
// moves whenever a snapshot is built, the caller must publish every snapshot
// it gets, and call compare only once it has decided to publish.
func compare(eps []endpoint, outcomes []outcome, maxLag uint64, quorum int, checked time.Time, progress []progress) *snapshot {
	heights := make([]uint64, 0, len(outcomes))
	for _, o := range outcomes {
		if o.err == nil {
			heights = append(heights, o.height)
		}
	}
	if len(heights) == 0 {
		return nil
	}
	ref := reference(heights, quorum)
	s := newSnapshot(len(eps))
	s.status.Checked, s.status.Reference = checked, ref
	for i, o := range outcomes {
		e := EndpointStatus{ID: eps[i].id, Err: o.err}
		if o.err == nil {
			e.Height = o.height
			if o.height < ref { // at or above the reference there is no lag
				e.Lag = ref - o.height
			}
			e.Eligible = e.Lag <= maxLag
			progress[i].count(o.height, checked)
		}
		e.Advanced = progress[i].advanced
		if e.Eligible && e.Advanced.After(s.status.Advanced) {
			s.status.Advanced = e.Advanced
		}
		s.add(e)
	}
	return s
}

// reference returns the height that lag is measured from. With quorum at
// most one it is the highest height. With quorum k above one it is the k-th
// highest, counting equal heights one by one, or the lowest height when
// there are fewer than k, so that one provider reporting an absurd height
// cannot by itself set the reference. heights must not be empty; it is
// sorted in place.
func reference(heights []uint64, quorum int) uint64 {
	slices.Sort(heights)
	k := min(max(quorum, 1), len(heights))
	return heights[len(heights)-k]
}
