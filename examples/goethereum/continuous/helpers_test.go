package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// testTimeout bounds each wait; a healthy run needs a fraction of it.
const testTimeout = 60 * time.Second

// logTap is a slog.Handler that keeps every record, so that a test can wait
// for the one it expects. The loop logs through slog's default logger, and
// tapLog makes the tap that logger for the length of a test; tests using it
// must not run in parallel.
type logTap struct {
	mu      sync.Mutex
	records []slog.Record
	more    chan struct{} // closed when a record arrives, then replaced
}

func tapLog(t *testing.T) *logTap {
	t.Helper()
	tap := &logTap{more: make(chan struct{})}
	old := slog.Default()
	slog.SetDefault(slog.New(tap))
	t.Cleanup(func() { slog.SetDefault(old) })
	return tap
}

func (l *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTap) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logTap) WithGroup(string) slog.Handler            { return l }

func (l *logTap) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	close(l.more)
	l.more = make(chan struct{})
	return nil
}

// text is everything logged so far, as slog's text handler writes it.
func (l *logTap) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, nil)
	for _, r := range l.records {
		h.Handle(context.Background(), r)
	}
	return b.String()
}

// cursor reads a logTap's records in order, each once.
type cursor struct {
	tap  *logTap
	next int
}

// waitFor returns the next record with message msg (any message, for "")
// for which match holds, skipping the others, and fails the test if none
// comes within testTimeout.
func (c *cursor) waitFor(t *testing.T, what, msg string, match func(slog.Record) bool) slog.Record {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		c.tap.mu.Lock()
		records := c.tap.records
		more := c.tap.more
		c.tap.mu.Unlock()
		for ; c.next < len(records); c.next++ {
			r := records[c.next]
			if (msg == "" || r.Message == msg) && match(r) {
				c.next++
				return r
			}
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("no log record showing %s within %v; the log:\n%s", what, testTimeout, c.tap.text())
		}
	}
}

// attr returns the value of a record's attribute, as it was logged: a
// blocklag.Status, an error, a number, a string.
func attr(r slog.Record, key string) any {
	var v any
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Any()
			return false
		}
		return true
	})
	return v
}

// logged is what a record logged of the attributes keys, as "key=value"
// separated by spaces, in the order given.
func logged(r slog.Record, keys ...string) string {
	pairs := make([]string, len(keys))
	for i, key := range keys {
		pairs[i] = fmt.Sprintf("%s=%v", key, attr(r, key))
	}
	return strings.Join(pairs, " ")
}

// anyRecord matches every record.
func anyRecord(slog.Record) bool { return true }

// names matches a record about provider id.
func names(id failnext.EndpointID) func(slog.Record) bool {
	return func(r slog.Record) bool {
		return attr(r, "provider") == id
	}
}

// endpoint returns one endpoint's part of a Status.
func endpoint(st blocklag.Status, id string) blocklag.EndpointStatus {
	for _, e := range st.Endpoints {
		if string(e.ID) == id {
			return e
		}
	}
	return blocklag.EndpointStatus{}
}

// about returns the messages of the records that name provider id, in order.
func (l *logTap) about(id failnext.EndpointID) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var msgs []string
	for _, r := range l.records {
		if attr(r, "provider") == id {
			msgs = append(msgs, r.Message)
		}
	}
	return msgs
}

// servedBy matches a read record for block served by endpoint id.
func servedBy(id failnext.EndpointID, block uint64) func(slog.Record) bool {
	return func(r slog.Record) bool {
		return attr(r, "endpoint") == id && attr(r, "block") == block
	}
}

// startDevNode starts an in-process dev chain that adds blocks only when
// told to, brings it to the given height, and stops it when the test ends.
func startDevNode(t *testing.T, blocks int) *devnet.Node {
	t.Helper()
	n, err := devnet.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	n.Commit(blocks)
	return n
}

// readLine is a read's record in brief: its message, the provider that
// served it, if any, and its level.
func readLine(r slog.Record) string {
	if id := attr(r, "endpoint"); id != nil {
		return fmt.Sprintf("%s %v %v", r.Message, id, r.Level)
	}
	return fmt.Sprintf("%s %v", r.Message, r.Level)
}

// inTurn is a handler that serves the i-th request it receives with
// handlers[i], and every request after the last handler's with that one.
func inTurn(handlers ...http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handlers[min(n, len(handlers)-1)]
		n++
		mu.Unlock()
		h(w, r)
	}
}

// isRead matches a record of a read, served or failed.
func isRead(r slog.Record) bool {
	return r.Message == "read" || r.Message == "read failed"
}

