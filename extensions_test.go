package blocklag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
)

func TestProbeTimeout(t *testing.T) {
	good := newProvider(t, 100)
	hung, dripping := newServer(t, hang(t)), newServer(t, drip(t))
	eps := named("good", good.URL, "hung", hung.URL, "dripping", dripping.URL)

	t.Run("a hung and a dripping provider are published ineligible", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		m := mustNew(t, Config{Endpoints: eps, ProbeTimeout: timeout})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := m.Check(ctx)
		took := time.Since(start)
		t.Logf("Check against a hung and a dripping provider returned after %v (ProbeTimeout %v)", took, timeout)
		if took < timeout || ctx.Err() != nil {
			t.Errorf("Check took %v: it neither waited for the timeout nor stayed within its context", took)
		}
		errs := probeErrors(t, err)
		for _, id := range []failnext.EndpointID{"hung", "dripping"} {
			pe := errs[id]
			if pe == nil || !strings.Contains(pe.Error(), "timed out") || !errors.Is(pe, context.DeadlineExceeded) {
				t.Errorf("%s: error %v, want a timeout wrapping context.DeadlineExceeded", id, pe)
			}
		}
		if len(errs) != 2 {
			t.Errorf("Check = %v, want errors for hung and dripping only", err)
		}
		if got := verdicts(m, "good", "hung", "dripping"); !slices.Equal(got, []bool{true, false, false}) {
			t.Errorf("eligible = %v, want only good", got)
		}
	})
	t.Run("without ProbeTimeout the Check's context runs out and the snapshot stays", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: eps})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := m.Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Check = %v, want context.DeadlineExceeded", err)
		}
		if got := verdicts(m, "good", "hung", "dripping"); !slices.Equal(got, []bool{true, true, true}) {
			t.Errorf("eligible = %v, want the fail-open snapshot kept", got)
		}
	})
	t.Run("the Check's own context still wins over a longer ProbeTimeout", func(t *testing.T) {
		m := mustNew(t, Config{Endpoints: eps, ProbeTimeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if err := m.Check(ctx); !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timed out after") {
			t.Errorf("Check = %v, want the Check's deadline, not a probe timeout", err)
		}
		if !m.Eligible("hung") {
			t.Error("the snapshot changed")
		}
	})
}

// One absurd height among honest ones, judged under several Quorum values
// through real Checks.
func TestQuorum(t *testing.T) {
	var pairs []string
	for i, h := range []uint64{1000000000, 100, 99, 90} {
		pairs = append(pairs, string(idOf(i)), newProvider(t, h).URL)
	}
	tests := []struct {
		quorum int
		want   []bool
	}{
		{0, []bool{true, false, false, false}},
		{2, []bool{true, true, true, false}},
		{3, []bool{true, true, true, false}},
		{5, []bool{true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("quorum %d", tt.quorum), func(t *testing.T) {
			m := mustNew(t, Config{Endpoints: named(pairs...), MaxLag: 3, Quorum: tt.quorum})
			if err := check(m); err != nil {
				t.Fatal(err)
			}
			if got := verdicts(m, idOf(0), idOf(1), idOf(2), idOf(3)); !slices.Equal(got, tt.want) {
				t.Errorf("eligible = %v, want %v", got, tt.want)
			}
		})
	}
}
