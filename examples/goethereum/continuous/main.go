// Command continuous keeps go-ethereum's client off lagging providers. It is
// the program to copy: main.go alone builds and runs.
//
// It reads its providers from ETH_RPC_URLS, name=URL pairs separated by
// white space, or from the two variables ETH_RPC_PRIMARY_URL and
// ETH_RPC_BACKUP_URL, and hands the same list to blocklag and to failnext. It
// checks the providers' heights at start and then every -check-every, and
// reads the latest block through go-ethereum's client every -read-every,
// over a failnext transport that skips the providers the last check found
// lagging. It logs each provider's verdict when it changes, a read when the
// provider that served it changes, when it took more than one attempt and
// when it fails, and stops on SIGINT or SIGTERM. Routine reads are logged at
// the debug level, which slog's default logger leaves out.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
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
)

const (
	checkTimeout = 5 * time.Second // for one Check
	readTimeout  = 5 * time.Second // for one read, failover included
	probeTimeout = 2 * time.Second // for one provider's probe, and for one attempt of a read
	maxLag       = 3               // blocks below the reference that a provider may be and still be read
	maxAhead     = 10              // blocks above it, with three providers or more
	maxNameLen   = 16              // bytes in a provider's name, so that every log line fits 200 bytes
)

// How many bytes of an error's text a line shows, so that every line fits
// in 200 bytes, its date and time included: what else a line holds leaves
// this much room (verdicts_test.go checks the longest lines).
const (
	probeErrWidth = 80
	readErrWidth  = 96
	triedWidth    = 40 // the names of the providers a read was sent to
	startErrWidth = 170
)

// setUp, when not nil, runs once the flags are parsed and before the
// providers are read from the environment. dev.go sets it for the -dev
// demo; a copy of main.go without dev.go leaves it nil.
var setUp func() error

func main() {
	checkEvery := flag.Duration("check-every", 15*time.Second, "how often to check the providers' heights")
	readEvery := flag.Duration("read-every", 10*time.Second, "how often to read the latest block")
	metricsAddr := flag.String("metrics-addr", "",
		"serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9100")
	flag.Parse()
	if *checkEvery <= 0 || *readEvery <= 0 {
		slog.Error("-check-every and -read-every must be above zero")
		os.Exit(2)
	}
	if setUp != nil {
		if err := setUp(); err != nil {
			slog.Error(clip(err.Error(), startErrWidth))
			os.Exit(2)
		}
	}

	endpoints, err := endpointsFromEnv()
	if err != nil {
		slog.Error(clip(err.Error(), startErrWidth)) // it says what to set, and quotes no URL
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, endpoints, *checkEvery, *readEvery, *metricsAddr)
	stop()
	if err != nil {
		slog.Error(clip(err.Error(), startErrWidth)) // blocklag's errors name the endpoint, never its key
		os.Exit(1)
	}
}

// errList says how to write ETH_RPC_URLS. It shows no part of a list
// written wrong: that would show a URL, and a URL holds a key.
var errList = errors.New("write ETH_RPC_URLS='a=https://... b=https://...': name=URL pairs, " +
	"spaces between, names of up to " + strconv.Itoa(maxNameLen) + " letters, digits, '.', '-' or '_'")

// endpointsFromEnv returns the providers that ETH_RPC_URLS lists, or the
// two that ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL give, named primary
// and backup. Its errors name variables only.
func endpointsFromEnv() ([]failnext.Endpoint, error) {
	list := os.Getenv("ETH_RPC_URLS")
	primary := os.Getenv("ETH_RPC_PRIMARY_URL")
	backup := os.Getenv("ETH_RPC_BACKUP_URL")
	switch {
	case list != "" && (primary != "" || backup != ""):
		return nil, errors.New("set ETH_RPC_URLS or ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL, not both")
	case primary != "" && backup == "":
		return nil, errors.New("ETH_RPC_BACKUP_URL is not set: set it beside ETH_RPC_PRIMARY_URL")
	case primary == "" && backup != "":
		return nil, errors.New("ETH_RPC_PRIMARY_URL is not set: set it beside ETH_RPC_BACKUP_URL")
	case primary != "":
		return []failnext.Endpoint{{ID: "primary", URL: primary}, {ID: "backup", URL: backup}}, nil
	}
	return parseList(list)
}