// isProbe reports whether r is one of blocklag's probes, which name
// blocklag in their User-Agent; go-ethereum's reads do not.
func isProbe(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("User-Agent"), "failnext-blocklag")
}

// answerHeight answers a JSON-RPC request, a probe or a read of
// eth_blockNumber, with height, such as "0x12".
func answerHeight(w http.ResponseWriter, r *http.Request, height string) {
	var req struct{ ID json.RawMessage }
	json.NewDecoder(r.Body).Decode(&req)
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("1")
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%q}`, req.ID, height)
}

// startProvider starts a provider at height that answers blocklag's
// probes, and reads too when reads is nil; otherwise reads handles them.
func startProvider(t *testing.T, height string, reads http.HandlerFunc) *httptest.Server {
	t.Helper()
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		if reads == nil || isProbe(r) {
			answerHeight(w, r, height)
			return
		}
		reads(w, r)
	})
}

// serve starts a local server with handler, and closes it when the test
// ends, its connections first, so that a handler waiting on its request's
// context returns.
func serve(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// hang is a handler that answers nothing until the client gives up. It
// reads the request's body first: the server notices a closed connection,
// and ends the request's context, only once the body has been read.
func hang(_ http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// hangUp is a handler that closes the connection without an answer.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// setFlag sets the command line's flag name to value until the test ends.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag -%s", name)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}

// buildCommand builds the continuous command, as a user does, into a
// directory of the test's, and returns its path.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "continuous")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// bell wakes whoever waits for something to happen: a line printed, a
// request received.
type bell struct {
	mu   sync.Mutex
	rung chan struct{} // closed when the bell rings, then replaced
}

func newBell() *bell {
	return &bell{rung: make(chan struct{})}
}

func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.rung)
	b.rung = make(chan struct{})
}

// wait returns once cond holds, and fails the test if it does not within
// testTimeout.
func (b *bell) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		b.mu.Lock()
		rung := b.rung
		b.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-rung:
		case <-timeout:
			t.Fatalf("no %s within %v", what, testTimeout)
		}
	}
}

// keyedProvider is a local provider whose URL holds keys of its own.
type keyedProvider struct {
	url     string   // with its keys
	uri     string   // the path and query of its URL, which every request to it must have
	auth    string   // the Authorization header every request to it must carry; "" for none
	secrets []string // its keys, user name, password, and the base64 of user:password
}

// fleet is a set of local providers, by name, and what they received:
//   - healthy, behind and ahead answer at heights 18, 10 and 1018;
//   - keyed-a, keyed-b and keyed-behind have a user:password@ too, answer
//     only to it, at 18, 18 and 10;
//   - rejecting and keyed-rejecting answer every request with a 401 that
//     echoes the request's path, query and credentials;
//   - redirecting answers probes at 18 and redirects reads to healthy's URL;
//   - hung takes every request and never answers;
//   - refusing refuses connections;
//   - flaky answers at 18 until told to refuse connections.
type fleet struct {
	byName map[string]*keyedProvider // not changed once startFleet has returned
	flaky  *switchable
	bell   *bell

	mu     sync.Mutex
	wrong  []string       // what a provider received that was not its own, or lacked of its own
	probes map[string]int // by provider
	reads  map[string]int // requests that were not probes, by provider
}

func startFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{
		byName: map[string]*keyedProvider{},
		bell:   newBell(),
		probes: map[string]int{},
		reads:  map[string]int{},
	}
	answer := func(name, height string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != f.ownAuth(name) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			answerHeight(w, r, height)
		}
	}
	f.serve(t, "healthy", "/v3/", false, answer("healthy", "0x12"))
	f.serve(t, "behind", "/v3/", false, answer("behind", "0xa"))
	f.serve(t, "ahead", "/v3/", false, answer("ahead", "0x3fa"))
	f.serve(t, "keyed-a", "/v3/", true, answer("keyed-a", "0x12"))
	f.serve(t, "keyed-b", "/rpc/", true, answer("keyed-b", "0x12"))
	f.serve(t, "keyed-behind", "/v1/", true, answer("keyed-behind", "0xa"))
	f.serve(t, "rejecting", "/v2/", false, rejectEchoing)
	f.serve(t, "keyed-rejecting", "/v2/", true, rejectEchoing)
	f.serve(t, "redirecting", "/v3/", false, func(w http.ResponseWriter, r *http.Request) {
		if isProbe(r) {
			answerHeight(w, r, "0x12")
			return
		}
		http.Redirect(w, r, f.urlOf("healthy"), http.StatusTemporaryRedirect)
	})
	f.serve(t, "hung", "/rpc/", false, hang)

	f.flaky = &switchable{addr: "127.0.0.1:0", handler: f.record("flaky", answer("flaky", "0x12"))}
	f.flaky.up(t)
	t.Cleanup(func() { f.flaky.down(t) })
	f.add("flaky", "http://"+f.flaky.addr, "/v3/", false)

	// A port just released, last, so that no provider of the fleet takes it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	f.add("refusing", "http://"+ln.Addr().String(), "/eth/", false)
	return f
}

// serve starts provider name, whose URL has a path under prefix and, when
// withUser, a user:password@.
func (f *fleet) serve(t *testing.T, name, prefix string, withUser bool, handle http.HandlerFunc) {
	t.Helper()
	srv := serve(t, f.record(name, handle))
	f.add(name, srv.URL, prefix, withUser)
}

// add gives provider name, at base, a URL with keys of its own.
func (f *fleet) add(name, base, prefix string, withUser bool) {
	pathKey := rand.Text()
	queryKey := rand.Text()
	p := &keyedProvider{uri: prefix + pathKey + "?apikey=" + queryKey, secrets: []string{pathKey, queryKey}}
	p.url = base + p.uri
	if withUser {
		user := rand.Text()[:12]
		password := rand.Text()
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		p.auth = "Basic " + basic
		p.secrets = append(p.secrets, user, password, basic)
		p.url = strings.Replace(p.url, "://", "://"+user+":"+password+"@", 1)
	}
	// The command that sends the requests is another process: the lock
	// is what orders this write before receive's reads for the race
	// detector.
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byName[name] = p
}

// record wraps handle so that the fleet notes what each request to
// provider name carried before handle answers it.
func (f *fleet) record(name string, handle http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.receive(name, r)
		handle(w, r)
	}
}

// receive notes one request to provider name: whether it was a probe, and
// whether it had the provider's own path, query and credentials and
// nothing of another provider's secrets, in its URI or in any header.
func (f *fleet) receive(name string, r *http.Request) {
	defer f.bell.ring()
	f.mu.Lock()
	defer f.mu.Unlock()
	own := f.byName[name]
	if isProbe(r) {
		f.probes[name]++
	} else {
		f.reads[name]++
	}
	if r.RequestURI != own.uri {
		f.wrong = append(f.wrong, name+" received a request URI not its own")
	}
	auth := r.Header.Values("Authorization")
	hasOwn := len(auth) == 1 && auth[0] == own.auth
	if !hasOwn && (own.auth != "" || len(auth) > 0) {
		f.wrong = append(f.wrong, name+" did not receive its own Authorization, and it alone")
	}
	for other, p := range f.byName {
		if other == name {
			continue
		}
		for _, secret := range p.secrets {
			if pieceOf(r.RequestURI, secret) != "" {
				f.wrong = append(f.wrong, name+" received a piece of a secret of "+other+" in its URI")
			}
			for header, values := range r.Header {
				if pieceOf(strings.Join(values, "\n"), secret) != "" {
					f.wrong = append(f.wrong,
						name+" received a piece of a secret of "+other+" in its "+header+" header")
				}
			}
		}
	}
}

// ownAuth is the Authorization header that provider name must receive.
func (f *fleet) ownAuth(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byName[name].auth
}

// urlOf is the URL of provider name, keys and all.
func (f *fleet) urlOf(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byName[name].url
}

// list is an ETH_RPC_URLS value naming the providers given, in order.
func (f *fleet) list(names ...string) string {
	fields := make([]string, len(names))
	for i, name := range names {
		fields[i] = name + "=" + f.urlOf(name)
	}
	return strings.Join(fields, " ")
}

func (f *fleet) probesOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.probes[name]
}

func (f *fleet) readsOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[name]
}

// requests is how many requests the providers have received in all.
func (f *fleet) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, counts := range []map[string]int{f.probes, f.reads} {
		for _, c := range counts {
			n += c
		}
	}
	return n
}

// checkReceived fails the test for each kind of request a provider
// received that it should not have.
func (f *fleet) checkReceived(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for _, w := range f.wrong {
		if !seen[w] {
			seen[w] = true
			t.Error(w)
		}
	}
}

// checkPrinted fails the test if text holds 8 bytes in a row of any
// provider's secrets.
func (f *fleet) checkPrinted(t *testing.T, text string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, p := range f.byName {
		for _, secret := range p.secrets {
			if piece := pieceOf(text, secret); piece != "" {
				t.Errorf("the command printed %q, a piece of a secret of %s:\n%s", piece, name, text)
			}
		}
	}
}

// pieceOf returns the first 8 bytes in a row of secret that text holds, or
// "".
func pieceOf(text, secret string) string {
	for i := 0; i+8 <= len(secret); i++ {
		if piece := secret[i : i+8]; strings.Contains(text, piece) {
			return piece
		}
	}
	return ""
}

// rejectEchoing answers with a 401 that echoes the request's user:password
// and Authorization header, if any, then its path and query, as a provider
// that rotated a key might: in a JSON-RPC error for a probe, whose message
// blocklag shows, and in plain text for a read, so that each secret comes
// early enough to show in a line that does not hide it.
func rejectEchoing(w http.ResponseWriter, r *http.Request) {
	echo := "rejected " + r.RequestURI
	user, password, ok := r.BasicAuth()
	if ok {
		echo = "rejected " + user + ":" + password + " " + r.Header.Get("Authorization") + " " + r.RequestURI
	}
	if !isProbe(r) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, echo)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":%q}}`, echo)
}

