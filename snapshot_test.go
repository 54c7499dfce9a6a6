package blocklag

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func TestReference(t *testing.T) {
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

func TestCompare(t *testing.T) {
	failed := outcome{err: errors.New("down")}
	at := func(h uint64) outcome { return outcome{height: h} }
	tests := []struct {
		name     string
		outcomes []outcome
		maxLag   uint64
		quorum   int
		want     []bool // nil: nothing to publish
	}{
		{"no success publishes nothing", []outcome{failed, failed}, 3, 0, nil},
		{"failed probes do not count toward the quorum", []outcome{at(1000), failed, failed, at(10)}, 3, 2, []bool{true, false, false, true}},
		{"the lag may equal MaxLag, one block more may not", []outcome{at(10), at(7), at(6)}, 3, 0, []bool{true, true, false}},
		{"MaxLag 0 keeps only the reference", []outcome{at(10), at(10), at(9)}, 0, 0, []bool{true, true, false}},
		{"the reference is the highest success wherever it is listed; a failed probe is ineligible", []outcome{at(5), at(20), at(17), failed}, 3, 0, []bool{false, true, true, false}},
		{"height zero is a height", []outcome{at(0), at(2)}, 1, 0, []bool{false, true}},
		{"the widest lag", []outcome{at(math.MaxUint64), at(0)}, math.MaxUint64, 0, []bool{true, true}},
		{"one short of the widest lag", []outcome{at(math.MaxUint64), at(0)}, math.MaxUint64 - 1, 0, []bool{true, false}},
		{"above the quorum reference has lag 0", []outcome{at(math.MaxUint64), at(5), at(5)}, 0, 2, []bool{true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps := make([]endpoint, len(tt.outcomes))
			for i := range eps {
				eps[i] = endpoint{id: idOf(i)}
			}
			s := compare(eps, tt.outcomes, tt.maxLag, tt.quorum, time.Time{}, make([]progress, len(eps)))
			if tt.want == nil {
				if s != nil {
					t.Fatalf("compare published %v, want nothing", s.eligible)
				}
				return
			}
			if s == nil || len(s.eligible) != len(eps) {
				t.Fatalf("compare = %v, want a verdict for each endpoint", s)
			}
			for i, want := range tt.want {
				if s.eligible[idOf(i)] != want {
					t.Errorf("endpoint %d: eligible %v, want %v", i, !want, want)
				}
			}
		})
	}
}
