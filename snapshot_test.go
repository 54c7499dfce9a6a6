package blocklag

import (
	"errors"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// The reference is the Quorum-th highest height, counting equal heights one
// by one, or the lowest when there are fewer.
func TestReferenceIsTheKthHighestHeight(t *testing.T) {
	tests := []struct {
		name    string
		heights []uint64
		quorum  int
		want    uint64
	}{
		{"quorum 0 takes the highest", []uint64{5, 9, 7}, 0, 9},
		{"quorum 1 takes the highest", []uint64{5, 9, 7}, 1, 9},
		{"quorum 2 takes the second highest", []uint64{5, 9, 7}, 2, 7},
		{"equal heights count one by one", []uint64{9, 9, 7}, 2, 9},
		{"fewer heights than the quorum take the lowest", []uint64{5, 9}, 3, 5},
		{"a single height is the reference", []uint64{42}, 5, 42},
		{"uint64 extremes", []uint64{math.MaxUint64, 0}, 0, math.MaxUint64},
		{"uint64 extremes with quorum", []uint64{math.MaxUint64, 0}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reference(slices.Clone(tt.heights), tt.quorum); got != tt.want {
				t.Errorf("reference(%v, %d) = %d, want %d", tt.heights, tt.quorum, got, tt.want)
			}
		})
	}
}

// An endpoint is eligible when it answered at most MaxLag blocks below the
// reference and, with MaxAhead set, at most MaxAhead above it.
func TestNextSnapshotJudgesEachEndpointByItsLagBehindTheReference(t *testing.T) {
	failed := outcome{err: errors.New("down")}
	at := func(h uint64) outcome { return outcome{height: h} }
	tests := []struct {
		name     string
		outcomes []outcome
		rules    rules
		want     []bool // nil: nothing to publish
	}{
		{"no success publishes nothing", []outcome{failed, failed}, rules{maxLag: 3}, nil},
		{"failed probes do not count toward the quorum", []outcome{at(1000), failed, failed, at(10)},
			rules{maxLag: 3, quorum: 2}, []bool{true, false, false, true}},
		{"the lag may equal MaxLag, one block more may not", []outcome{at(10), at(7), at(6)},
			rules{maxLag: 3}, []bool{true, true, false}},
		{"MaxLag 0 keeps only the reference", []outcome{at(10), at(10), at(9)}, rules{},
			[]bool{true, true, false}},
		{"the reference is the highest success wherever it is listed; a failed probe is ineligible",
			[]outcome{at(5), at(20), at(17), failed}, rules{maxLag: 3}, []bool{false, true, true, false}},
		{"height zero is a height", []outcome{at(0), at(2)}, rules{maxLag: 1}, []bool{false, true}},
		{"the widest lag", []outcome{at(math.MaxUint64), at(0)}, rules{maxLag: math.MaxUint64},
			[]bool{true, true}},
		{"one short of the widest lag", []outcome{at(math.MaxUint64), at(0)},
			rules{maxLag: math.MaxUint64 - 1}, []bool{true, false}},
		{"above the quorum reference has lag 0", []outcome{at(math.MaxUint64), at(5), at(5)},
			rules{quorum: 2}, []bool{true, true, true}},
		{"MaxAhead above the quorum reference is eligible, one block more is not",
			[]outcome{at(20), at(10), at(10), at(13)}, rules{maxAhead: 3, quorum: 3},
			[]bool{false, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps := make([]endpoint, len(tt.outcomes))
			for i := range eps {
				eps[i] = endpoint{id: idOf(i)}
			}
			s := nextSnapshot(failOpen(eps, tt.rules), tt.outcomes, clockAt("10:00:00"), tt.rules)
			if tt.want == nil {
				if s != nil {
					t.Fatalf("nextSnapshot built %v, want nothing", s.eligible)
				}
				return
			}
			if s == nil || len(s.eligible) != len(eps) || len(s.status.Endpoints) != len(eps) {
				t.Fatalf("nextSnapshot = %v, want a verdict for each endpoint", s)
			}
			for i, want := range tt.want {
				if s.eligible[idOf(i)] != want || s.status.Endpoints[i].Eligible != want {
					t.Errorf("endpoint %d: eligible %v in the map and %v in Status, want %v",
						i, s.eligible[idOf(i)], s.status.Endpoints[i].Eligible, want)
				}
			}
		})
	}
}

// nextSnapshot reads the snapshot it follows and this Check's outcomes, and
// nothing else: it changes neither, and what it builds depends on them
// alone.
func TestNextBuildsFromThePreviousSnapshotAlone(t *testing.T) {
	eps := []endpoint{{id: "a"}, {id: "b"}}
	maxLag3 := rules{maxLag: 3}
	down := outcome{err: &ProbeError{Endpoint: "b", Err: errors.New("down")}, latency: 2 * time.Second}
	answered := []outcome{{height: 100}, {height: 90}}
	first := nextSnapshot(failOpen(eps, maxLag3), answered, clockAt("10:00:00"), maxLag3)
	kept := *first
	kept.status.Endpoints = slices.Clone(first.status.Endpoints)
	kept.highest = slices.Clone(first.highest)
	kept.eligible = maps.Clone(first.eligible)

	outcomes := []outcome{{height: 95, latency: 40 * time.Millisecond}, down}
	second := nextSnapshot(first, outcomes, clockAt("10:00:10"), maxLag3)
	again := nextSnapshot(first, outcomes, clockAt("10:00:10"), maxLag3)

	if !reflect.DeepEqual(*first, kept) {
		t.Errorf("nextSnapshot changed the snapshot it follows:\n%+v\nwas\n%+v", *first, kept)
	}
	if !reflect.DeepEqual(second, again) {
		t.Errorf("nextSnapshot built two snapshots from the same input:\n%+v\n%+v", second, again)
	}
	want := &snapshot{
		eligible: map[failnext.EndpointID]bool{"a": true, "b": false},
		status: Status{
			Checked:   clockAt("10:00:10"),
			Reference: 95,
			MaxLag:    3,
			Advanced:  clockAt("10:00:00"),
			Endpoints: []EndpointStatus{
				{
					ID:       "a",
					Eligible: true,
					Height:   95,
					Latency:  40 * time.Millisecond,
					Advanced: clockAt("10:00:00"),
				},
				{ID: "b", Err: down.err, Latency: 2 * time.Second, Advanced: clockAt("10:00:00")},
			},
		},
		// a dipped, so its mark stays at 100; b failed, so its mark stays.
		highest: []highWater{{height: 100, counted: true}, {height: 90, counted: true}},
	}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("nextSnapshot =\n%+v\nwant\n%+v", second, want)
	}
	if nothing := nextSnapshot(first, []outcome{down, down}, clockAt("10:00:20"), maxLag3); nothing != nil {
		t.Errorf("nextSnapshot with no success = %+v, want nil", nothing)
	}
}
