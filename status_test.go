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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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

// Heights a script's providers report besides real ones.
const (
	down       int64 = -1 // the provider answers HTTP 503, so its probe fails
	otherChain int64 = -2 // the provider is at block 1000 of chain 2, so its probe fails while ChainID is 1
)

// script drives a Monitor over one provider per ID, each reporting the
// height the next Check is given, at the time it is given.
type script struct {
	m         *Monitor
	now       time.Time
	providers []*provider // in configured order
	cancel    bool        // the Check's context ends while it probes
	stop      context.CancelFunc
}

// newScript makes a Monitor from cfg over one provider per ID. Each
// provider serves chain 1 unless it is at otherChain.
func newScript(t *testing.T, cfg Config, ids ...string) *script {
	t.Helper()
	s := &script{}
	for _, id := range ids {
		p := newProvider(t, 0)
		s.providers = append(s.providers, p)
		cfg.Endpoints = append(cfg.Endpoints, named(id, p.URL)...)
	}
	cfg.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if s.cancel {
			s.stop()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	s.m = mustNew(t, cfg)
	s.m.now = func() time.Time { return s.now }
	return s
}

// check runs one Check at the time of day at, in which the providers
// report heights, in the order of their IDs.
func (s *script) check(at string, heights ...int64) error {
	s.now = clockAt(at)
	for i, p := range s.providers {
		var fail http.HandlerFunc
		switch h := heights[i]; h {
		case down:
			fail = reply(http.StatusServiceUnavailable, "")
		case otherChain:
			p.height.Store(1000)
			p.serveChain(`"0x2"`)
		default:
			p.height.Store(uint64(h))
			p.serveChain(`"0x1"`)
		}
		p.on("eth_blockNumber", fail)
		p.on("eth_chainId", fail)
	}
	var ctx context.Context
	ctx, s.stop = context.WithCancel(context.Background())
	defer s.stop()
	return s.m.Check(ctx)
}

// step is one Check of a script and the Advanced times it should leave.
type step struct {
	at        string  // the Check's time of day
	heights   []int64 // each provider's, in configured order
	cancelled bool    // the Check's context ends while it probes
	front     string  // the Status.Advanced it should leave; "" for zero
	each      []string
}

// checkAt is a Check at a time of day in which the providers report
// heights; cancelledAt one whose context ends while it probes.
func checkAt(at string, heights ...int64) step { return step{at: at, heights: heights} }
func cancelledAt(at string, heights ...int64) step {
	return step{at: at, heights: heights, cancelled: true}
}

// wants sets what Status.Advanced should be after the step and, in the
// order of the providers, what each one's Advanced should be; "" is zero.
func (s step) wants(front string, each ...string) step {
	s.front, s.each = front, each
	return s
}

// hms shows a time as a script writes it: "" for zero.
func hms(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.TimeOnly)
}

