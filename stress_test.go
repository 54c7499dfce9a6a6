package blocklag

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// Readers calling Eligible while Checks keep publishing alternating
// snapshots only ever see verdicts that some snapshot gives: "steady" is at
// the reference in the initial and every published snapshot, and "unknown"
// is in none. Meanwhile "a" and "b" take turns being behind, so every Check
// publishes a snapshot different from the last. Under -race this also shows
// that publication and reads do not race.
func TestEligibleWhileChecksPublish(t *testing.T) {
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	steady := newProvider(t, 100)
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL, "steady", steady.URL)})

	const checks, readers = 50, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done) // also when a Check fails, so no reader outlives the test
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				m.Eligible("a")
				m.Eligible("b")
				if !m.Eligible("steady") || m.Eligible("unknown") {
					t.Error("a reader saw a verdict that no snapshot gives")
					return
				}
				runtime.Gosched() // leave the Checks some processor time
			}
		}()
	}
	publishAlternating(t, m, providers, checks)
}

// publishAlternating runs Checks in which providers[0] ("a", the first
// endpoint) and providers[1] ("b", the second) take turns being 10 blocks
// behind 100, so that every Check publishes a snapshot different from the
// last, and fails t when one is not published as expected.
func publishAlternating(t *testing.T, m *Monitor, providers []*provider, checks int) {
	t.Helper()
	ids := []failnext.EndpointID{"a", "b"}
	for i := range checks {
		behind, ahead := i%2, 1-i%2
		providers[behind].height.Store(90)
		providers[ahead].height.Store(100)
		if err := check(m); err != nil {
			t.Fatal(err)
		}
		st := m.Status()
		if m.Eligible(ids[behind]) || !m.Eligible(ids[ahead]) || st.Endpoints[behind].Lag != 10 || st.Endpoints[ahead].Lag != 0 {
			t.Fatalf("check %d published %+v", i, st)
		}
	}
}

// Readers calling Status while Checks publish snapshots in which "a" and "b"
// take turns being 10 blocks behind must each time see one whole snapshot:
// the reference, exactly one provider behind with its lag and verdict, and
// Checked never going back.
func TestStatusWhileChecksPublish(t *testing.T) {
	providers := []*provider{newProvider(t, 100), newProvider(t, 100)}
	ids := []failnext.EndpointID{"a", "b"}
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL), MaxLag: 3})
	consistent := func(st Status) bool {
		if st.Checked.IsZero() { // fail-open, before the first Check publishes
			return st.Reference == 0 && len(st.Endpoints) == 2 && st.Endpoints[0].Eligible && st.Endpoints[1].Eligible
		}
		if st.Reference != 100 || len(st.Endpoints) != 2 {
			return false
		}
		behind := 0
		for i, e := range st.Endpoints {
			switch {
			case e.ID != ids[i] || e.Err != nil:
				return false
			case e.Height == 100 && e.Lag == 0 && e.Eligible:
			case e.Height == 90 && e.Lag == 10 && !e.Eligible:
				behind++
			default:
				return false
			}
		}
		return behind == 1
	}

	const checks, readers = 50, 2
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done) // also when the loop below fails, so no reader outlives the test
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last time.Time
			for {
				select {
				case <-done:
					return
				default:
				}
				st := m.Status()
				if !consistent(st) {
					t.Errorf("a reader saw a Status that no snapshot gives: %+v", st)
					return
				}
				if st.Checked.Before(last) {
					t.Errorf("Checked went back from %v to %v", last, st.Checked)
					return
				}
				last = st.Checked
				runtime.Gosched() // leave the Checks some processor time
			}
		}()
	}
	publishAlternating(t, m, providers, checks)
}
