// Command continuous keeps go-ethereum's client off lagging providers.
//
// It reads two provider URLs from ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL
// and gives the same endpoint list to blocklag and to failnext. It checks the
// providers' heights with blocklag at start and then every 15 seconds, and
// reads the latest block number through go-ethereum's ethclient every 10
// seconds, over a failnext transport that skips the providers the last check
// found lagging. It logs what each check found, in one short line, which
// provider served each read, and when the reference height fell, and stops
// on SIGINT or SIGTERM.
//
// With -dev it needs no URL: it runs the same loop, at a faster pace,
// against two go-ethereum dev nodes that it starts in the process, and
// stops by itself after -dev-duration.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

const (
	checkEvery   = 15 * time.Second
	readEvery    = 10 * time.Second
	checkTimeout = 5 * time.Second
	readTimeout  = 5 * time.Second
	maxLag       = 3 // blocks a provider may be behind and still be used
)

func main() {
	dev := flag.Bool("dev", false, "run against two go-ethereum dev nodes started in this process; no URL needed")
	devDuration := flag.Duration("dev-duration", time.Minute, "with -dev, stop after this long (0: run until Ctrl-C)")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9100")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *dev {
		err = runDev(ctx, *devDuration, *metricsAddr)
	} else {
		var endpoints []failnext.Endpoint
		if endpoints, err = endpointsFromEnv(); err == nil {
			err = run(ctx, endpoints, checkEvery, readEvery, *metricsAddr)
		}
	}
	if err != nil {
		slog.Error("continuous", "err", err)
		os.Exit(1)
	}
}

// endpointsFromEnv builds the endpoint list from the environment. A URL
// holds the provider's API key, so the error names the variables only.
func endpointsFromEnv() ([]failnext.Endpoint, error) {
	primary, backup := os.Getenv("ETH_RPC_PRIMARY_URL"), os.Getenv("ETH_RPC_BACKUP_URL")
	if primary == "" || backup == "" {
		return nil, errors.New("set ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL to your providers' HTTP JSON-RPC URLs, or run with -dev")
	}
	return []failnext.Endpoint{{ID: "primary", URL: primary}, {ID: "backup", URL: backup}}, nil
}

// runDev runs the loop against a slow primary and a fast backup that stops
// after 20 seconds, checking every 3 seconds and reading every 2, so that
// the whole story fits in a minute; it returns after duration, or on
// SIGINT or SIGTERM when duration is 0.
func runDev(ctx context.Context, duration time.Duration, metricsAddr string) error {
	demo, err := devnet.StartDemo(20 * time.Second)
	if err != nil {
		return err
	}
	defer demo.Stop()
	if duration > 0 {
		slog.Info("dev: the demo stops by itself (-dev-duration)", "after", duration)
		// A cancel, not a deadline: Check keeps a margin before its
		// context's deadline, so a Check started within it would fail
		// while ctx had not yet ended, and log an error at shutdown.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer time.AfterFunc(duration, cancel).Stop()
		defer cancel()
	} else {
		slog.Info("dev: the demo runs until Ctrl-C")
	}
	endpoints := []failnext.Endpoint{{ID: "primary", URL: demo.Primary.URL}, {ID: "backup", URL: demo.Backup.URL}}
	return run(ctx, endpoints, 3*time.Second, 2*time.Second, metricsAddr)
}

