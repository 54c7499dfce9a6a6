package blocklag

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// assertAgreesWithEligible checks that every entry of st says what Eligible
// answers, which holds whenever no Check publishes in between.
func assertAgreesWithEligible(t *testing.T, m *Monitor, st Status) {
	t.Helper()
	for _, e := range st.Endpoints {
		if m.Eligible(e.ID) != e.Eligible {
			t.Errorf("%s: Status says eligible %v, Eligible says %v", e.ID, e.Eligible, m.Eligible(e.ID))
		}
	}
}

func TestStatusWhileFailOpen(t *testing.T) {
	t.Run("a new Monitor shows every endpoint eligible and nothing measured", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("b", "http://127.0.0.1:1", "a", "http://127.0.0.1:1")})
		want := Status{Endpoints: []EndpointStatus{{ID: "b", Eligible: true}, {ID: "a", Eligible: true}}}
		if got := m.Status(); !reflect.DeepEqual(got, want) {
			t.Errorf("Status = %+v, want %+v", got, want)
		}
	})
	t.Run("a Check whose every probe fails leaves the fail-open view", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: named("a", "http://127.0.0.1:1")})
		before := m.Status()
		if err := check(m); err == nil {
			t.Fatal("a refused probe succeeded")
		}
		if got := m.Status(); !reflect.DeepEqual(got, before) || !got.Checked.IsZero() {
			t.Errorf("Status = %+v, want the fail-open view %+v", got, before)
		}
	})
	for name, m := range map[string]*Monitor{"a nil Monitor": nil, "a zero Monitor": {}} {
		t.Run(name+" returns the zero Status", func(t *testing.T) {
			if got := m.Status(); !reflect.DeepEqual(got, Status{}) {
				t.Errorf("Status = %+v, want the zero Status", got)
			}
		})
	}
}

func TestStatusAfterCheck(t *testing.T) {
	ahead, within, beyond := newProvider(t, 110), newProvider(t, 108), newProvider(t, 100)
	broken := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	m := mustNew(t, Config{
		Endpoints: named("within", within.URL, "broken", broken.URL, "ahead", ahead.URL, "beyond", beyond.URL),
		MaxLag:    3,
	})
	start := time.Now()
	err := check(m)
	end := time.Now()
	st := m.Status()

	if st.Checked.Before(start) || st.Checked.After(end) {
		t.Errorf("Checked %v is not within the Check (%v to %v)", st.Checked, start, end)
	}
	if st.Reference != 110 {
		t.Errorf("Reference %d, want 110", st.Reference)
	}
	checkErr := probeErrors(t, err)["broken"]
	if checkErr == nil {
		t.Fatalf("Check = %v, want a ProbeError for broken", err)
	}
	want := []EndpointStatus{
		{ID: "within", Eligible: true, Height: 108, Lag: 2},
		{ID: "broken", Err: checkErr},
		{ID: "ahead", Eligible: true, Height: 110},
		{ID: "beyond", Height: 100, Lag: 10},
	}
	if !reflect.DeepEqual(st.Endpoints, want) {
		t.Errorf("Endpoints =\n%+v\nwant\n%+v", st.Endpoints, want)
	}
	var pe *ProbeError
	if e := st.Endpoints[1].Err; !errors.As(e, &pe) || pe.Endpoint != "broken" {
		t.Errorf("broken's Err is %v, want its *ProbeError", e)
	}
	assertAgreesWithEligible(t, m, st)
}

func TestStatusWithQuorum(t *testing.T) {
	var pairs []string
	for i, h := range []uint64{1000000, 100, 99, 90} {
		pairs = append(pairs, string(idOf(i)), newProvider(t, h).URL)
	}
	m := mustNew(t, Config{Endpoints: named(pairs...), MaxLag: 3, Quorum: 2})
	if err := check(m); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.Reference != 100 {
		t.Errorf("Reference %d, want the second highest, 100", st.Reference)
	}
	want := []EndpointStatus{
		{ID: idOf(0), Eligible: true, Height: 1000000}, // above the reference: no lag
		{ID: idOf(1), Eligible: true, Height: 100},
		{ID: idOf(2), Eligible: true, Height: 99, Lag: 1},
		{ID: idOf(3), Height: 90, Lag: 10},
	}
	if !reflect.DeepEqual(st.Endpoints, want) {
		t.Errorf("Endpoints =\n%+v\nwant\n%+v", st.Endpoints, want)
	}
	assertAgreesWithEligible(t, m, st)
}

func TestStatusUnchangedWhenCheckPublishesNothing(t *testing.T) {
	p := newProvider(t, 100)
	flaky, down := newFlaky(t, 90)
	m := mustNew(t, Config{Endpoints: named("p", p.URL, "flaky", flaky.URL), MaxLag: 3})
	if err := check(m); err != nil {
		t.Fatal(err)
	}
	published := m.Status()

	t.Run("every probe failing leaves the last published Status", func(t *testing.T) {
		p.Close()
		down.Store(true)
		if err := check(m); len(probeErrors(t, err)) != 2 {
			t.Fatalf("Check = %v, want two ProbeErrors", err)
		}
		if got := m.Status(); !reflect.DeepEqual(got, published) {
			t.Errorf("Status = %+v, want the last published %+v", got, published)
		}
	})
	t.Run("a Check cancelled while probing leaves the last published Status", func(t *testing.T) {
		// Every probe answers, but the context ends before they all have,
		// so the Check has results and must still not publish them.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cancelling atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			height := uint64(100)
			if cancelling.Load() {
				cancel()
				height = 50
			}
			return answerResponse(r, height), nil
		})
		m := mustNew(t, Config{Endpoints: named("a", "http://a.example"), Base: base})
		if err := m.Check(ctx); err != nil {
			t.Fatal(err)
		}
		published := m.Status()
		cancelling.Store(true)
		if err := m.Check(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Check = %v, want context.Canceled", err)
		}
		if got := m.Status(); !reflect.DeepEqual(got, published) {
			t.Errorf("Status = %+v, want the last published %+v", got, published)
		}
	})
}

func TestStatusIsACopy(t *testing.T) {
	p, q := newProvider(t, 100), newProvider(t, 90)
	m := mustNew(t, Config{Endpoints: named("p", p.URL, "q", q.URL), MaxLag: 3})
	if err := check(m); err != nil {
		t.Fatal(err)
	}
	want := m.Status()
	want.Endpoints = append([]EndpointStatus(nil), want.Endpoints...) // our own copy, whatever Status does

	got := m.Status()
	got.Reference = 1
	got.Endpoints[0] = EndpointStatus{ID: "p", Height: 7, Lag: 93}
	got.Endpoints[1].Eligible = true
	got.Endpoints = append(got.Endpoints[:1], EndpointStatus{ID: "x", Eligible: true})

	if again := m.Status(); !reflect.DeepEqual(again, want) {
		t.Errorf("after changing a returned Status, Status = %+v, want %+v", again, want)
	}
	if !m.Eligible("p") || m.Eligible("q") || m.Eligible("x") {
		t.Error("changing a returned Status changed Eligible")
	}
}
