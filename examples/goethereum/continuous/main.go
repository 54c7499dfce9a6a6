// Command continuous keeps a go-ethereum client on fresh providers.
//
// It reads two provider URLs from ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL,
// checks their block heights with blocklag at start and then every 15
// seconds, and reads the latest block number through go-ethereum's client
// every 10 seconds. The client's HTTP transport is failnext, which skips any
// provider that blocklag found lagging. It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
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
}

// run is the whole command: it returns the exit status, 2 for bad flags or
// environment, and 0 after a clean shutdown when ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) int {
	logger := log.New(out, "", log.LstdFlags)
	s, err := parseFlags(args, out)
	if err != nil {
		return 2
	}
	endpoints, err := endpointsFromEnv(getenv)
	if err != nil {
		logger.Print(err)
		return 2
	}
	monitor, err := blocklag.New(blocklag.Config{
		Endpoints:    endpoints,
		MaxLag:       s.maxLag,
		ProbeTimeout: s.probeTimeout,
		Quorum:       s.quorum,
	})
	if err != nil { // blocklag's errors name the endpoint, never its URL
		logger.Print(err)
		return 2
	}
	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible})
	if err != nil { // not expected once blocklag accepted the same endpoints
		logger.Print(redact(err, endpoints))
		return 2
	}
	// failnext replaces each request's URL with the chosen endpoint's, so
	// the URL given here only has to be valid.
	rpcClient, err := rpc.DialOptions(ctx, endpoints[0].URL, rpc.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		logger.Print("cannot create the RPC client")
		return 2
	}
	client := ethclient.NewClient(rpcClient)
	defer client.Close()

	watch(ctx, s, monitor, endpoints, client.BlockNumber, logger)
	logger.Print("stopped")
	return 0
}

func parseFlags(args []string, out io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("continuous", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&s.checkEvery, "check-every", 15*time.Second, "time between lag checks")
	fs.DurationVar(&s.readEvery, "read-every", 10*time.Second, "time between block number reads")
	fs.DurationVar(&s.checkTimeout, "check-timeout", 5*time.Second, "limit for one lag check")
	fs.DurationVar(&s.readTimeout, "read-timeout", 5*time.Second, "limit for one read")
	fs.Uint64Var(&s.maxLag, "max-lag", 3, "blocks a provider may be behind and still be used")
	fs.DurationVar(&s.probeTimeout, "probe-timeout", 0, "limit for each provider's probe (0: the check's limit)")
	fs.IntVar(&s.quorum, "quorum", 0, "take the reference height as the quorum-th highest (0: the highest)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if s.checkEvery <= 0 || s.readEvery <= 0 || s.checkTimeout <= 0 || s.readTimeout <= 0 {
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
			return nil, fmt.Errorf("%s is not set: give it the provider's HTTP JSON-RPC URL", v.name)
		}
		endpoints = append(endpoints, failnext.Endpoint{ID: failnext.EndpointID(v.id), URL: raw})
	}
	return endpoints, nil
}

// watch checks at once and then every s.checkEvery, and reads the latest
// block number at once and then every s.readEvery, each under its own
// timeout, until ctx ends. Reads are marked as safe to fail over, since
// eth_blockNumber has no side effects.
func watch(ctx context.Context, s settings, monitor *blocklag.Monitor, endpoints []failnext.Endpoint,
	read func(context.Context) (uint64, error), logger *log.Logger) {
	checkTicks := time.NewTicker(s.checkEvery)
	defer checkTicks.Stop()
	readTicks := time.NewTicker(s.readEvery)
	defer readTicks.Stop()

	check := func() {
		cctx, cancel := context.WithTimeout(ctx, s.checkTimeout)
		defer cancel()
		err := monitor.Check(cctx)
		var verdicts []string
		for _, ep := range endpoints {
			verdict := "ineligible"
			if monitor.Eligible(ep.ID) {
				verdict = "eligible"
			}
			verdicts = append(verdicts, fmt.Sprintf("%s=%s", ep.ID, verdict))
		}
		if err != nil {
			logger.Printf("check: %s; errors: %s", strings.Join(verdicts, " "), strings.ReplaceAll(err.Error(), "\n", "; "))
			return
		}
		logger.Printf("check: %s", strings.Join(verdicts, " "))
	}
	readOnce := func() {
		rctx, cancel := context.WithTimeout(failnext.WithFailoverAllowed(ctx), s.readTimeout)
		defer cancel()
		n, err := read(rctx)
		if err != nil {
			logger.Printf("read: error: %s", redact(err, endpoints))
			return
		}
		logger.Printf("read: block %d", n)
	}

	check()
	readOnce()
	for {
		select {
		case <-ctx.Done():
			return
		case <-checkTicks.C:
			check()
		case <-readTicks.C:
			readOnce()
		}
	}
}

// redact renders a read error without any endpoint URL: net/http quotes the
// request URL in its errors, and provider URLs carry API keys.
func redact(err error, endpoints []failnext.Endpoint) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	for _, ep := range endpoints {
		msg = strings.ReplaceAll(msg, ep.URL, "<"+string(ep.ID)+" URL>")
	}
	return msg
}
