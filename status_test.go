package blocklag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

// Status returns a copy: changing it changes neither Status nor Eligible.
func TestStatusIsACopy(t *testing.T) {
	p := newProvider(t, 100)
	q := newProvider(t, 90)
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

// Status carries the two rules the verdicts follow, MaxLag and MaxAhead,
// from New on, so that a reader of it needs no copy of the Config.
func TestStatusCarriesTheRulesBeforeAndAfterAPublish(t *testing.T) {
	p := newProvider(t, 100)
	q := newProvider(t, 99)
	r := newProvider(t, 98)
	cfg := Config{Endpoints: named("p", p.URL, "q", q.URL, "r", r.URL), MaxLag: 3, Quorum: 2, MaxAhead: 10}
	m := mustNew(t, cfg)
	for _, when := range []string{"before any Check", "after a Check"} {
		if st := m.Status(); st.MaxLag != 3 || st.MaxAhead != 10 {
			t.Errorf("Status %s has MaxLag %d and MaxAhead %d, want 3 and 10", when, st.MaxLag, st.MaxAhead)
		}
		if err := check(m); err != nil {
			t.Fatal(err)
		}
	}
}

// Heights a script's providers report besides real ones.
const (
	down       int64 = -1 // the provider answers HTTP 503, so its probe fails
	otherChain int64 = -2 // the provider is at block 1000 of chain 2, so its probe fails while ChainID is 1
	limited    int64 = -3 // the provider answers HTTP 429 with Infura's JSON-RPC error
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
		case limited:
			fail = reply(http.StatusTooManyRequests, rpcErrorAnswer(-32005, "daily request count exceeded"))
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
// heights.
func checkAt(at string, heights ...int64) step { return step{at: at, heights: heights} }

// cancelledAt is a Check like checkAt's whose context ends while it probes.
func cancelledAt(at string, heights ...int64) step {
	return step{at: at, heights: heights, cancelled: true}
}

// wants sets what Status.Advanced should be after the step and, in the
// order of the providers, what each one's Advanced should be; "" is zero.
func (s step) wants(front string, each ...string) step {
	s.front = front
	s.each = each
	return s
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
		{"while the leader fails, another climbing toward its height moves the front", 0, false, []step{
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
				answered := slices.ContainsFunc(st.heights, func(h int64) bool { return h >= 0 })
				if !st.cancelled && answered {
					checked = st.at
				}
				got := s.m.Status()
				if hms(got.Checked) != checked {
					t.Fatalf("after the Check at %s: Checked %s, want %s", st.at, hms(got.Checked), checked)
				}
				if hms(got.Advanced) != st.front {
					t.Errorf("after the Check at %s: Status.Advanced %q, want %q",
						st.at, hms(got.Advanced), st.front)
				}
				for i, e := range got.Endpoints {
					if hms(e.Advanced) != st.each[i] {
						t.Errorf("after the Check at %s: %s's Advanced %q, want %q",
							st.at, e.ID, hms(e.Advanced), st.each[i])
					}
				}
			}
		})
	}
}

// statusForm is a Status whose forms a golden file holds, and whether a
// Monitor made it.
type statusForm struct {
	name        string // also the golden file's, under testdata/status
	status      Status
	fromMonitor bool
}

