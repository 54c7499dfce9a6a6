package blocklagprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// fakeNode starts a JSON-RPC server that reports the given block height to
// every request, with id 1 as many simple providers do. Real code points at
// real providers instead.
func fakeNode(height string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%q}`, height)
	}))
}

// After a Check, the registry holds each provider's verdict, height and
// lag, the reference height, and the counts of checks. This prints those
// families; the others, listed in the README, hold the probes' times,
// durations and failures.
func ExampleNewCollector() {
	primary := fakeNode("0x64") // block 100
	defer primary.Close()
	backup := fakeNode("0x6e") // block 110
	defer backup.Close()

	monitor, err := blocklag.New(blocklag.Config{
		Endpoints: []failnext.Endpoint{
			{ID: "primary", URL: primary.URL},
			{ID: "backup", URL: backup.URL},
		},
		MaxLag: 3,
	})
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(blocklagprom.NewCollector(monitor))
	if err := monitor.Check(context.Background()); err != nil {
		fmt.Println("check:", err)
	}

	printed := []string{
		"blocklag_checks_total",
		"blocklag_checks_published_total",
		"blocklag_provider_eligible",
		"blocklag_provider_height",
		"blocklag_provider_lag_blocks",
		"blocklag_reference_height",
	}
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var lines []string
	for _, f := range families {
		if !slices.Contains(printed, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			series := f.GetName()
			if len(labels) > 0 {
				series += "{" + strings.Join(labels, ",") + "}"
			}
			value := m.GetGauge().GetValue()
			if f.GetType() == dto.MetricType_COUNTER {
				value = m.GetCounter().GetValue()
			}
			lines = append(lines, fmt.Sprintf("%s %g", series, value))
		}
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))

	// Output:
	// blocklag_checks_published_total 1
	// blocklag_checks_total 1
	// blocklag_provider_eligible{provider="backup"} 1
	// blocklag_provider_eligible{provider="primary"} 0
	// blocklag_provider_height{provider="backup"} 110
	// blocklag_provider_height{provider="primary"} 100
	// blocklag_provider_lag_blocks{provider="backup"} 0
	// blocklag_provider_lag_blocks{provider="primary"} 10
	// blocklag_reference_height 110
}

// Two Monitors, one per chain, share a registry when each collector is
// registered through prometheus.WrapRegistererWith with its own value of a
// label of your choosing; registered directly, the second would clash with
// the first. Here every series gets chain="mainnet" or chain="sepolia".
func Example_twoChains() {
	reg := prometheus.NewRegistry()
	for _, chain := range []struct{ name, height string }{
		{name: "mainnet", height: "0x64"}, // block 100
		{name: "sepolia", height: "0xc8"}, // block 200
	} {
		node := fakeNode(chain.height)
		defer node.Close()
		monitor, err := blocklag.New(blocklag.Config{
			Endpoints: []failnext.Endpoint{{ID: "primary", URL: node.URL}},
		})
		if err != nil {
			panic(err)
		}
		if err := monitor.Check(context.Background()); err != nil {
			fmt.Println("check:", err)
		}
		prometheus.WrapRegistererWith(prometheus.Labels{"chain": chain.name}, reg).
			MustRegister(blocklagprom.NewCollector(monitor))
	}

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() == "blocklag_reference_height" {
			for _, m := range f.GetMetric() {
				fmt.Println(m.GetLabel()[0].GetValue(), m.GetGauge().GetValue())
			}
		}
	}

	// Output:
	// mainnet 100
	// sepolia 200
}
