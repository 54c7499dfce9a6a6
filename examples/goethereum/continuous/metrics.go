package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

// metricsServer serves a Monitor's gauges on /metrics, from a registry of
// its own that holds nothing else, until stop.
type metricsServer struct {
	server *http.Server
	addr   net.Addr      // where it listens, with the port chosen when ":0" was asked
	served chan struct{} // closed once Serve has returned
}

// serveMetrics listens on addr and serves monitor's gauges in the
// background. Serve's unexpected errors go to logger.
func serveMetrics(addr string, monitor *blocklag.Monitor, logger *log.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(blocklagprom.NewCollector(monitor))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ms := &metricsServer{
		server: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		addr:   ln.Addr(),
		served: make(chan struct{}),
	}
	go func() {
		defer close(ms.served)
		if err := ms.server.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Printf("metrics: %v", err)
		}
	}()
	return ms, nil
}

// url is where the gauges are served.
func (ms *metricsServer) url() string {
	return "http://" + ms.addr.String() + "/metrics"
}

// stop lets scrapes in progress finish, for a few seconds at most, and
// returns once the server has stopped.
func (ms *metricsServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if ms.server.Shutdown(ctx) != nil {
		ms.server.Close()
	}
	<-ms.served
}
