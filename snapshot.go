package blocklag

import (
	"slices"
	"time"

	"github.com/yermakovsa/failnext"
)

// snapshot is one set of verdicts with what they rest on. Once published
// it is never modified, so readers need no lock.
type snapshot struct {
	eligible map[failnext.EndpointID]bool // every configured ID: Eligible's one lookup
	status   Status                       // the same verdicts, in configured order; Status hands out copies
	highest  []highWater                  // each endpoint's high-water mark, for the next Check
}

// highWater is the highest height one endpoint has reported in the
// published Checks so far; its zero value means none has counted yet.
type highWater struct {
	height  uint64
	counted bool
}

// above reports whether height is a new high: above every height counted
// before, or the first one to count.
func (w highWater) above(height uint64) bool { return !w.counted || height > w.height }

// failOpen is the snapshot in force until the first Check publishes.
func failOpen(eps []endpoint, r rules) *snapshot {
	s := newSnapshot(len(eps))
	s.status.MaxLag = r.maxLag
	s.status.MaxAhead = r.maxAhead
	for _, ep := range eps {
		s.add(EndpointStatus{ID: ep.id, Eligible: true}, highWater{})
	}
	return s
}

// newSnapshot returns an empty snapshot with room for n endpoints.
func newSnapshot(n int) *snapshot {
	return &snapshot{
		eligible: make(map[failnext.EndpointID]bool, n),
		status:   Status{Endpoints: make([]EndpointStatus, 0, n)},
		highest:  make([]highWater, 0, n),
	}
}

// add records one endpoint's verdict in both views, so that they cannot
// disagree, and its high-water mark.
func (s *snapshot) add(e EndpointStatus, w highWater) {
	s.eligible[e.ID] = e.Eligible
	s.status.Endpoints = append(s.status.Endpoints, e)
	s.highest = append(s.highest, w)
}

// outcome is what one probe found, as nextSnapshot consumes it: a height, or the
// reason it failed, whether the provider confirmed Config.ChainID in this
// probe, and how long the probe took.
type outcome struct {
	height    uint64
	err       error
	confirmed bool
	latency   time.Duration
}

// nextSnapshot builds the snapshot that follows prev from one Check's
// outcomes, in endpoint order, as of checked. It returns nil when no probe
// succeeded. It modifies neither prev nor outcomes, so a Check that publishes
// nothing has counted nothing. A height above an endpoint's high-water mark
// raises the mark and sets the endpoint's Advanced to checked; the front
// moves as Status.Advanced says. Both times only move forward, even under a
// clock that steps back.
func nextSnapshot(prev *snapshot, outcomes []outcome, checked time.Time, r rules) *snapshot {
	heights := make([]uint64, 0, len(outcomes))
	for _, o := range outcomes {
		if o.err == nil {
			heights = append(heights, o.height)
		}
	}
	if len(heights) == 0 {
		return nil
	}
	ref := reference(heights, r.quorum)
	s := newSnapshot(len(outcomes))
	s.status.Checked = checked
	s.status.Reference = ref
	s.status.MaxLag = r.maxLag
	s.status.MaxAhead = r.maxAhead
	s.status.Advanced = prev.status.Advanced
	newHighAtFront := false
	for i, o := range outcomes {
		was := prev.status.Endpoints[i]
		mark := prev.highest[i]
		e := EndpointStatus{ID: was.ID, Err: o.err, Latency: o.latency, Advanced: was.Advanced}
		if o.err == nil {
			e.Height = o.height
			if o.height < ref {
				e.Lag = ref - o.height
			} else {
				e.Ahead = o.height - ref
			}
			e.Eligible = e.Lag <= r.maxLag && (r.maxAhead == 0 || e.Ahead <= r.maxAhead)
			if mark.above(o.height) {
				mark = highWater{height: o.height, counted: true}
				e.Advanced = later(e.Advanced, checked)
				newHighAtFront = newHighAtFront || o.height >= ref
			}
		}
		s.add(e, mark)
	}
	if newHighAtFront && (!prev.status.published() || ref > prev.status.Reference) {
		s.status.Advanced = later(s.status.Advanced, checked)
	}
	return s
}

// rules are the Config fields that verdicts follow.
type rules struct {
	maxLag   uint64
	maxAhead uint64
	quorum   int
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// reference returns the height lag is measured from: the highest, or with
// quorum k above one the k-th highest (equal heights counted one by one),
// or the lowest when there are fewer. It sorts heights, which is not empty.
func reference(heights []uint64, quorum int) uint64 {
	slices.Sort(heights)
	k := min(max(quorum, 1), len(heights))
	return heights[len(heights)-k]
}