// Each case is a sequence of Checks, with the time each runs at, the
// heights it sees, and the Advanced times it should leave; MaxLag is 3.
func TestAdvancedMovesOnlyWithTheFront(t *testing.T) {
	tests := []struct {
		name    string
		quorum  int
		chainID bool
		steps   []step
	}{
		{"the first Check moves the front and every provider, height zero too", 0, false, []step{
			checkAt("10:00:00", 0, 0).wants("10:00:00", "10:00:00", "10:00:00"),
		}},
		{"the first Check moves every provider that answered, behind the front too", 0, false, []step{
			checkAt("10:00:00", 110, 100, down).wants("10:00:00", "10:00:00", "10:00:00", ""),
		}},
		{"a new block at the front moves the front", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 101, 100).wants("10:00:10", "10:00:10", "10:00:00"),
		}},
		{"a provider overtaking the front moves the front", 0, false, []step{
			checkAt("10:00:00", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 110, 111).wants("10:00:10", "10:00:00", "10:00:10"),
		}},
		{"a front that stands still keeps its time", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
		}},
		{"a lagging provider catching up moves only its own time", 0, false, []step{
			checkAt("10:00:00", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 110, 110).wants("10:00:00", "10:00:00", "10:00:10"),
		}},
		{"a provider coming back at a height it had reached before moves nothing", 0, false, []step{
			checkAt("10:00:00", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", down, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
		}},
		{"a provider coming back to the front does not move it while another climbs behind", 0, false, []step{
			checkAt("10:00:00", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", down, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", 110, 105).wants("10:00:00", "10:00:00", "10:00:20"),
		}},
		{"a dip and a recovery move nothing", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 98, 98).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
		}},
		{"a provider above a Quorum reference climbing moves only its own time", 2, false, []step{
			checkAt("10:00:00", 1000, 100, 100).wants("10:00:00", "10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 1005, 100, 100).wants("10:00:00", "10:00:10", "10:00:00", "10:00:00"),
		}},
		{"a provider confirming ChainID at the front's height moves only its own time", 0, true, []step{
			checkAt("10:00:00", 100, otherChain).wants("10:00:00", "10:00:00", ""),
			checkAt("10:00:10", 100, 100).wants("10:00:00", "10:00:00", "10:00:10"),
		}},
		{"a provider whose first height comes after failures gets its own time then", 0, false, []step{
			checkAt("10:00:00", down, 100).wants("10:00:00", "", "10:00:00"),
			checkAt("10:00:10", 100, 100).wants("10:00:00", "10:00:10", "10:00:00"),
		}},
		{"a failed probe keeps the provider's own time", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", down, 101).wants("10:00:10", "10:00:00", "10:00:10"),
		}},
		{"the front never moves back when heights fall", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", 101, 101).wants("10:00:10", "10:00:10", "10:00:10"),
			checkAt("10:00:20", 99, 99).wants("10:00:10", "10:00:10", "10:00:10"),
		}},
		{"no time moves back when the clock steps back", 0, false, []step{
			checkAt("10:00:10", 100, 100).wants("10:00:10", "10:00:10", "10:00:10"),
			checkAt("10:00:05", 101, 101).wants("10:00:10", "10:00:10", "10:00:10"),
		}},
		{"while the provider that set the reference fails, another climbing toward its height moves the front", 0, false, []step{
			checkAt("10:00:00", 110, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", down, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", down, 105).wants("10:00:20", "10:00:00", "10:00:20"),
		}},
		{"a cancelled Check counts none of its heights", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			cancelledAt("10:00:10", 101, 101).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", 101, 100).wants("10:00:20", "10:00:20", "10:00:00"),
		}},
		{"a Check in which every probe fails changes nothing", 0, false, []step{
			checkAt("10:00:00", 100, 100).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:10", down, down).wants("10:00:00", "10:00:00", "10:00:00"),
			checkAt("10:00:20", 101, 100).wants("10:00:20", "10:00:20", "10:00:00"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := []string{"a", "b", "c"}[:len(tt.steps[0].heights)]
			cfg := Config{MaxLag: 3, Quorum: tt.quorum}
			if tt.chainID {
				cfg.ChainID = 1
			}
			s := newScript(t, cfg, ids...)
			checked := ""
			for _, st := range tt.steps {
				s.cancel = st.cancelled
				s.check(st.at, st.heights...)
				if !st.cancelled && slices.ContainsFunc(st.heights, func(h int64) bool { return h >= 0 }) {
					checked = st.at
				}
				got := s.m.Status()
				if hms(got.Checked) != checked {
					t.Fatalf("after the Check at %s: Checked %s, want %s", st.at, hms(got.Checked), checked)
				}
				if hms(got.Advanced) != st.front {
					t.Errorf("after the Check at %s: Status.Advanced %q, want %q", st.at, hms(got.Advanced), st.front)
				}
				for i, e := range got.Endpoints {
					if hms(e.Advanced) != st.each[i] {
						t.Errorf("after the Check at %s: %s's Advanced %q, want %q", st.at, e.ID, hms(e.Advanced), st.each[i])
					}
				}
			}
		})
	}
}

