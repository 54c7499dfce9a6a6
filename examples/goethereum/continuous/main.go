// Command continuous keeps a go-ethereum client on fresh providers.
//
// It reads two provider URLs from ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL,
// checks their block heights with blocklag at start and then every 15
// seconds, and reads the latest block number through go-ethereum's client
// every 10 seconds. The client's HTTP transport is failnext, which skips any
// provider that blocklag found lagging. Each check logs every provider's
// height, lag and verdict; each read logs the block number and the provider
// that served it. It stops on SIGINT or SIGTERM.
//
// With -dev it needs no URL: it starts two go-ethereum dev nodes in the
// process, a slow primary and a fast backup, checks every 3 seconds and
// reads every 2, and after -dev-fail-after stops the fast node, so that the
// whole story shows in the log within a minute.
//
// With -chain-id, a provider's height counts only once the provider has
// confirmed that chain ID; -dev sets it to the dev chain's unless told
// otherwise.
//
// With -metrics-addr, it also serves blocklag's Prometheus gauges at
// /metrics on that address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}

// settings are the command's tunables; the flags set them.
type settings struct {
	checkEvery, readEvery     time.Duration
	checkTimeout, readTimeout time.Duration
	maxLag                    uint64
	probeTimeout              time.Duration
	quorum                    int
	chainID                   uint64
	chainIDSet                bool // -chain-id was given, so -dev keeps it
	metricsAddr               string

	dev                       bool
	devFailAfter, devDuration time.Duration
}

// run is the whole command: it returns the exit status, 2 for bad flags or
// environment (a -metrics-addr it cannot listen on included), 1 when the dev
// nodes cannot start, and 0 after a clean shutdown when ctx ends (or, with
// -dev-duration, when the demo is over).
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) int {
	logger := log.New(out, "", log.LstdFlags)
	s, err := parseFlags(args, out)
	if err != nil {
		return 2
	}
	var endpoints []failnext.Endpoint
	if s.dev {
		if getenv("ETH_RPC_PRIMARY_URL") != "" || getenv("ETH_RPC_BACKUP_URL") != "" {
			logger.Print("dev: ignoring ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL; the dev nodes stand in for them")
		}
		demo, err := startDemo(s, logger)
		if err != nil {
			logger.Print(err)
			return 1
		}
		defer demo.stop()
		endpoints = demo.endpoints
		if !s.chainIDSet {
			s.chainID = demo.chainID
		}
		logger.Print(chainCheckLine(demo.chainID, s.chainID))
		if s.devDuration > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.devDuration)
			defer cancel()
		}
	} else if endpoints, err = endpointsFromEnv(getenv); err != nil {
		logger.Print(err)
		return 2
	}

	monitor, err := blocklag.New(blocklag.Config{
		Endpoints:    endpoints,
		MaxLag:       s.maxLag,
		ProbeTimeout: s.probeTimeout,
		Quorum:       s.quorum,
		ChainID:      s.chainID,
	})
	if err != nil { // blocklag's errors name the endpoint, never its URL
		logger.Print(err)
		return 2
	}
	if s.metricsAddr != "" {
		metrics, err := serveMetrics(s.metricsAddr, monitor, logger)
		if err != nil {
			logger.Print(err)
			return 2
		}
		defer metrics.stop()
		logger.Printf("metrics: serving %s", metrics.url())
	}
	client, err := newClient(ctx, endpoints, monitor)
	if err != nil { // not expected once blocklag accepted the same endpoints
		logger.Print(redact(err, endpoints))
		return 2
	}
	defer client.Close()

	w := &watcher{s: s, monitor: monitor, endpoints: endpoints, read: client.BlockNumber, logger: logger}
	w.run(ctx)
	logger.Print("stopped")
	return 0
}

// newClient returns a go-ethereum client whose requests go through a failnext
// transport over endpoints, skipping those that monitor finds ineligible and
// reporting its events to recordEvent.
func newClient(ctx context.Context, endpoints []failnext.Endpoint, monitor *blocklag.Monitor) (*ethclient.Client, error) {
	transport, err := failnext.New(failnext.Config{
		Endpoints: endpoints,
		Eligible:  monitor.Eligible,
		OnEvent:   recordEvent,
	})
	if err != nil {
		return nil, err
	}
	// failnext replaces each request's URL with the chosen endpoint's, so
	// the URL given here only has to be valid.
	rpcClient, err := rpc.DialOptions(ctx, endpoints[0].URL, rpc.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		return nil, errors.New("cannot create the RPC client")
	}
	return ethclient.NewClient(rpcClient), nil
}

func parseFlags(args []string, out io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("continuous", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&s.checkEvery, "check-every", 15*time.Second, "time between lag checks (3s with -dev)")
	fs.DurationVar(&s.readEvery, "read-every", 10*time.Second, "time between block number reads (2s with -dev)")
	fs.DurationVar(&s.checkTimeout, "check-timeout", 5*time.Second, "limit for one lag check")
	fs.DurationVar(&s.readTimeout, "read-timeout", 5*time.Second, "limit for one read")
	fs.Uint64Var(&s.maxLag, "max-lag", 3, "blocks a provider may be behind and still be used")
	fs.DurationVar(&s.probeTimeout, "probe-timeout", 0, "limit for each provider's probe (0: the check's limit)")
	fs.IntVar(&s.quorum, "quorum", 0, "take the reference height as the quorum-th highest (0: the highest)")
	fs.Uint64Var(&s.chainID, "chain-id", 0, "chain ID every provider must confirm, 1 for mainnet (0: no chain check; -dev: the dev chain's)")
	fs.StringVar(&s.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9100 (empty: off)")
	fs.BoolVar(&s.dev, "dev", false, "run against two go-ethereum dev nodes started in this process; no URL needed")
	fs.DurationVar(&s.devFailAfter, "dev-fail-after", 20*time.Second, "with -dev: when to stop the fast node")
	fs.DurationVar(&s.devDuration, "dev-duration", 0, "with -dev: end the demo after this long (0: run until Ctrl-C)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	s.chainIDSet = set["chain-id"]
	if s.dev {
		if !set["check-every"] {
			s.checkEvery = 3 * time.Second
		}
		if !set["read-every"] {
			s.readEvery = 2 * time.Second
		}
	}
	if s.checkEvery <= 0 || s.readEvery <= 0 || s.checkTimeout <= 0 || s.readTimeout <= 0 ||
		s.devFailAfter <= 0 || s.devDuration < 0 {
		err := errors.New("intervals and timeouts must be positive")
		fmt.Fprintln(out, err)
		return s, err
	}
	return s, nil
}

// endpointsFromEnv builds the one endpoint list that blocklag and failnext
// share. Its errors name the variable, never its value, which may hold an
// API key.
func endpointsFromEnv(getenv func(string) string) ([]failnext.Endpoint, error) {
	var endpoints []failnext.Endpoint
	for _, v := range []struct{ id, name string }{
		{"primary", "ETH_RPC_PRIMARY_URL"},
		{"backup", "ETH_RPC_BACKUP_URL"},
	} {
		raw := strings.TrimSpace(getenv(v.name))
		if raw == "" {
			return nil, fmt.Errorf("%s is not set: give it the provider's HTTP JSON-RPC URL, or run with -dev", v.name)
		}
		endpoints = append(endpoints, failnext.Endpoint{ID: failnext.EndpointID(v.id), URL: raw})
	}
	return endpoints, nil
}