// run checks at once and then every checkEvery, and reads at once and then
// every readEvery, until ctx ends; then it returns nil.
func run(ctx context.Context, endpoints []failnext.Endpoint, checkEvery, readEvery time.Duration, metricsAddr string) error {
	monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: maxLag})
	if err != nil {
		return err // it names the endpoint and what is wrong, never the URL's key
	}
	transport, err := failnext.New(failnext.Config{
		Endpoints: endpoints,
		Base:      ownCredentials{},
		Eligible:  monitor.Eligible,
		OnEvent:   onEvent,
	})
	if err != nil {
		return err // not reached: blocklag.New refuses every endpoint list that failnext refuses
	}
	// failnext sends each request to the URL of the endpoint it picks, so
	// the URL given here only has to be one that go-ethereum accepts. It
	// holds no user:password@, from which http.Client would set credentials
	// that failnext then carries to every provider.
	dialURL, err := url.Parse(endpoints[0].URL)
	if err != nil {
		return errors.New("the first endpoint's URL does not parse") // not reached: blocklag.New parsed it; url's error would quote it
	}
	dialURL.User = nil
	rpcClient, err := rpc.DialOptions(ctx, dialURL.String(), rpc.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		return err // not reached: over HTTP, dialling only builds the client
	}
	client := ethclient.NewClient(rpcClient)
	defer client.Close()

	if metricsAddr != "" {
		stopMetrics, err := serveMetrics(metricsAddr, monitor)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	checks := time.NewTicker(checkEvery)
	defer checks.Stop()
	reads := time.NewTicker(readEvery)
	defer reads.Stop()
	check(ctx, monitor)
	read(ctx, client)
	for {
		select {
		case <-ctx.Done():
			slog.Info("stopped")
			return nil
		case <-checks.C:
			check(ctx, monitor)
		case <-reads.C:
			read(ctx, client)
		}
	}
}

// ownCredentials is the failnext transport's Base. failnext keeps a
// request's headers when it moves to another provider and does not rewrite
// credentials, so each attempt drops any Authorization it was handed and
// sends Basic credentials from its own URL's user:password@, if it has one:
// every provider gets its own and no other's.
type ownCredentials struct{}