// parseList reads ETH_RPC_URLS: each field a name, '=' and an http or https
// URL. A field that is not one (a URL without its name, a comma, a stray or
// missing '=') refuses the whole list, so that no piece of a URL ever
// becomes a provider's name, which logs and metrics show.
func parseList(list string) ([]failnext.Endpoint, error) {
	fields := strings.Fields(list)
	if len(fields) == 0 {
		return nil, errList
	}
	var endpoints []failnext.Endpoint
	for _, field := range fields {
		name, rawURL, _ := strings.Cut(field, "=")
		isHTTP := strings.HasPrefix(rawURL, "http://") || strings.HasPrefix(rawURL, "https://")
		if !validName(name) || !isHTTP || strings.Contains(rawURL, ",") {
			return nil, errList
		}
		endpoints = append(endpoints, failnext.Endpoint{ID: failnext.EndpointID(name), URL: rawURL})
	}
	return endpoints, nil
}

// validName reports whether name is 1 to maxNameLen letters, digits, '.',
// '-' or '_'.
func validName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for _, c := range name {
		isLetter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		isDigit := c >= '0' && c <= '9'
		if !isLetter && !isDigit && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// run checks at once and then every checkEvery, and reads after the first
// check and then every readEvery, until ctx ends; then it returns nil.
func run(ctx context.Context, endpoints []failnext.Endpoint, checkEvery, readEvery time.Duration,
	metricsAddr string) error {
	monitor, err := blocklag.New(config(endpoints))
	if err != nil {
		return err
	}
	// Each attempt of a read waits for its answer's headers as long as a
	// probe does: a provider that takes a read and never answers costs that
	// much, and failnext moves the read to the next eligible provider.
	attempts := http.DefaultTransport.(*http.Transport).Clone()
	attempts.ResponseHeaderTimeout = probeTimeout
	transport, err := failnext.New(failnext.Config{
		Endpoints: endpoints,
		Base:      blocklag.OwnCredentials(attempts), // each provider gets its own user:password@, no other's
		Eligible:  monitor.Eligible,
		OnEvent:   onEvent,
	})
	if err != nil {
		return err // not reached: blocklag.New refuses every endpoint list that failnext refuses
	}
	client, err := dial(ctx, endpoints[0].URL, transport)
	if err != nil {
		return err
	}
	defer client.Close()
	if metricsAddr != "" {
		stopMetrics, err := serveMetrics(metricsAddr, monitor)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	c := &checker{monitor: monitor, said: map[failnext.EndpointID]line{}}
	c.check(ctx) // before the first read, so that it goes to a provider found fresh
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every(ctx, checkEvery, c.check)
	}()
	r := &reader{client: client, monitor: monitor}
	r.read(ctx)
	every(ctx, readEvery, r.read)
	wg.Wait()
	slog.Info("stopped")
	return nil
}

// config is blocklag's configuration for endpoints.
func config(endpoints []failnext.Endpoint) blocklag.Config {
	cfg := blocklag.Config{Endpoints: endpoints, MaxLag: maxLag, ProbeTimeout: probeTimeout}
	if len(endpoints) >= 3 {
		// The second-highest height is the reference, so that one provider
		// far ahead cannot make the others ineligible; and one more than
		// maxAhead blocks above it is not read, or it would take every read.
		cfg.Quorum = 2
		cfg.MaxAhead = maxAhead
	}
	return cfg
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			f(ctx)
		}
	}
}

// dial returns go-ethereum's client over the failnext transport. failnext
// sends each request to the whole URL of the provider it picks, so the
// client's own URL is the first provider's scheme and host alone: it holds
// no key for an error's text or a Referer to show. The client follows no
// redirect: failnext would send the redirected request to its providers
// again, not to the Location, so following one only repeats the read.
func dial(ctx context.Context, firstURL string, transport http.RoundTripper) (*ethclient.Client, error) {
	u, err := url.Parse(firstURL)
	if err != nil {
		// Not reached: blocklag.New has parsed it. url's error would quote it.
		return nil, errors.New("the first provider's URL does not parse")
	}
	readURL := url.URL{Scheme: u.Scheme, Host: u.Host}
	httpClient := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	rpcClient, err := rpc.DialOptions(ctx, readURL.String(), rpc.WithHTTPClient(httpClient))
	if err != nil {
		return nil, err // not reached: over HTTP, dialling only builds the client
	}
	return ethclient.NewClient(rpcClient), nil
}

