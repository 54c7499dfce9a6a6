package blocklagprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// The gauges whose exposition these tests compare in full; the timestamps
// are left out, since their values change from run to run.
var untimed = []string{
	"blocklag_provider_eligible",
	"blocklag_provider_up",
	"blocklag_provider_height",
	"blocklag_provider_lag_blocks",
	"blocklag_provider_failure_reason",
	"blocklag_reference_height",
}

// The help and type lines of the exposition, as the collector writes them.
const (
	eligibleHead = `# HELP blocklag_provider_eligible Whether the provider is eligible (1) or not (0), as Monitor.Eligible answers.
# TYPE blocklag_provider_eligible gauge
`
	upHead = `# HELP blocklag_provider_up Whether the provider's probe succeeded (1) or failed (0) in the latest published check.
# TYPE blocklag_provider_up gauge
`
	heightHead = `# HELP blocklag_provider_height Block height the provider reported in the latest published check.
# TYPE blocklag_provider_height gauge
`
	lagHead = `# HELP blocklag_provider_lag_blocks Blocks the provider was behind the reference height in the latest published check.
# TYPE blocklag_provider_lag_blocks gauge
`
	reasonHead = `# HELP blocklag_provider_failure_reason Reason the provider's probe failed in the latest published check, as ProbeError.Reason names it (value always 1).
# TYPE blocklag_provider_failure_reason gauge
`
	referenceHead = `# HELP blocklag_reference_height Block height that lag was measured from in the latest published check.
# TYPE blocklag_reference_height gauge
`
)

// A failed provider carries one failure_reason series, with the reason
// its probe failed in the check in force; a provider that answered carries
// none, and neither does any provider while the Monitor is fail-open. The
// Monitors require mainnet, so that a provider on another chain fails too.
func TestFailureReasonFollowsTheCheckInForce(t *testing.T) {
	tests := []struct {
		name   string
		checks [][]answer // each Check's answers, one per node a, b, c...
		want   string     // the exposition of the untimed gauges
	}{
		{
			name:   "before any check no provider has a reason",
			checks: nil,
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 1
`,
		},
		{
			name:   "a check in which every probe fails leaves the fail-open state without reasons",
			checks: [][]answer{{cut, unavailable}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 1
`,
		},
		{
			name:   "a provider cut off has the reason transport and one that hangs has timeout",
			checks: [][]answer{{healthy, cut, hang}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
blocklag_provider_up{provider="c"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="transport"} 1
blocklag_provider_failure_reason{provider="c",reason="timeout"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider answering HTTP 429 or RPC error -32005 is rate limited",
			checks: [][]answer{{healthy, tooMany, limitErr}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
blocklag_provider_up{provider="c"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="c",reason="rate_limited"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider on another chain has the reason wrong_chain and no height",
			checks: [][]answer{{behind, otherChain}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="wrong_chain"} 1
` + referenceHead + `blocklag_reference_height 100
`,
		},
		{
			name:   "each failed provider has its own reason and those that answered have none",
			checks: [][]answer{{healthy, behind, tooMany, limitErr, forbidden, unavailable, otherChain, cut}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
blocklag_provider_eligible{provider="c"} 0
blocklag_provider_eligible{provider="d"} 0
blocklag_provider_eligible{provider="e"} 0
blocklag_provider_eligible{provider="f"} 0
blocklag_provider_eligible{provider="g"} 0
blocklag_provider_eligible{provider="h"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 1
blocklag_provider_up{provider="c"} 0
blocklag_provider_up{provider="d"} 0
blocklag_provider_up{provider="e"} 0
blocklag_provider_up{provider="f"} 0
blocklag_provider_up{provider="g"} 0
blocklag_provider_up{provider="h"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
blocklag_provider_height{provider="b"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
blocklag_provider_lag_blocks{provider="b"} 10
` + reasonHead + `blocklag_provider_failure_reason{provider="c",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="d",reason="rate_limited"} 1
blocklag_provider_failure_reason{provider="e",reason="unauthorized"} 1
blocklag_provider_failure_reason{provider="f",reason="http_status"} 1
blocklag_provider_failure_reason{provider="g",reason="wrong_chain"} 1
blocklag_provider_failure_reason{provider="h",reason="transport"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a check in which every probe fails keeps the reasons of the check in force",
			checks: [][]answer{{healthy, cut}, {unavailable, otherChain}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="transport"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider whose reason changes has only its new one",
			checks: [][]answer{{healthy, cut}, {healthy, hang}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 0
` + heightHead + `blocklag_provider_height{provider="a"} 110
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
` + reasonHead + `blocklag_provider_failure_reason{provider="b",reason="timeout"} 1
` + referenceHead + `blocklag_reference_height 110
`,
		},
		{
			name:   "a provider that recovers loses its reason",
			checks: [][]answer{{healthy, cut}, {healthy, behind}},
			want: eligibleHead + `blocklag_provider_eligible{provider="a"} 1
blocklag_provider_eligible{provider="b"} 0
` + upHead + `blocklag_provider_up{provider="a"} 1
blocklag_provider_up{provider="b"} 1
` + heightHead + `blocklag_provider_height{provider="a"} 110
blocklag_provider_height{provider="b"} 100
` + lagHead + `blocklag_provider_lag_blocks{provider="a"} 0
blocklag_provider_lag_blocks{provider="b"} 10
` + referenceHead + `blocklag_reference_height 110
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providers := 2
			for _, answers := range tt.checks {
				providers = max(providers, len(answers))
			}
			m, _ := checkedMonitor(t, providers, tt.checks)
			c := blocklagprom.NewCollector(m)
			if err := testutil.CollectAndCompare(c, strings.NewReader(tt.want), untimed...); err != nil {
				t.Error(err)
			}
			assertLintClean(t, c)
		})
	}
}
