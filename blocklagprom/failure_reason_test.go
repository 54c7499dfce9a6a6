package blocklagprom_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// reasonSet is the exposition of blocklag_provider_failure_reason as a
// state set: for each provider of failed, in order, every reason, 1 for
// the one it failed with and 0 for the others ("" for one that answered).
// A nil failed means no series at all.
func reasonSet(failed map[string]string) string {
	if failed == nil {
		return ""
	}
	out := `# HELP blocklag_provider_failure_reason Whether the provider's probe failed for this reason (1) or not (0) in the latest published check, as ProbeError.Reason names it.
# TYPE blocklag_provider_failure_reason gauge
`
	reasons := slices.Sorted(slices.Values(allReasons))
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		for _, r := range reasons {
			v := 0
			if failed[id] == r {
				v = 1
			}
			out += fmt.Sprintf("blocklag_provider_failure_reason{provider=%q,reason=%q} %d\n", id, r, v)
		}
	}
	return out
}

// The failure reasons follow the check in force: no series while the
// Monitor is fail-open, and after a published check every reason for every
// provider, 1 for the one its probe failed with. The Monitors require
// mainnet, so that a provider on another chain fails too.
func TestFailureReasonFollowsTheCheckInForce(t *testing.T) {
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, one per node a, b, c...
		want   map[string]string
	}{
		{"before any check there is no series", nil, nil},
		{"a check in which every probe fails leaves the fail-open state without series", [][]answer{{cut, unavailable}}, nil},
		{"a provider cut off fails as transport, one that hangs as timeout, one that answers as nothing",
			[][]answer{{healthy, cut, hang}}, map[string]string{"a": "", "b": "transport", "c": "timeout"}},
		{"each failed provider has its own reason",
			[][]answer{{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut}},
			map[string]string{"a": "", "b": "", "c": "rate_limited", "d": "rate_limited", "e": "unauthorized", "f": "http_status", "g": "wrong_chain", "h": "transport"}},
		{"a check in which every probe fails keeps the reasons of the check in force",
			[][]answer{{healthy, cut}, {unavailable, otherChain}}, map[string]string{"a": "", "b": "transport"}},
		{"a provider whose reason changes has only its new one",
			[][]answer{{healthy, cut}, {healthy, hang}}, map[string]string{"a": "", "b": "timeout"}},
		{"a provider that recovers has no reason", [][]answer{{healthy, cut}, {healthy, behind}}, map[string]string{"a": "", "b": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providers := 2
			for _, answers := range tt.checks {
				providers = max(providers, len(answers))
			}
			m, _ := checkedMonitor(t, providers, tt.checks)
			c := blocklagprom.NewCollector(m)
			if err := testutil.CollectAndCompare(c, strings.NewReader(reasonSet(tt.want)), "blocklag_provider_failure_reason"); err != nil {
				t.Error(err)
			}
			assertLintClean(t, c)
		})
	}
}
