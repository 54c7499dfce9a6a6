package blocklagprom_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// A complete program: it checks two providers every 15 seconds and serves
// the metrics on its own registry. Every failed probe is counted by the
// collector, whether or not its Check published, so the loop only logs.
func Example_serve() {
	monitor, err := blocklag.New(blocklag.Config{
		Endpoints: []failnext.Endpoint{
			{ID: "primary", URL: "https://primary.example/rpc"},
			{ID: "backup", URL: "https://backup.example/rpc"},
		},
		MaxLag: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(blocklagprom.NewCollector(monitor))
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { log.Fatal(http.ListenAndServe("127.0.0.1:2112", nil)) }()

	for {
		check(monitor)
		time.Sleep(15 * time.Second)
	}
}

// check runs one Check under a timeout and logs its error, which is safe
// to log as it is.
func check(monitor *blocklag.Monitor) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := monitor.Check(ctx); err != nil {
		log.Print(err)
	}
}