// statusForms are the Statuses whose forms the golden files hold: from a
// Monitor's Checks, at the times of day the scripts give and with every
// latency 0, or built by hand.
func statusForms(t *testing.T) []statusForm {
	t.Helper()
	fresh := newScript(t, Config{MaxLag: 3}, "primary", "backup")

	answered := newScript(t, Config{MaxLag: 3}, "primary", "backup", "lagging")
	mustCheck(t, answered.check("10:00:00", 110, 108, 100))

	failed := newScript(t, Config{MaxLag: 3}, "primary", "backup", "limited", "lagging", "broken")
	mustCheck(t, failed.check("10:00:00", 110, 108, 100, 100, down), "broken")
	mustCheck(t, failed.check("10:00:15", 111, down, limited, 100, down), "backup", "limited", "broken")

	ahead := newScript(t, Config{MaxLag: 3, Quorum: 2, MaxAhead: 10}, "far", "primary", "backup")
	mustCheck(t, ahead.check("10:00:00", 1000, 110, 108))

	// The front stands still while a lagging provider catches up.
	advanced := newScript(t, Config{MaxLag: 3}, "primary", "backup")
	mustCheck(t, advanced.check("10:00:00", 110, 100))
	mustCheck(t, advanced.check("10:00:10", 110, 110))

	genesis := newScript(t, Config{}, "a")
	mustCheck(t, genesis.check("10:00:00", 0))

	names := newScript(t, Config{MaxLag: 3}, "reference", "checked", "advanced", "endpoints", "height")
	mustCheck(t, names.check("10:00:00", 110, 100, 110, 110, down), "height")

	return []statusForm{
		{"fail-open", fresh.m.Status(), true},
		{"zero", Status{}, false},
		{"all-answered", answered.m.Status(), true},
		{"some-failed", failed.m.Status(), true},
		{"one-ahead", ahead.m.Status(), true},
		{"front-stood-still", advanced.m.Status(), true},
		{"height-zero", genesis.m.Status(), true},
		{"member-names-as-ids", names.m.Status(), true},
		// A latency with fractions of a second, and a failure whose
		// message does not depend on how probes word theirs.
		{"hand-built-probe-error", Status{
			Checked:   clockAt("10:00:15"),
			Reference: 110,
			MaxLag:    2,
			Advanced:  clockAt("10:00:00"),
			Endpoints: []EndpointStatus{{
				ID:       "primary",
				Eligible: true,
				Height:   112,
				Ahead:    2,
				Latency:  12500 * time.Microsecond,
				Advanced: clockAt("10:00:00"),
			}, {
				ID:       "backup",
				Err:      &ProbeError{Endpoint: "backup", Err: &StatusError{StatusCode: 503}},
				Latency:  2 * time.Second,
				Advanced: clockAt("10:00:00"),
			}},
		}, false},
		// An error that is no ProbeError is outside text.
		{"hand-built-other-error", Status{
			Checked:   clockAt("10:00:00"),
			Reference: 7,
			Endpoints: []EndpointStatus{{ID: "plain", Err: errors.New("boom\nforged line")}},
		}, false},
	}
}

// mustCheck fails t unless err, a Check's, holds ProbeErrors for exactly
// the endpoints failing.
func mustCheck(t *testing.T, err error, failing ...string) {
	t.Helper()
	errs := probeErrors(t, err)
	for _, id := range failing {
		if errs[failnext.EndpointID(id)] == nil {
			t.Errorf("Check = %v, want %s failed", err, id)
		}
	}
	if len(errs) != len(failing) {
		t.Errorf("Check = %v, want only %v failed", err, failing)
	}
}

// Each form of a Status (json.Marshal, and slog's JSON and text handlers)
// is what its golden file under testdata/status holds. The two JSON forms
// hold the same members, the slog one with the endpoints as an object
// keyed by ID, and an EndpointStatus of a Monitor's Status marshals alone
// as it does inside its Status.
func TestStatusFormsMatchTheirGoldenFiles(t *testing.T) {
	for _, tt := range statusForms(t) {
		t.Run("the forms of the Status "+tt.name+" are its golden file's", func(t *testing.T) {
			js, err := json.Marshal(tt.status)
			if err != nil {
				t.Fatal(err)
			}
			slogJSON := logged(tt.status, jsonHandler)
			slogText := logged(tt.status, textHandler)
			for _, line := range []string{slogJSON, slogText} {
				if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
					t.Errorf("slog wrote %q, want one line", line)
				}
			}
			golden(t, "status/"+tt.name+".golden", renderForms(t, js, slogJSON, slogText))

			var whole struct {
				Endpoints []json.RawMessage `json:"endpoints"`
			}
			err = json.Unmarshal(js, &whole)
			if err != nil || len(whole.Endpoints) != len(tt.status.Endpoints) {
				t.Fatalf("the JSON form %s lists %d endpoints, the Status %d; %v",
					js, len(whole.Endpoints), len(tt.status.Endpoints), err)
			}
			for i, e := range tt.status.Endpoints {
				alone, err := json.Marshal(e)
				if tt.fromMonitor && (err != nil || string(alone) != string(whole.Endpoints[i])) {
					t.Errorf("json.Marshal(%s) alone =\n%s, %v\nwant what the Status holds,\n%s",
						e.ID, alone, err, whole.Endpoints[i])
				}
			}
			if got, want := slogMembers(t, slogJSON), keyedByID(t, js); !reflect.DeepEqual(got, want) {
				t.Errorf("slog's JSON handler logs the members\n%v\nwant the JSON form's\n%v", got, want)
			}
		})
	}
}

