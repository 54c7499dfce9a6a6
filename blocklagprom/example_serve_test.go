package blocklagprom_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// probeFailures counts the failed probes of every Check by provider and
// reason. The collector's gauges show only the Check in force, and a Check
// in which every probe fails changes none of them; this counter counts
// those failures too.
var probeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "myapp_blocklag_probe_failures_total",
	Help: "Failed blocklag probes by provider and reason.",
}, []string{"provider", "reason"})

// A complete program: it checks two providers every 15 seconds, serves the
// gauges on its own registry, and counts every failed probe by reason.
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
	reg.MustRegister(blocklagprom.NewCollector(monitor), probeFailures)
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { log.Fatal(http.ListenAndServe("127.0.0.1:2112", nil)) }()

	for {
		check(monitor)
		time.Sleep(15 * time.Second)
	}
}

// check runs one Check under a timeout, counts its failed probes and logs
// its error, which is safe to log as it is.
func check(monitor *blocklag.Monitor) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := monitor.Check(ctx)
	var failed *blocklag.CheckError
	if errors.As(err, &failed) {
		for _, pe := range failed.Errors {
			probeFailures.WithLabelValues(string(pe.Endpoint), string(pe.Reason())).Inc()
		}
	}
	if err != nil {
		log.Print(err)
	}
}
