package blocklag

import (
	"runtime"
	"sync"
	"testing"

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
	ids := []failnext.EndpointID{"a", "b"}
	steady := newProvider(t, 100)
	m := mustNew(t, Config{Endpoints: named("a", providers[0].URL, "b", providers[1].URL, "steady", steady.URL)})

	const checks, readers = 50, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
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
	for i := range checks {
		behind, ahead := i%2, 1-i%2
		providers[behind].height.Store(90)
		providers[ahead].height.Store(100)
		if err := check(m); err != nil {
			t.Fatal(err)
		}
		if m.Eligible(ids[behind]) || !m.Eligible(ids[ahead]) {
			t.Fatalf("check %d published the wrong verdict", i)
		}
	}
	close(done)
	wg.Wait()
}
