package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

// everyReason is each Reason a probe can fail with, written out here
// rather than taken from the code under test.
var everyReason = []Reason{
	ReasonRateLimited, ReasonUnauthorized, ReasonHTTPStatus, ReasonRPCError,
	ReasonWrongChain, ReasonBadAnswer, ReasonTimeout, ReasonTransport,
}

// counted is a Failures map as Stats gives it: every Reason, 0 unless n
// says otherwise.
func counted(n map[Reason]uint64) map[Reason]uint64 {
	all := map[Reason]uint64{}
	for _, r := range everyReason {
		all[r] = n[r]
	}
	return all
}

// Each failure is counted under its Reason and no other, in every Check.
func TestStatsCountEachFailureUnderItsReason(t *testing.T) {
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			m := mustNew(t, f.config(t))
			check(m)
			check(m)
			st := m.Stats()
			if want := counted(map[Reason]uint64{f.reason: 2}); st.Checks != 2 || !reflect.DeepEqual(st.Endpoints[0].Failures, want) {
				t.Errorf("Stats = %+v, want 2 Checks and the failures %v", st, want)
			}
		})
	}
}

// Stats counts every Check that sent probes, whether it published, found
// every probe failing, or was abandoned, and no Check that sent none.
func TestStatsCountEveryCheckThatSentProbes(t *testing.T) {
	good, rejecting := newProvider(t, 100), newProvider(t, 100)
	rejecting.on("eth_blockNumber", reply(http.StatusUnauthorized, ""))
	m := mustNew(t, Config{Endpoints: named("good", good.URL, "rejecting", rejecting.URL)})
	wantStats := func(t *testing.T, checks, published, goodFailures uint64) {
		t.Helper()
		want := Stats{Checks: checks, Published: published, Endpoints: []EndpointStats{
			{ID: "good", Failures: counted(nil)},
			{ID: "rejecting", Failures: counted(nil)},
		}}
		if checks > 0 {
			want.Endpoints[1].Failures[ReasonUnauthorized] = checks
		}
		if goodFailures > 0 {
			want.Endpoints[0].Failures[ReasonHTTPStatus] = goodFailures
		}
		if got := m.Stats(); !reflect.DeepEqual(got, want) {
			t.Errorf("Stats =\n%+v\nwant\n%+v", got, want)
		}
	}

	t.Run("a new Monitor has counted nothing", func(t *testing.T) { wantStats(t, 0, 0, 0) })
	t.Run("a Check that publishes counts as published", func(t *testing.T) {
		check(m)
		wantStats(t, 1, 1, 0)
	})
	t.Run("a Check in which every probe fails counts, though nothing is published", func(t *testing.T) {
		good.on("eth_blockNumber", reply(http.StatusServiceUnavailable, ""))
		defer good.on("eth_blockNumber", nil)
		before := m.Status()
		check(m)
		if !reflect.DeepEqual(m.Status(), before) {
			t.Fatal("the Check published")
		}
		wantStats(t, 2, 1, 1)
	})
	t.Run("a Check whose context is already done sends nothing and counts nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := m.Check(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Check = %v, want context.Canceled", err)
		}
		wantStats(t, 2, 1, 1)
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
	if again := m.Stats(); again.Endpoints[0].ID != "p" || !reflect.DeepEqual(again.Endpoints[0].Failures, counted(nil)) {
		t.Errorf("after changing a returned Stats, Stats = %+v", again)
	}

	entered, release := make(chan struct{}), make(chan struct{})
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

func TestStatsMarshalsWithTheNamesStatusUses(t *testing.T) {
	st := Stats{Checks: 3, Published: 2, Endpoints: []EndpointStats{{ID: "a", Failures: map[Reason]uint64{ReasonTimeout: 1}}}}
	b, err := json.Marshal(st)
	if want := `{"checks":3,"published":2,"endpoints":[{"id":"a","failures":{"timeout":1}}]}`; err != nil || string(b) != want {
		t.Errorf("json.Marshal = %s, %v; want %s", b, err, want)
	}
	if got, want := logged(st, textHandler), "level=INFO msg=check status.checks=3 status.published=2 status.endpoints.a.failures.timeout=1\n"; got != want {
		t.Errorf("slog text = %q, want %q", got, want)
	}
}
