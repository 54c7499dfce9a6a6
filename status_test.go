package blocklag

import (
	"net/http"
	"reflect"
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

// A new Monitor shows every endpoint eligible and nothing measured.
func TestStatusWhileFailOpen(t *testing.T) {
	m := mustNew(t, Config{Endpoints: named("b", "http://127.0.0.1:1", "a", "http://127.0.0.1:1")})
	want := Status{Endpoints: []EndpointStatus{{ID: "b", Eligible: true}, {ID: "a", Eligible: true}}}
	if got := m.Status(); !reflect.DeepEqual(got, want) {
		t.Errorf("Status = %+v, want %+v", got, want)
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
	errs := probeErrors(t, err)
	checkErr := errs["broken"]
	if checkErr == nil || len(errs) != 1 {
		t.Fatalf("Check = %v, want one ProbeError, for broken", err)
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
	assertAgreesWithEligible(t, m, st)
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