// jsonStatuses are the Statuses the JSON and log tests show, from a
// Monitor's Checks or built by hand.
func jsonStatuses(t *testing.T) map[string]Status {
	t.Helper()
	fresh := newScript(t, Config{MaxLag: 3}, "primary", "backup")
	out := map[string]Status{"fail-open": fresh.m.Status(), "zero": {}}

	mixed := newScript(t, Config{MaxLag: 3}, "primary", "backup", "lagging")
	mixed.check("10:00:00", 110, 108, 100)
	if err := mixed.check("10:00:15", 110, down, 100); err == nil {
		t.Fatal("the backup's probe did not fail")
	}
	out["mixed"] = mixed.m.Status()

	genesis := newScript(t, Config{}, "a")
	genesis.check("10:00:00", 0)
	out["height zero"] = genesis.m.Status()

	// IDs that are also the names of Status members.
	names := newScript(t, Config{MaxLag: 3}, "reference", "checked", "advanced", "endpoints", "height")
	names.check("10:00:00", 110, 100, 110, 110, down)
	out["member names as IDs"] = names.m.Status()

	// A failure whose message does not depend on how probes word theirs.
	out["hand-built, a ProbeError"] = Status{
		Checked: clockAt("10:00:15"), Reference: 110, MaxLag: 2, Advanced: clockAt("10:00:00"),
		Endpoints: []EndpointStatus{
			{ID: "primary", Eligible: true, Height: 112, Ahead: 2, Latency: 12500 * time.Microsecond, Advanced: clockAt("10:00:00")},
			{ID: "backup", Err: &ProbeError{Endpoint: "backup", Err: &StatusError{StatusCode: 503}}, Latency: 2 * time.Second, Advanced: clockAt("10:00:00")},
		},
	}
	out["hand-built, errors that are no ProbeError"] = Status{
		Checked: clockAt("10:00:00"), Reference: 7,
		Endpoints: []EndpointStatus{
			{ID: "plain", Err: errors.New("boom\nforged line")},
			{ID: "wrapped", Err: fmt.Errorf("gave up: %w", &StatusError{StatusCode: 429})},
		},
	}
	return out
}

// failureJSON is the reason and error members for err, a *ProbeError.
func failureJSON(err error) string {
	pe := err.(*ProbeError)
	msg, _ := json.Marshal(pe.Error())
	return fmt.Sprintf(`"reason":%q,"error":%s`, pe.Reason(), msg)
}

// failureText is the same for a TextHandler, under the key prefix.
func failureText(prefix string, err error) string {
	pe := err.(*ProbeError)
	return fmt.Sprintf("%s.reason=%s %s.error=%q", prefix, pe.Reason(), prefix, pe.Error())
}