// switchable is a provider that can stop accepting connections, and then
// accept them again at the same address.
type switchable struct {
	addr    string // "127.0.0.1:0" until the first up picks a port
	handler http.Handler
	srv     *http.Server // nil while down; used by the test's goroutine only
}

func (s *switchable) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.handler}
	go s.srv.Serve(ln)
}

// down closes the listener and every connection: from then on a dial is
// refused.
func (s *switchable) down(t *testing.T) {
	t.Helper()
	if s.srv == nil {
		return
	}
	if err := s.srv.Close(); err != nil {
		t.Error(err)
	}
	s.srv = nil
}

// command is one run of the built command, and what it has printed on
// standard output and standard error.
type command struct {
	cmd  *exec.Cmd
	bell *bell
	done chan struct{} // closed once it has exited and its output is read

	mu  sync.Mutex
	out []string // its lines
}

// start runs bin with args and with env in place of every ETH_RPC_
// variable of the test's environment, and kills it when the test ends.
func (f *fleet) start(t *testing.T, bin string, env map[string]string, args ...string) *command {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETH_RPC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	c := &command{cmd: cmd, bell: f.bell, done: make(chan struct{})}
	go func() {
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			c.mu.Lock()
			c.out = append(c.out, scanner.Text())
			c.mu.Unlock()
			c.bell.ring()
		}
		r.Close()
		cmd.Wait()
		close(c.done)
		c.bell.ring()
	}()
	t.Cleanup(c.kill)
	return c
}