func (ownCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper leaves the request it is given as it was
	req.Header.Del("Authorization")
	if u := req.URL.User; u != nil {
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// check runs one Check and logs its error, the verdicts in force, and a
// fall of the reference height. blocklag's errors and Status never show a
// URL's key or a provider's raw text, so they are logged as they are.
func check(ctx context.Context, monitor *blocklag.Monitor) {
	before := monitor.Status()
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	err := monitor.Check(cctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	if err != nil {
		slog.Warn("check", "err", err)
	}
	now := monitor.Status()
	slog.Info("check", verdicts(now)...)
	if msg, attrs := referenceFell(before, now); msg != "" {
		slog.Warn(msg, attrs...)
	}
}

// verdicts is a Status in brief, for one short log line: the reference,
// then each provider's verdict with its height and lag, or the reason its
// probe failed. slog.Info("check", "status", monitor.Status()) logs every
// field instead (latency, times, the errors), on a much longer line.
func verdicts(st blocklag.Status) []any {
	if st.Checked.IsZero() {
		return []any{"verdicts", "none published yet: every provider eligible"}
	}
	attrs := []any{"reference", st.Reference}
	for _, e := range st.Endpoints {
		group := []any{"eligible", e.Eligible}
		var pe *blocklag.ProbeError
		if errors.As(e.Err, &pe) {
			group = append(group, "reason", pe.Reason())
		} else {
			group = append(group, "height", e.Height, "lag", e.Lag)
		}
		attrs = append(attrs, slog.Group(string(e.ID), group...))
	}
	return attrs
}

// The words a fall of the reference height is logged with, by its cause.
const (
	fell             = "reference fell, reads go back in time"
	fellLeaderFailed = fell + ": the provider that led stopped answering"
	fellLeaderLower  = fell + ": the provider that led reports a lower height"
)

// referenceFell says, when the reference of now is below that of before,
// why: the provider that set it has stopped answering or reports a lower
// height. Lag is relative, so the providers left are then judged against
// their own front, which is older, and reads go back in time. It returns
// a message and its attributes, or "" when the reference did not fall.
func referenceFell(before, now blocklag.Status) (string, []any) {
	if now.Reference >= before.Reference {
		return "", nil
	}
	attrs := []any{"from", before.Reference, "to", now.Reference}
	// Both list the configured endpoints in configured order.
	for i, led := range before.Endpoints {
		if led.Err != nil || led.Height != before.Reference || i >= len(now.Endpoints) {
			continue
		}
		var pe *blocklag.ProbeError
		if errors.As(now.Endpoints[i].Err, &pe) {
			return fellLeaderFailed, append(attrs, "led", led.ID, "reason", pe.Reason())
		}
		return fellLeaderLower, append(attrs, "led", led.ID, "height", now.Endpoints[i].Height)
	}
	return fell, attrs
}

// read reads the latest block number and logs it with the endpoint that
// served it, as failnext's events report it.
func read(ctx context.Context, client *ethclient.Client) {
	var trail readTrail
	// JSON-RPC reads are POSTs, which failnext fails over only when the
	// request's context allows it; eth_blockNumber changes nothing, so
	// sending it to another provider is safe.
	rctx := failnext.WithFailoverAllowed(context.WithValue(ctx, readTrailKey{}, &trail))
	rctx, cancel := context.WithTimeout(rctx, readTimeout)
	defer cancel()
	block, err := client.BlockNumber(rctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	served, failed := trail.get()
	var attrs []any
	if served != "" {
		attrs = append(attrs, "endpoint", served)
	}
	if len(failed) > 0 {
		attrs = append(attrs, "failed", failed)
	}
	if err != nil {
		slog.Warn("read", append([]any{"cause", cause(err)}, attrs...)...)
		return
	}
	slog.Info("read", append([]any{"block", block}, attrs...)...)
}

// cause says why a read failed, from the error's types alone. The error's
// text is not logged: go-ethereum's errors quote the request URL, API key
// included, and whatever the provider answered.
func cause(err error) string {
	var httpErr rpc.HTTPError
	var rpcErr rpc.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, failnext.ErrNoUsableEndpoint):
		return "no eligible endpoint"
	case errors.As(err, new(*failnext.FailoverError)):
		return "no answer"
	case errors.As(err, &httpErr):
		return "HTTP status " + strconv.Itoa(httpErr.StatusCode)
	case errors.As(err, &rpcErr):
		return "JSON-RPC error " + strconv.Itoa(rpcErr.ErrorCode())
	case errors.As(err, new(*json.SyntaxError)), errors.As(err, new(*json.UnmarshalTypeError)):
		return "bad answer"
	}
	return "read failed"
}

// readTrailKey is the context key under which read hands onEvent a
// readTrail.
type readTrailKey struct{}

// readTrail is what failnext reported about one read. failnext calls
// OnEvent on the goroutine that sends the request, which go-ethereum does
// not promise is read's own: hence the lock.
type readTrail struct {
	mu     sync.Mutex
	served failnext.EndpointID   // the endpoint whose answer was returned
	failed []failnext.EndpointID // the endpoints tried before, or instead
}

func (t *readTrail) get() (failnext.EndpointID, []failnext.EndpointID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.served, t.failed
}

// onEvent is the transport's OnEvent: it notes, in the read's readTrail,
// each attempt that got no answer or a status other than 200, and the
// endpoint whose answer failnext returned.
func onEvent(ctx context.Context, ev failnext.Event) {
	trail, ok := ctx.Value(readTrailKey{}).(*readTrail)
	if !ok {
		return
	}
	trail.mu.Lock()
	defer trail.mu.Unlock()
	switch {
	case ev.Kind == failnext.EventAttempt && ev.StatusCode != http.StatusOK:
		trail.failed = append(trail.failed, ev.Endpoint)
	case ev.Kind == failnext.EventResult && ev.Err == nil:
		trail.served = ev.Endpoint
	}
}

// serveMetrics serves blocklag's metrics at /metrics on addr, from a
// registry that holds nothing else, until the returned func is called.
func serveMetrics(addr string, monitor *blocklag.Monitor) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(blocklagprom.NewCollector(monitor))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	slog.Info("metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() { srv.Close() }, nil
}