func TestStatusMarshalsAndLogsAsJSONWithOnlyTheMembersThatHold(t *testing.T) {
	statuses := jsonStatuses(t)
	tests := []struct {
		name   string
		status string
		want   string
	}{
		{"a fail-open Status has only the endpoints, each with its ID and verdict", "fail-open",
			`{"max_lag":3,"endpoints":[{"id":"primary","eligible":true},{"id":"backup","eligible":true}]}`},
		{"the zero Status has an empty endpoint list", "zero", `{"max_lag":0,"endpoints":[]}`},
		{"a failed endpoint shows its reason and message and no height, and keeps its Advanced", "mixed",
			`{"checked":"2026-01-02T10:00:15Z","reference":110,"max_lag":3,"advanced":"2026-01-02T10:00:00Z","endpoints":[` +
				`{"id":"primary","eligible":true,"height":110,"lag":0,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"backup","eligible":false,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z",` + failureJSON(statuses["mixed"].Endpoints[1].Err) + `},` +
				`{"id":"lagging","eligible":false,"height":100,"lag":10,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"}]}`},
		{"height and reference zero are shown", "height zero",
			`{"checked":"2026-01-02T10:00:00Z","reference":0,"max_lag":0,"advanced":"2026-01-02T10:00:00Z","endpoints":[{"id":"a","eligible":true,"height":0,"lag":0,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"}]}`},
		{"IDs named like members stay inside the endpoint list", "member names as IDs",
			`{"checked":"2026-01-02T10:00:00Z","reference":110,"max_lag":3,"advanced":"2026-01-02T10:00:00Z","endpoints":[` +
				`{"id":"reference","eligible":true,"height":110,"lag":0,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"checked","eligible":false,"height":100,"lag":10,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"advanced","eligible":true,"height":110,"lag":0,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"endpoints","eligible":true,"height":110,"lag":0,"latency_seconds":0,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"height","eligible":false,"latency_seconds":0,` + failureJSON(statuses["member names as IDs"].Endpoints[4].Err) + `}]}`},
		{"a ProbeError shows its reason and its message, a lead its ahead, and latencies are in seconds", "hand-built, a ProbeError",
			`{"checked":"2026-01-02T10:00:15Z","reference":110,"max_lag":2,"advanced":"2026-01-02T10:00:00Z","endpoints":[` +
				`{"id":"primary","eligible":true,"height":112,"lag":0,"ahead":2,"latency_seconds":0.0125,"advanced":"2026-01-02T10:00:00Z"},` +
				`{"id":"backup","eligible":false,"latency_seconds":2,"advanced":"2026-01-02T10:00:00Z","reason":"http_status","error":"blocklag: endpoint \"backup\": HTTP status 503"}]}`},
		{"an error that is no ProbeError shows escaped, with the reason its codes give", "hand-built, errors that are no ProbeError",
			`{"checked":"2026-01-02T10:00:00Z","reference":7,"max_lag":0,"endpoints":[` +
				`{"id":"plain","eligible":false,"latency_seconds":0,"reason":"transport","error":"boom?forged line"},` +
				`{"id":"wrapped","eligible":false,"latency_seconds":0,"reason":"rate_limited","error":"gave up: HTTP status 429"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(statuses[tt.status])
			if err != nil || string(got) != tt.want {
				t.Errorf("json.Marshal =\n%s, %v\nwant\n%s", got, err, tt.want)
			}
			// Each EndpointStatus marshals alone as it does inside its
			// Status, and slog's JSON handler writes the same members, the
			// endpoint list as an object keyed by ID, left out when empty.
			var whole struct{ Endpoints []json.RawMessage }
			if json.Unmarshal([]byte(tt.want), &whole); len(whole.Endpoints) != len(statuses[tt.status].Endpoints) {
				t.Fatalf("the row lists %d endpoints, the Status %d", len(whole.Endpoints), len(statuses[tt.status].Endpoints))
			}
			head, _, _ := strings.Cut(tt.want, `"endpoints":[`)
			logJSON := strings.TrimSuffix(head, ",") + "}"
			var keyed []string
			for i, e := range statuses[tt.status].Endpoints {
				if alone, err := json.Marshal(e); err != nil || string(alone) != string(whole.Endpoints[i]) {
					t.Errorf("json.Marshal(%s) alone =\n%s, %v\nwant what the Status holds", e.ID, alone, err)
				}
				id, _ := json.Marshal(string(e.ID))
				keyed = append(keyed, string(id)+":{"+strings.TrimPrefix(string(whole.Endpoints[i]), `{"id":`+string(id)+","))
				logJSON = head + `"endpoints":{` + strings.Join(keyed, ",") + "}}"
			}
			if got, want := logged(statuses[tt.status], jsonHandler), `{"level":"INFO","msg":"check","status":`+logJSON+"}\n"; got != want {
				t.Errorf("slog's JSON handler wrote\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// logged is what handler writes for slog.Info("check", "status", v),
// without the time.
func logged(v any, handler func(io.Writer, *slog.HandlerOptions) slog.Handler) string {
	var buf strings.Builder
	opts := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(handler(&buf, opts)).Info("check", "status", v)
	return buf.String()
}

func textHandler(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewTextHandler(w, o) }
func jsonHandler(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewJSONHandler(w, o) }

func TestStatusLogsAsTextTheMembersOfItsJSONAsGroups(t *testing.T) {
	statuses := jsonStatuses(t)
	tests := []struct {
		name   string
		status string
		want   string
	}{
		{"text shows a fail-open Status as verdicts alone", "fail-open",
			"level=INFO msg=check status.max_lag=3 status.endpoints.primary.eligible=true status.endpoints.backup.eligible=true\n"},
		{"text shows nothing of the zero Status", "zero",
			"level=INFO msg=check status.max_lag=0\n"},
		{"text shows a failed endpoint's reason and message and no height", "mixed",
			"level=INFO msg=check status.checked=2026-01-02T10:00:15.000Z status.reference=110 status.max_lag=3 status.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.primary.eligible=true status.endpoints.primary.height=110 status.endpoints.primary.lag=0 status.endpoints.primary.latency_seconds=0 status.endpoints.primary.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.backup.eligible=false status.endpoints.backup.latency_seconds=0 status.endpoints.backup.advanced=2026-01-02T10:00:00.000Z " + failureText("status.endpoints.backup", statuses["mixed"].Endpoints[1].Err) +
				" status.endpoints.lagging.eligible=false status.endpoints.lagging.height=100 status.endpoints.lagging.lag=10 status.endpoints.lagging.latency_seconds=0 status.endpoints.lagging.advanced=2026-01-02T10:00:00.000Z\n"},
		{"text shows height and reference zero", "height zero",
			"level=INFO msg=check status.checked=2026-01-02T10:00:00.000Z status.reference=0 status.max_lag=0 status.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.a.eligible=true status.endpoints.a.height=0 status.endpoints.a.lag=0 status.endpoints.a.latency_seconds=0 status.endpoints.a.advanced=2026-01-02T10:00:00.000Z\n"},
		{"text keeps an ID named reference apart from the reference", "member names as IDs",
			"level=INFO msg=check status.checked=2026-01-02T10:00:00.000Z status.reference=110 status.max_lag=3 status.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.reference.eligible=true status.endpoints.reference.height=110 status.endpoints.reference.lag=0 status.endpoints.reference.latency_seconds=0 status.endpoints.reference.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.checked.eligible=false status.endpoints.checked.height=100 status.endpoints.checked.lag=10 status.endpoints.checked.latency_seconds=0 status.endpoints.checked.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.advanced.eligible=true status.endpoints.advanced.height=110 status.endpoints.advanced.lag=0 status.endpoints.advanced.latency_seconds=0 status.endpoints.advanced.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.endpoints.eligible=true status.endpoints.endpoints.height=110 status.endpoints.endpoints.lag=0 status.endpoints.endpoints.latency_seconds=0 status.endpoints.endpoints.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.height.eligible=false status.endpoints.height.latency_seconds=0 " + failureText("status.endpoints.height", statuses["member names as IDs"].Endpoints[4].Err) + "\n"},
		{"text shows a ProbeError's reason and message, and latencies as durations", "hand-built, a ProbeError",
			"level=INFO msg=check status.checked=2026-01-02T10:00:15.000Z status.reference=110 status.max_lag=2 status.advanced=2026-01-02T10:00:00.000Z" +
				" status.endpoints.primary.eligible=true status.endpoints.primary.height=112 status.endpoints.primary.lag=0 status.endpoints.primary.ahead=2 status.endpoints.primary.latency_seconds=0.0125 status.endpoints.primary.advanced=2026-01-02T10:00:00.000Z" +
				` status.endpoints.backup.eligible=false status.endpoints.backup.latency_seconds=2 status.endpoints.backup.advanced=2026-01-02T10:00:00.000Z status.endpoints.backup.reason=http_status status.endpoints.backup.error="blocklag: endpoint \"backup\": HTTP status 503"` + "\n"},
		{"text escapes an error that is no ProbeError", "hand-built, errors that are no ProbeError",
			`level=INFO msg=check status.checked=2026-01-02T10:00:00.000Z status.reference=7 status.max_lag=0` +
				` status.endpoints.plain.eligible=false status.endpoints.plain.latency_seconds=0 status.endpoints.plain.reason=transport status.endpoints.plain.error="boom?forged line"` +
				` status.endpoints.wrapped.eligible=false status.endpoints.wrapped.latency_seconds=0 status.endpoints.wrapped.reason=rate_limited status.endpoints.wrapped.error="gave up: HTTP status 429"` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := logged(statuses[tt.status], textHandler); got != tt.want {
				t.Errorf("logged\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A probe's Latency runs from its height request until both its requests
// have ended, success or failure. The Monitor's clock moves only when a
// provider answers, by the time it took.
func TestLatencyIsHowLongTheProbeTook(t *testing.T) {
	var clock atomic.Int64 // how far the providers have moved the clock, in nanoseconds
	// advanceThen is a handler that moves the clock by d, then answers with
	// status (0 means 200) and body.
	advanceThen := func(d time.Duration, status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			clock.Add(int64(d))
			reply(status, body)(w, r)
		}
	}
	tests := []struct {
		name        string
		chainID     uint64
		height      http.HandlerFunc
		chain       http.HandlerFunc
		wantLatency time.Duration
		wantFailed  bool
	}{
		{name: "an answer", height: advanceThen(250*time.Millisecond, 0, answer(100)), wantLatency: 250 * time.Millisecond},
		{name: "a failure", height: advanceThen(2*time.Second, http.StatusBadGateway, ""), wantLatency: 2 * time.Second, wantFailed: true},
		{name: "a height answer and the slower chain ID answer beside it", chainID: 1,
			height: advanceThen(0, 0, answer(100)), chain: advanceThen(400*time.Millisecond, 0, answer(1)), wantLatency: 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", tt.height)
			p.on("eth_chainId", tt.chain)
			// other answers at once, so that the Check publishes even when p fails.
			m := mustNew(t, Config{Endpoints: named("p", p.URL, "other", newProvider(t, 100).URL), ChainID: tt.chainID})
			clock.Store(0)
			m.now = func() time.Time { return clockAt("10:00:00").Add(time.Duration(clock.Load())) }
			err := check(m)
			st := m.Status()
			if (err != nil) != tt.wantFailed || (st.Endpoints[0].Err != nil) != tt.wantFailed {
				t.Fatalf("Check = %v, want a failure of p: %v", err, tt.wantFailed)
			}
			if got := st.Endpoints[0].Latency; got != tt.wantLatency {
				t.Errorf("Latency %v, want %v", got, tt.wantLatency)
			}
		})
	}
}
