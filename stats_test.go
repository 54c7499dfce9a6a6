package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

// Each failure is counted once per Check under the Reason of its
// ProbeError and under no other; between them, the failures of the table
// count under every Reason.
func TestStatsCountEachFailureUnderItsReason(t *testing.T) {
	seen := map[Reason]bool{}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			m := mustNew(t, f.config(t))
			var reasons []Reason
			for range 2 {
				pe := probeErrors(t, check(m))["a"]
				if pe == nil {
					t.Fatal("the probe did not fail")
				}
				reasons = append(reasons, pe.Reason())
			}
			if reasons[0] != reasons[1] {
				t.Fatalf("the same failure had the Reasons %v", reasons)
			}
			seen[reasons[0]] = true
			st := m.Stats()
			want := counted(map[Reason]uint64{reasons[0]: 2})
			if st.Checks != 2 || !reflect.DeepEqual(st.Endpoints[0].Failures, want) {
				t.Errorf("Stats = %+v, want 2 Checks and the failures %v", st, want)
			}
		})
	}
	for _, r := range everyReason {
		if !seen[r] {
			t.Errorf("no failure of the table is counted as %s", r)
		}
	}
}

// Stats counts every Check that sent probes, whether it published, found
// every probe failing, or was abandoned, and no Check that sent none. Each
// ProbeError of a Check counts once, under its Reason.
func TestStatsCountEveryCheckThatSentProbes(t *testing.T) {
	good := newProvider(t, 100)
	rejecting := newProvider(t, 100)
	rejecting.on("eth_blockNumber", reply(http.StatusUnauthorized, ""))
	m := mustNew(t, Config{Endpoints: named("good", good.URL, "rejecting", rejecting.URL)})
	want := Stats{Endpoints: []EndpointStats{
		{ID: "good", Failures: counted(nil)},
		{ID: "rejecting", Failures: counted(nil)},
	}}
	// checked adds a Check and its failures to want.
	checked := func(t *testing.T, err error, published bool) {
		t.Helper()
		want.Checks++
		if published {
			want.Published++
		}
		errs := probeErrors(t, err)
		for i, e := range want.Endpoints {
			if pe := errs[e.ID]; pe != nil {
				want.Endpoints[i].Failures[pe.Reason()]++
			}
		}
	}
	wantStats := func(t *testing.T) {
		t.Helper()
		if got := m.Stats(); !reflect.DeepEqual(got, want) {
			t.Errorf("Stats =\n%+v\nwant\n%+v", got, want)
		}
	}

	t.Run("a new Monitor has counted nothing", wantStats)
	t.Run("a Check that publishes counts as published", func(t *testing.T) {
		checked(t, check(m), true)
		wantStats(t)
	})
	t.Run("a Check in which every probe fails counts, though nothing is published", func(t *testing.T) {
		good.on("eth_blockNumber", reply(http.StatusServiceUnavailable, ""))
		defer good.on("eth_blockNumber", nil)
		before := m.Status()
		err := check(m)
		if !reflect.DeepEqual(m.Status(), before) || len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want both probes failed and nothing published", err)
		}
		checked(t, err, false)
		wantStats(t)
	})
	t.Run("a Check whose context is already done sends nothing and counts nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := m.Check(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Check = %v, want context.Canceled", err)
		}
		wantStats(t)
	})
}

// Stats returns a copy, and answers while a Check is running, from the
// counts so far.
func TestStatsIsACopyThatNeverWaitsForACheck(t *testing.T) {
	p := newProvider(t, 100)
	m := mustNew(t, Config{Endpoints: named("p", p.URL)})
	check(m)
	got := m.Stats()
	got.Endpoints[0].Failures[ReasonTimeout] = 9
	got.Endpoints[0].ID = "changed"
	again := m.Stats()
	if again.Endpoints[0].ID != "p" || !reflect.DeepEqual(again.Endpoints[0].Failures, counted(nil)) {
		t.Errorf("after changing a returned Stats, Stats = %+v", again)
	}

	entered := make(chan struct{})
	release := make(chan struct{})
	p.on("eth_blockNumber", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		w.Write([]byte(answer(101)))
	})
	done := make(chan error)
	go func() { done <- check(m) }()
	<-entered
	// The Check holds its turn until release is closed, so a Stats that
	// waited for it would never return.
	if st := m.Stats(); st.Checks != 2 || st.Published != 1 {
		t.Errorf("Stats during the second Check = %+v, want it counted as sent and not yet published", st)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Published != 2 {
		t.Errorf("Published %d after the second Check, want 2", st.Published)
	}
}

// Stats marshals and logs with the snake_case names that Status uses.
func TestStatsMarshalsWithTheNamesStatusUses(t *testing.T) {
	st := Stats{Checks: 3, Published: 2, Endpoints: []EndpointStats{
		{ID: "a", Failures: map[Reason]uint64{ReasonTimeout: 1, ReasonBadAnswer: 2}},
	}}
	b, err := json.Marshal(st)
	want := `{"checks":3,"published":2,"endpoints":[{"id":"a","failures":{"bad_answer":2,"timeout":1}}]}`
	if err != nil || string(b) != want {
		t.Errorf("json.Marshal = %s, %v; want %s", b, err, want)
	}
	got := logged(st, textHandler)
	want = "level=INFO msg=check status.checks=3 status.published=2" +
		" status.endpoints.a.failures.bad_answer=2 status.endpoints.a.failures.timeout=1\n"
	if got != want {
		t.Errorf("slog text = %q, want %q", got, want)
	}
}