// checker runs the Checks and logs what changed: each provider's verdict
// when it changes, a probe's failure once per provider and reason, a lag
// that has doubled since it was logged, and a fall of the reference height.
// blocklag's errors and Status never show a URL's key, and show a
// provider's text as printable ASCII, so they are logged as they are. Only
// one goroutine uses a checker.
type checker struct {
	monitor *blocklag.Monitor
	said    map[failnext.EndpointID]line // the last line logged of each provider
}

func (c *checker) check(ctx context.Context) {
	before := c.monitor.Status()
	checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
	err := c.monitor.Check(checkCtx)
	cancel()
	if ctx.Err() != nil {
		return // shutting down
	}
	var checkErr *blocklag.CheckError
	if err != nil && !errors.As(err, &checkErr) {
		slog.Warn("check abandoned", "err", err)
		return
	}
	if checkErr != nil && !checkErr.Published {
		// No provider answered, so the verdicts in force stay.
		for _, pe := range checkErr.Errors {
			c.log(unanswered(pe, c.monitor.Eligible(pe.Endpoint)))
		}
		return
	}
	now := c.monitor.Status()
	for _, e := range now.Endpoints {
		c.log(verdictOf(now, e))
	}
	msg, attrs := referenceFell(before, now)
	if msg != "" {
		slog.Warn(msg, attrs...)
	}
}

// log logs a line unless the last line logged of its provider said the
// same: the same key, and for a provider behind, a lag less than twice the
// one logged.
func (c *checker) log(l line) {
	last, logged := c.said[l.provider]
	if logged && last.key == l.key && !l.doubled(last) {
		return
	}
	c.said[l.provider] = l
	slog.Log(context.Background(), l.level, l.msg, append([]any{"provider", l.provider}, l.attrs...)...)
}

// line is what the log says of one provider. Its key is what the line
// says, its numbers left out: a line is logged when its key changes, or
// when its lag has doubled.
type line struct {
	provider failnext.EndpointID
	key      string
	lag      uint64 // the lag of a provider behind; 0 in other lines
	level    slog.Level
	msg      string
	attrs    []any
}

// doubled reports whether l is of a provider behind by at least twice the
// lag of last, the line logged before it.
func (l line) doubled(last line) bool {
	return l.lag > 0 && l.lag/2 >= last.lag
}

// verdictOf is the line for one provider's verdict in a published Status,
// with the rule it was judged by, as the Status gives it.
func verdictOf(st blocklag.Status, e blocklag.EndpointStatus) line {
	l := line{provider: e.ID, level: slog.LevelWarn}
	switch {
	case e.Err != nil:
		l.key = "failed " + string(e.Reason())
		l.msg = "provider ineligible: probe failed"
		l.attrs = []any{"reason", e.Reason(), "err", probeText(e.Err)}
	case !e.Eligible && e.Ahead > 0:
		l.key = "ahead"
		l.msg = "provider ineligible: too far ahead"
		l.attrs = []any{"height", e.Height, "ahead", e.Ahead, "max_ahead", st.MaxAhead}
	case !e.Eligible:
		l.key = "behind"
		l.lag = e.Lag
		l.msg = "provider ineligible: behind"
		l.attrs = []any{"height", e.Height, "lag", e.Lag, "max_lag", st.MaxLag}
	default:
		l.key = "eligible"
		l.level = slog.LevelInfo
		l.msg = "provider eligible"
		l.attrs = []any{"height", e.Height, "lag", e.Lag, "max_lag", st.MaxLag}
		if e.Ahead > 0 {
			l.attrs = append(l.attrs, "ahead", e.Ahead)
		}
	}
	return l
}

// unanswered is the line for a probe that failed in a Check where no probe
// succeeded: nothing was published, so the provider keeps its verdict. Its
// key leaves that verdict out: only a published Check changes it, and that
// Check logs the provider's new verdict in between.
func unanswered(pe *blocklag.ProbeError, eligible bool) line {
	return line{
		provider: pe.Endpoint,
		key:      "unanswered " + string(pe.Reason()),
		level:    slog.LevelWarn,
		msg:      "probe failed, verdict kept",
		attrs:    []any{"eligible", eligible, "reason", pe.Reason(), "err", probeText(pe)},
	}
}

