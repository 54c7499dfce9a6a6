// Package blocklagprom exports a blocklag Monitor's verdicts and the numbers
// they rest on as Prometheus gauges, so that an operator can graph provider
// lag and alert when checks stop or the chain stands still.
//
// One line registers them:
//
//	reg.MustRegister(blocklagprom.NewCollector(monitor))
//
// Every scrape reads one [blocklag.Monitor.Status], so the numbers always
// belong to one check and agree with what [blocklag.Monitor.Eligible]
// answers at that moment. The collector runs no check itself: the program
// keeps calling [blocklag.Monitor.Check] on its own schedule.
//
// # Metrics
//
// All are gauges. The per-provider ones carry the label "provider", holding
// the endpoint's ID. "The verdicts in force" means the snapshot that the
// latest publishing Check left; before the first one publishes, the Monitor
// is fail-open.
//
//   - blocklag_provider_eligible{provider}: 1 or 0, what Eligible answers.
//     Always present, and 1 while fail-open.
//   - blocklag_provider_up{provider}: 1 when the provider's probe succeeded
//     in the check behind the verdicts in force, 0 when it failed. Absent
//     while fail-open.
//   - blocklag_provider_height{provider} and
//     blocklag_provider_lag_blocks{provider}: the height it reported and how
//     far it was behind the reference. Present only for a provider whose
//     probe succeeded in that check.
//   - blocklag_provider_advanced_timestamp_seconds{provider}: Unix time of
//     the latest check in which the provider reported a new highest height.
//     Absent until it has one.
//   - blocklag_reference_height: the height lag was measured from. Absent
//     while fail-open.
//   - blocklag_checked_timestamp_seconds: Unix time, with fractions, when the
//     check behind the verdicts in force finished probing. Absent while
//     fail-open. A check that publishes nothing leaves it unchanged, so
//     time() minus it grows when checks stop or keep failing.
//   - blocklag_advanced_timestamp_seconds: when the front last moved, the
//     latest provider advance among the eligible providers. Absent until
//     there is one. time() minus it grows when every provider is equally
//     stale, which comparing providers cannot show.
//
// # Serving /metrics
//
// A complete program that checks two providers every 15 seconds and serves
// the gauges on its own registry:
//
//	package main
//
//	import (
//		"context"
//		"log"
//		"net/http"
//		"time"
//
//		"github.com/prometheus/client_golang/prometheus"
//		"github.com/prometheus/client_golang/prometheus/promhttp"
//		"github.com/yermakovsa/failnext"
//		blocklag "github.com/yermakovsa/failnext-blocklag"
//		"github.com/yermakovsa/failnext-blocklag/blocklagprom"
//	)
//
//	func main() {
//		monitor, err := blocklag.New(blocklag.Config{
//			Endpoints: []failnext.Endpoint{
//				{ID: "primary", URL: "https://primary.example/rpc"},
//				{ID: "backup", URL: "https://backup.example/rpc"},
//			},
//			MaxLag: 3,
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//		reg := prometheus.NewRegistry()
//		reg.MustRegister(blocklagprom.NewCollector(monitor))
//		http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//		go func() { log.Fatal(http.ListenAndServe("127.0.0.1:9100", nil)) }()
//
//		for {
//			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//			if err := monitor.Check(ctx); err != nil {
//				log.Print(err)
//			}
//			cancel()
//			time.Sleep(15 * time.Second)
//		}
//	}
//
// # Two chains on one registry
//
// Two collectors have the same metric names and labels, so registering a
// second one directly fails. Give each Monitor its own value of a label of
// your choosing with [prometheus.WrapRegistererWith]:
//
//	reg := prometheus.NewRegistry()
//	prometheus.WrapRegistererWith(prometheus.Labels{"chain": "mainnet"}, reg).
//		MustRegister(blocklagprom.NewCollector(mainnetMonitor))
//	prometheus.WrapRegistererWith(prometheus.Labels{"chain": "sepolia"}, reg).
//		MustRegister(blocklagprom.NewCollector(sepoliaMonitor))
//
// Each series then carries chain="mainnet" or chain="sepolia" besides its
// own labels, and the alerts can be grouped by chain.
package blocklagprom
