package blocklagprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// The failure reasons follow the check in force: no series while the
// Monitor is fail-open, and after a published check every reason for every
// provider, 1 for the one its probe failed with. The Monitors require
// mainnet, so that a provider on another chain fails too.
func TestFailureReasonFollowsTheCheckInForce(t *testing.T) {
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, one per node a, b, c...
		want   map[string]blocklag.Reason
	}{
		{"before any check there is no series", nil, nil},
		{"a check in which every probe fails leaves the fail-open state without series", [][]answer{{cut, unavailable}}, nil},
		{"a provider cut off fails as transport, one that hangs as timeout, one that answers as nothing",
			[][]answer{{healthy, cut, hang}}, map[string]blocklag.Reason{"a": "", "b": "transport", "c": "timeout"}},
		{"each failed provider has its own reason",
			[][]answer{{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut}},
			map[string]blocklag.Reason{"a": "", "b": "", "c": "rate_limited", "d": "rate_limited", "e": "unauthorized", "f": "http_status", "g": "wrong_chain", "h": "transport"}},
		{"a check in which every probe fails keeps the reasons of the check in force",
			[][]answer{{healthy, cut}, {unavailable, otherChain}}, map[string]blocklag.Reason{"a": "", "b": "transport"}},
		{"a provider whose reason changes has only its new one",
			[][]answer{{healthy, cut}, {healthy, hang}}, map[string]blocklag.Reason{"a": "", "b": "timeout"}},
		{"a provider that recovers has no reason", [][]answer{{healthy, cut}, {healthy, behind}}, map[string]blocklag.Reason{"a": "", "b": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providers := 2
			for _, answers := range tt.checks {
				providers = max(providers, len(answers))
			}
			m, _ := checkedMonitor(t, providers, tt.checks)
			c := blocklagprom.NewCollector(m)
			want := "" // no series at all
			if tt.want != nil {
				want = blocklagprom.StateSet(tt.want, blocklagprom.EightReasons)
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader(want), "blocklag_provider_failure_reason"); err != nil {
				t.Error(err)
			}
			assertLintClean(t, c)
		})
	}
}
