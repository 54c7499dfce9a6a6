package blocklag

import (
	"slices"

	"github.com/yermakovsa/failnext"
)

// snapshot is one set of verdicts. Once published it is never modified, so
// readers may use it without a lock.
type snapshot struct {
	eligible map[failnext.EndpointID]bool // every configured ID has an entry
}

// failOpen is the snapshot in force until the first Check publishes: every
// configured endpoint is eligible.
func failOpen(eps []endpoint) *snapshot {
	s := &snapshot{eligible: make(map[failnext.EndpointID]bool, len(eps))}
	for _, ep := range eps {
		s.eligible[ep.id] = true
	}
	return s
}

// outcome is what one probe found: a height, or the reason it failed.
type outcome struct {
	height uint64
	err    error
}

// compare judges one Check's outcomes, given in endpoint order. It returns
// nil when no probe succeeded, since there is then nothing to compare
// against. Otherwise a successful endpoint is eligible when it is at
// most maxLag blocks behind the reference height, and a failed one is not
// .
func compare(eps []endpoint, outcomes []outcome, maxLag uint64, quorum int) *snapshot {
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
	s := &snapshot{eligible: make(map[failnext.EndpointID]bool, len(eps))}
	for i, o := range outcomes {
		// A height at or above the reference has no lag; the subtraction
		// cannot wrap below that.
		s.eligible[eps[i].id] = o.err == nil && (o.height >= ref || ref-o.height <= maxLag)
	}
	return s
}

// reference returns the height that lag is measured from. With quorum at
// most one it is the highest height. With quorum k above one it is the
// k-th highest, counting equal heights one by one, or the lowest height when
// there are fewer than k, so that one provider reporting an absurd
// height cannot by itself set the reference. heights must not be empty; it
// is sorted in place.
func reference(heights []uint64, quorum int) uint64 {
	slices.Sort(heights)
	k := min(max(quorum, 1), len(heights))
	return heights[len(heights)-k]
}