// renderForms is the text of a golden file: the JSON forms indented, and
// the text handler's line broken before each key.
func renderForms(t *testing.T, js []byte, slogJSON, slogText string) string {
	t.Helper()
	indent := func(src []byte) string {
		var b bytes.Buffer
		if err := json.Indent(&b, bytes.TrimSpace(src), "", "  "); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return b.String()
	}
	text := strings.ReplaceAll(strings.TrimSuffix(slogText, "\n"), " status.", "\n    status.")
	return "json.Marshal, indented:\n" + indent(js) +
		"\n\nslog.NewJSONHandler, indented:\n" + indent([]byte(slogJSON)) +
		"\n\nslog.NewTextHandler, one line broken before each key:\n" + text + "\n"
}

// slogMembers decodes the status group of a line that slog's JSON handler
// logged.
func slogMembers(t *testing.T, line string) map[string]any {
	t.Helper()
	var logged struct{ Status map[string]any }
	if err := json.Unmarshal([]byte(line), &logged); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return logged.Status
}

// keyedByID decodes js, a Status's JSON form, with its list of endpoints
// made an object keyed by ID, as slog logs it, and left out when empty.
func keyedByID(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var members map[string]any
	if err := json.Unmarshal(js, &members); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	list, _ := members["endpoints"].([]any)
	delete(members, "endpoints")
	if len(list) == 0 {
		return members
	}
	keyed := map[string]any{}
	for _, e := range list {
		endpoint := e.(map[string]any)
		keyed[endpoint["id"].(string)] = endpoint
		delete(endpoint, "id")
	}
	members["endpoints"] = keyed
	return members
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
		{name: "an answer takes as long as its request",
			height:      advanceThen(250*time.Millisecond, 0, answer(100)),
			wantLatency: 250 * time.Millisecond},
		{name: "a failure takes as long as its request",
			height:      advanceThen(2*time.Second, http.StatusBadGateway, ""),
			wantLatency: 2 * time.Second, wantFailed: true},
		{name: "a height answer takes as long as the slower chain ID answer beside it", chainID: 1,
			height:      advanceThen(0, 0, answer(100)),
			chain:       advanceThen(400*time.Millisecond, 0, answer(1)),
			wantLatency: 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, 100)
			p.on("eth_blockNumber", tt.height)
			p.on("eth_chainId", tt.chain)
			// other answers at once, so that the Check publishes even when p fails.
			other := newProvider(t, 100)
			m := mustNew(t, Config{Endpoints: named("p", p.URL, "other", other.URL), ChainID: tt.chainID})
			clock.Store(0)
			m.now = func() time.Time { return clockAt("10:00:00").Add(time.Duration(clock.Load())) }
			err := check(m)
			st := m.Status()
			failed := st.Endpoints[0].Err != nil
			if (err != nil) != tt.wantFailed || failed != tt.wantFailed {
				t.Fatalf("Check = %v, want a failure of p: %v", err, tt.wantFailed)
			}
			if got := st.Endpoints[0].Latency; got != tt.wantLatency {
				t.Errorf("Latency %v, want %v", got, tt.wantLatency)
			}
		})
	}
}