// kill ends the command, if it has not ended, and waits until it has.
func (c *command) kill() {
	c.cmd.Process.Kill()
	<-c.done
}

func (c *command) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// wait waits for the command to exit by itself, and returns its status.
func (c *command) wait(t *testing.T) int {
	t.Helper()
	c.bell.wait(t, "exit of the command", c.exited)
	return c.cmd.ProcessState.ExitCode()
}

// readLogged matches a line that logs a read, served or failed.
var readLogged = regexp.MustCompile(`\bread (block=|failed)`)

// waitForRead returns the first line that logs a read, and fails the test
// if the command exits without one.
func (c *command) waitForRead(t *testing.T) string {
	t.Helper()
	var read string
	c.bell.wait(t, "read logged", func() bool {
		for _, l := range c.lines() {
			if readLogged.MatchString(l) {
				read = l
				return true
			}
		}
		return c.exited()
	})
	if read == "" {
		t.Fatalf("the command exited without logging a read; it printed:\n%s", c.text())
	}
	return read
}

func (c *command) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.out...)
}

func (c *command) text() string {
	return strings.Join(c.lines(), "\n")
}

// startRun runs the loop in the background until the test calls the
// returned stop, which fails the test unless run then returns nil, as it
// does on SIGINT or SIGTERM.
func startRun(t *testing.T, endpoints []failnext.Endpoint, checkEvery, readEvery time.Duration,
	metricsAddr string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, endpoints, checkEvery, readEvery, metricsAddr) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v after its context ended, want nil", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("run did not return within %v of its context ending", testTimeout)
		}
	}
	t.Cleanup(stop)
	return stop
}

// fetch returns the body of a successful GET of url.
func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return string(body), err
}

// mustParse parses raw, a URL the test made.
func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// list is an environment holding ETH_RPC_URLS alone.
func list(value string) map[string]string {
	return map[string]string{"ETH_RPC_URLS": value}
}

// heightOf reads a node's height straight from it, without blocklag.
func heightOf(t *testing.T, url string) uint64 {
	t.Helper()
	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