// probeText is a probe's error as blocklag wrote it, less the prefix that
// names the provider, which the line names already, cut to fit the line.
func probeText(err error) string {
	var pe *blocklag.ProbeError
	if errors.As(err, &pe) && pe.Err != nil {
		err = pe.Err
	}
	return clip(err.Error(), probeErrWidth)
}

// clip is text cut to width bytes, so that a line fits a terminal. blocklag
// writes its errors, and Redact's, in printable ASCII, and a provider's name
// is ASCII too, so any cut is clean.
func clip(text string, width int) string {
	if len(text) <= width {
		return text
	}
	return text[:width-3] + "..."
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
		if reason := now.Endpoints[i].Reason(); reason != "" {
			return fellLeaderFailed, append(attrs, "led", led.ID, "reason", reason)
		}
		return fellLeaderLower, append(attrs, "led", led.ID, "height", now.Endpoints[i].Height)
	}
	return fell, attrs
}

// reader reads the latest block and logs what a reader of the log needs:
// a read served by another provider than the last, a read that took more
// than one attempt, and a failed read, naming the providers it was sent
// to. Other reads are logged at the debug level. Only one goroutine uses a
// reader.
type reader struct {
	client  *ethclient.Client
	monitor *blocklag.Monitor
	served  failnext.EndpointID // the provider that served the last read; "" after a failure
}

// read reads the latest block number and logs it with the provider that
// served it, as failnext's events report it, or logs why it failed.
func (r *reader) read(ctx context.Context) {
	trail := &readTrail{}
	// A JSON-RPC read is a POST, which failnext fails over only when the
	// request's context allows it; eth_blockNumber changes nothing, so
	// sending it to another provider is safe.
	readCtx := failnext.WithFailoverAllowed(context.WithValue(ctx, readTrailKey{}, trail))
	readCtx, cancel := context.WithTimeout(readCtx, readTimeout)
	defer cancel()
	block, err := r.client.BlockNumber(readCtx)
	if ctx.Err() != nil {
		return // shutting down
	}
	served, tried := trail.get()
	if err != nil {
		r.served = ""
		// go-ethereum's error can quote what a provider answered, which may
		// echo its key: Redact redacts every provider's keys.
		slog.Warn("read failed", "attempts", len(tried), "tried", clip(strings.Join(tried, ","), triedWidth),
			"err", clip(r.monitor.Redact(readCause(err)).Error(), readErrWidth))
		return
	}
	level := slog.LevelDebug
	if served != r.served || len(tried) > 1 {
		level = slog.LevelInfo
	}
	r.served = served
	attrs := []any{"block", block, "endpoint", served}
	if len(tried) > 1 {
		attrs = append(attrs, "attempts", len(tried), "tried", clip(strings.Join(tried, ","), triedWidth))
	}
	slog.Log(ctx, level, "read", attrs...)
}

// readCause is the part of a failed read's error worth a line. When no
// provider gave an answer, go-ethereum's text names the read's URL, which is
// the first provider's host whichever provider failed, and then failnext's
// summary: the last attempt's error says more in fewer bytes, and the line
// names the providers tried. Otherwise it is err, which may hold what a
// provider answered.
func readCause(err error) error {
	var failover *failnext.FailoverError
	if errors.As(err, &failover) && failover.Unwrap() != nil {
		return failover.Unwrap()
	}
	return err
}

// readTrailKey is the context key under which read hands onEvent a
// readTrail.
type readTrailKey struct{}

// readTrail is what failnext reported about one read. failnext calls
// OnEvent on the goroutine that sends the request, which go-ethereum does
// not promise is read's own: hence the lock.
type readTrail struct {
	mu     sync.Mutex
	served failnext.EndpointID // the provider whose answer was returned
	tried  []string            // the names of the providers the read was sent to, in order
}

func (t *readTrail) get() (failnext.EndpointID, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.served, t.tried
}

// onEvent is the transport's OnEvent: it notes each provider a read was
// sent to and the provider whose answer failnext returned.
func onEvent(ctx context.Context, ev failnext.Event) {
	trail, ok := ctx.Value(readTrailKey{}).(*readTrail)
	if !ok {
		return
	}
	trail.mu.Lock()
	defer trail.mu.Unlock()
	switch {
	case ev.Kind == failnext.EventAttempt:
		trail.tried = append(trail.tried, string(ev.Endpoint))
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
