package blocklag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
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
		{ID: "within", Eligible: true, Height: 108, Lag: 2, Advanced: st.Checked},
		{ID: "broken", Err: checkErr},
		{ID: "ahead", Eligible: true, Height: 110, Advanced: st.Checked},
		{ID: "beyond", Height: 100, Lag: 10, Advanced: st.Checked},
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

func TestAdvanced(t *testing.T) {
	const down = -1 // the provider's probe fails in that Check
	type step struct {
		a, b      int64
		cancelled bool // the Check's context ends while it probes, so it publishes nothing
	}
	at := func(a, b int64) step { return step{a: a, b: b} }
	cancelled := func(a, b int64) step { return step{a, b, true} }
	tests := []struct {
		name  string
		steps []step
		a, b  int // the step whose Checked the endpoint's Advanced shows
		front int // the same for Status.Advanced
	}{
		{"the first counted height sets Advanced, height zero too", []step{at(0, 0)}, 0, 0, 0},
		{"a rise moves Advanced to the Check that saw it", []step{at(100, 100), at(101, 100)}, 1, 0, 1},
		{"an equal height keeps the earlier Advanced", []step{at(100, 100), at(100, 100)}, 0, 0, 0},
		{"recovering after a dip is not progress", []step{at(100, 100), at(98, 100), at(100, 100)}, 0, 0, 0},
		{"a failed probe keeps the Advanced it had", []step{at(100, 100), at(down, 101)}, 0, 1, 1},
		{"a first height after failures counts", []step{at(down, 100), at(100, 100)}, 1, 0, 1},
		{"a lagging endpoint's rise does not move Status.Advanced", []step{at(100, 80), at(100, 90)}, 0, 1, 0},
		{"heights from a cancelled Check do not count", []step{at(100, 100), cancelled(101, 101), at(101, 100)}, 2, 0, 2},
		{"a Check where every probe fails changes nothing", []step{at(100, 100), at(down, down)}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now step
			var cancel context.CancelFunc
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				body, _ := io.ReadAll(r.Body)
				host := r.URL.Hostname()
				height := map[string]int64{"a": now.a, "b": now.b, "c": 1000 + now.a}[host]
				if strings.Contains(string(body), "eth_chainId") {
					height = 1
					if host == "c" { // on another chain, so it never confirms
						height = 2
					}
				}
				if now.cancelled {
					cancel()
				}
				if height == down {
					return nil, errors.New("down")
				}
				return answerResponse(r, uint64(height)), nil
			})
			m := mustNew(t, Config{Endpoints: named("a", "http://a", "b", "http://b", "c", "http://c"), MaxLag: 3, ChainID: 1, Base: base})
			var times []time.Time
			for _, now = range tt.steps {
				var ctx context.Context
				ctx, cancel = context.WithCancel(context.Background())
				m.Check(ctx)
				cancel()
				times = append(times, m.Status().Checked)
			}
			st := m.Status()
			got := []time.Time{st.Endpoints[0].Advanced, st.Endpoints[1].Advanced, st.Endpoints[2].Advanced, st.Advanced}
			want := []time.Time{times[tt.a], times[tt.b], {}, times[tt.front]}
			for i, name := range []string{"a", "b", "c, never confirmed,", "Status"} {
				if !got[i].Equal(want[i]) {
					t.Errorf("%s Advanced = %v, want %v (Checks at %v)", name, got[i], want[i], times)
				}
			}
		})
	}
}

// failOpenAndPublished returns the Status of a Monitor over a provider at
// height 110 and one that answers 502, before and after one Check.
func failOpenAndPublished(t *testing.T) (failOpen, published Status) {
	t.Helper()
	broken := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	m := mustNew(t, Config{Endpoints: named("primary", newProvider(t, 110).URL, "broken", broken.URL)})
	failOpen = m.Status()
	if err := check(m); len(probeErrors(t, err)) != 1 {
		t.Fatalf("Check = %v, want one ProbeError", err)
	}
	return failOpen, m.Status()
}

func TestStatusJSON(t *testing.T) {
	failOpen, st := failOpenAndPublished(t)
	checked, advanced := st.Checked.Format(time.RFC3339Nano), st.Advanced.Format(time.RFC3339Nano)
	primary := fmt.Sprintf(`{"id":"primary","eligible":true,"height":110,"lag":0,"advanced":%q}`, advanced)
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"a fail-open Status has no times and no errors", failOpen,
			`{"reference":0,"endpoints":[{"id":"primary","eligible":true,"height":0,"lag":0},{"id":"broken","eligible":true,"height":0,"lag":0}]}`},
		{"a published Status has its times and the failed probe's message", st,
			fmt.Sprintf(`{"checked":%q,"reference":110,"advanced":%q,"endpoints":[%s,{"id":"broken","eligible":false,"height":0,"lag":0,"error":%q}]}`,
				checked, advanced, primary, st.Endpoints[1].Err.Error())},
		{"one endpoint marshals on its own as it does in the list", st.Endpoints[0], primary},
		{"the zero Status has an empty endpoint list", Status{}, `{"reference":0,"endpoints":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.value)
			if err != nil || string(got) != tt.want {
				t.Errorf("json.Marshal =\n%s, %v\nwant\n%s", got, err, tt.want)
			}
		})
	}
}

func TestStatusLogValue(t *testing.T) {
	failOpen, st := failOpenAndPublished(t)
	// Times become RFC 3339 text, so that the expected lines need not follow
	// each handler's own time format; the record's own time is dropped.
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		if a.Value.Kind() == slog.KindTime {
			a.Value = slog.StringValue(a.Value.Time().Format(time.RFC3339Nano))
		}
		return a
	}}
	text := func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
	checked, advanced, msg := st.Checked.Format(time.RFC3339Nano), st.Advanced.Format(time.RFC3339Nano), st.Endpoints[1].Err.Error()
	tests := []struct {
		name    string
		handler func(io.Writer) slog.Handler
		st      Status
		want    string
	}{
		{"text shows a published Status under dotted keys", text, st,
			fmt.Sprintf("level=INFO msg=check status.checked=%s status.reference=110 status.advanced=%s status.primary.eligible=true status.primary.height=110 status.primary.lag=0 status.broken.eligible=false status.broken.height=0 status.broken.lag=0 status.broken.error=%q\n",
				checked, advanced, msg)},
		{"text leaves out the zero times, the zero reference and unset errors while fail-open", text, failOpen,
			"level=INFO msg=check status.primary.eligible=true status.primary.height=0 status.primary.lag=0 status.broken.eligible=true status.broken.height=0 status.broken.lag=0\n"},
		{"JSON nests one object per endpoint", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }, st,
			fmt.Sprintf(`{"level":"INFO","msg":"check","status":{"checked":%q,"reference":110,"advanced":%q,"primary":{"eligible":true,"height":110,"lag":0},"broken":{"eligible":false,"height":0,"lag":0,"error":%q}}}`+"\n",
				checked, advanced, msg)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			slog.New(tt.handler(&buf)).Info("check", "status", tt.st)
			if buf.String() != tt.want {
				t.Errorf("logged\n%s\nwant\n%s", buf.String(), tt.want)
			}
		})
	}
}
