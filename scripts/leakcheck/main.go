// Command leakcheck runs a program that reads its providers from
// ETH_RPC_URLS, as the README's Quick start does, against hostile local
// providers whose URLs hold API keys, and fails when anything the program
// prints shows a piece of a key, when a provider receives credentials other
// than its own or lacks its own, or when a mistyped list does not end the
// program with one line that says how to write it.
//
//	leakcheck PROGRAM
//
// The providers listen on loopback, each URL with a key in its path and
// another in its query: one answers eth_blockNumber, one lags behind it, one
// is far ahead of it, one rejects the key with HTTP 401 and echoes the
// request's path and query in its body, one refuses connections, one hangs
// up without answering and one never answers; three more answer only to the
// Basic credentials of their own user:password@ (one of them lagging). Every
// provider that listens checks every request it gets, probes and reads
// alike: its path and query must be its own, keys and all, and its
// Authorization header the provider's own Basic credentials, or none for
// one without user:password@. PROGRAM runs once with all of them, once
// with each failing one alone (so that its reads, not only its checks, meet
// the failure), in several orders that send its reads to a provider with
// user:password@ and to one without, first and not first, once with a URL
// that blocklag refuses, and once with each of a set of mistyped lists. Each
// run lasts until PROGRAM has logged a read or exited, whichever comes
// first. A piece is any 8 bytes of a key, user name or password, or of the
// base64 of user:password that a Basic Authorization header carries.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// readLogged matches a line in which the Quick start logged a read, either
// way it can end, and readServed one in which the read succeeded.
var (
	readLogged = regexp.MustCompile(`latest block|read failed`)
	readServed = regexp.MustCompile(`latest block`)
)

// runTimeout bounds one run: a first Check (at most its 5 s context) and
// one read (at most 5 s) take far less.
const runTimeout = 60 * time.Second

// pieceLen is the length of the shortest piece of a key that must not show.
const pieceLen = 8

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: leakcheck PROGRAM")
		os.Exit(2)
	}
	if err := check(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "leakcheck:", err)
		os.Exit(1)
	}
}

// scenario is one run of the program: the ETH_RPC_URLS it gets and what
// it must do with it.
type scenario struct {
	name string
	urls string
	// reader, when set, is the provider the program's read must reach:
	// the first eligible one.
	reader string
	// mistyped says that the list is written wrong: the program must exit,
	// without reading, after one line that says how to write the list.
	mistyped bool
}

// usageLine matches the line that says how to write the list.
var usageLine = regexp.MustCompile(`ETH_RPC_URLS='[a-z]+=https?://`)

// check runs program in every scenario, copies what each run printed to
// w, and returns an error naming each piece of a key that any run printed,
// each credential a provider should not have received or lacked, and each
// mistyped list that the program did not refuse as it should.
func check(program string, w io.Writer) error {
	ps := startProviders()
	defer ps.close()
	// An invalid escape in the path, which New refuses.
	bad := "bad=" + strings.Replace(ps.urlOf("refusing"), "?", "%zz?", 1)
	healthy, keyed := ps.urlOf("healthy"), ps.urlOf("keyed-a")
	scenarios := []scenario{
		{name: "every provider", urls: ps.list("healthy", "rejecting", "refusing", "hangup", "hung", "keyed-a")},
		{name: "only the one that rejects the key", urls: ps.list("rejecting")},
		{name: "only the one that refuses connections", urls: ps.list("refusing")},
		{name: "only the one that hangs up", urls: ps.list("hangup")},
		{name: "only the one that never answers", urls: ps.list("hung")},
		// Reads go to the first eligible provider, so each order sends
		// them somewhere else, with and without user:password@.
		{name: "user:password@ first, answering", urls: ps.list("keyed-a", "healthy"), reader: "keyed-a"},
		{name: "user:password@ first, lagging", urls: ps.list("keyed-behind", "healthy", "keyed-a"), reader: "healthy"},
		{name: "user:password@ first, lagging, another next", urls: ps.list("keyed-behind", "keyed-b", "healthy"), reader: "keyed-b"},
		{name: "user:password@ after one without", urls: ps.list("behind", "keyed-a", "keyed-b"), reader: "keyed-a"},
		{name: "user:password@ last", urls: ps.list("healthy", "behind", "keyed-b"), reader: "healthy"},
		// With three providers the Quick start sets Quorum and MaxAhead, so
		// one far ahead of the others, though first, is not read.
		{name: "one far ahead, first", urls: ps.list("ahead", "keyed-a", "healthy"), reader: "keyed-a"},
		{name: "a URL that blocklag refuses", urls: bad},
		{name: "no list", urls: "", mistyped: true},
		{name: "URLs without names", urls: healthy + " " + keyed, mistyped: true},
		{name: "a URL with user:password@ and no name", urls: keyed, mistyped: true},
		{name: "commas between entries", urls: "a=" + healthy + ",b=" + keyed, mistyped: true},
		{name: "commas and spaces between entries", urls: "a=" + healthy + ", b=" + keyed, mistyped: true},
		{name: "a name holding '/'", urls: "mainnet/a=" + healthy, mistyped: true},
		{name: "a name holding ':'", urls: "eth:a=" + keyed, mistyped: true},
		{name: "a stray '='", urls: "a==" + healthy, mistyped: true},
		{name: "a missing '='", urls: "a " + keyed, mistyped: true},
		{name: "spaces around '='", urls: "a = " + healthy, mistyped: true},
		{name: "a name and no URL", urls: "a= " + keyed, mistyped: true},
	}

	if err := canary(ps); err != nil {
		return err
	}
	var leaked, wire, refused []string
	for _, sc := range scenarios {
		ps.wire.reset()
		run, err := runOnce(program, sc.urls)
		if err != nil {
			return fmt.Errorf("%s: %v; it printed:\n%s", sc.name, err, run.out)
		}
		fmt.Fprintf(w, "== %s: %d lines\n%s", sc.name, bytes.Count(run.out, []byte("\n")), run.out)
		for _, leak := range leaks(run.out, ps.keys()) {
			leaked = append(leaked, fmt.Sprintf("%s: %s", sc.name, leak))
		}
		wrong, reads := ps.wire.take()
		for _, v := range wrong {
			wire = append(wire, fmt.Sprintf("%s: %s", sc.name, v))
		}
		if sc.reader != "" && (reads[sc.reader] == 0 || !run.read) {
			wire = append(wire, fmt.Sprintf("%s: no read served by %s (reads received: %v)", sc.name, sc.reader, reads))
		}
		if sc.mistyped {
			if why := refusal(run); why != "" {
				refused = append(refused, fmt.Sprintf("%s: %s", sc.name, why))
			}
		}
	}
	var failures []string
	if len(leaked) > 0 {
		failures = append(failures, "the program printed pieces of keys:\n"+strings.Join(leaked, "\n"))
	}
	if len(wire) > 0 {
		failures = append(failures, "providers received credentials other than their own, or lacked their own:\n"+strings.Join(wire, "\n"))
	}
	if len(refused) > 0 {
		failures = append(failures, "mistyped lists were not refused with one line saying how to write them:\n"+strings.Join(refused, "\n"))
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "\n"))
	}
	fmt.Fprintln(w, "leakcheck: no piece of any key in anything the program printed; every provider received its own credentials and no other's; every mistyped list refused in one line")
	return nil
}

// refusal says what is wrong with a run given a mistyped list, or "" when
// the program exited with an error status, read nothing, and printed one
// line that says how to write the list.
func refusal(run result) string {
	lines := strings.Split(strings.TrimSuffix(string(run.out), "\n"), "\n")
	switch {
	case run.read:
		return "it read, as if the list were right"
	case run.exitCode == 0:
		return "it exited with status 0"
	case len(lines) != 1:
		return fmt.Sprintf("it printed %d lines, want 1", len(lines))
	case !usageLine.MatchString(lines[0]):
		return "its line does not show how to write the list (ETH_RPC_URLS='a=https://… b=https://…')"
	}
	return ""
}

// canary makes sure the providers are hostile enough for the check to mean
// something: the raw text of a failed request's error, which is what a
// careless program logs, shows a key.
func canary(ps *providers) error {
	req, err := http.NewRequest(http.MethodPost, ps.urlOf("refusing"), strings.NewReader("{}"))
	if err != nil {
		return err
	}
	_, err = http.DefaultClient.Do(req)
	if err == nil || len(leaks([]byte(err.Error()), ps.keys())) == 0 {
		return fmt.Errorf("canary: a raw request error (%v) shows no key, so the check proves nothing", err)
	}
	return nil
}

// result is what one run of the program did.
type result struct {
	out      []byte // standard output and standard error together
	read     bool   // it logged a read that succeeded
	exitCode int    // its exit status if it exited by itself, else -1
}

// runOnce runs program with ETH_RPC_URLS set to urls until it logs a read
// or exits, and returns all it printed on standard output and standard
// error together. A program that exits before logging a read must have
// printed something: a refused configuration is reported, not silent.
func runOnce(program, urls string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program)
	cmd.Env = append(os.Environ(), "ETH_RPC_URLS="+urls)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		w.Close()
		exited <- err
	}()

	var out bytes.Buffer
	res := result{exitCode: -1}
	sawRead := false
	lines := bufio.NewReader(r)
	for {
		line, err := lines.ReadBytes('\n')
		out.Write(line)
		if readLogged.Match(line) {
			sawRead = true
			res.read = readServed.Match(line)
			break
		}
		if err != nil {
			break // the program exited, or was killed at runTimeout
		}
	}
	if sawRead {
		cmd.Process.Kill()
	}
	io.Copy(&out, lines) // whatever it wrote before it ended
	<-exited
	if !sawRead && ctx.Err() == nil {
		res.exitCode = cmd.ProcessState.ExitCode()
	}
	res.out = out.Bytes()
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("no read logged within %v", runTimeout)
	case !sawRead && out.Len() == 0:
		return res, errors.New("it exited without printing anything")
	}
	return res, nil
}

// leaks returns, for each key, the first line of out that shows a piece of
// it, and the piece.
func leaks(out []byte, keys []string) []string {
	var found []string
	for _, key := range keys {
	pieces:
		for i := 0; i+pieceLen <= len(key); i++ {
			piece := key[i : i+pieceLen]
			for n, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, piece) {
					found = append(found, fmt.Sprintf("line %d shows %q of a key: %s", n+1, piece, line))
					break pieces
				}
			}
		}
	}
	return found
}

// providers are the local providers, by name, each with the keys in its URL.
type providers struct {
	urls    map[string]string
	keyList []string
	closers []func()
	wire    *wire
}

func (ps *providers) urlOf(name string) string { return ps.urls[name] }
func (ps *providers) keys() []string           { return ps.keyList }

// list is an ETH_RPC_URLS value: the named providers, as ID=URL, in order.
func (ps *providers) list(names ...string) string {
	fields := make([]string, len(names))
	for i, name := range names {
		fields[i] = name + "=" + ps.urls[name]
	}
	return strings.Join(fields, " ")
}

func (ps *providers) close() {
	for _, c := range ps.closers {
		c()
	}
}

// wire records, for every request a provider receives, whether it carried
// that provider's own credentials and no other's, and counts the reads
// (requests that are not blocklag's probes) each provider received.
type wire struct {
	mu    sync.Mutex
	own   map[string]creds  // provider name: what each request to it must carry
	whose map[string]string // a path and query, or an Authorization: whose it is
	wrong []string
	reads map[string]int
}

// creds are what a provider must receive: its path and query, which hold
// its keys, and its Authorization header ("" for none). Keys travel in the
// URL as much as in the header, so a request sent to one provider with
// another's path gives that other's keys away just the same.
type creds struct{ uri, auth string }

// receive records one request that provider name received.
func (wi *wire) receive(name string, r *http.Request) {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("User-Agent"), "failnext-blocklag") {
		wi.reads[name]++
	}
	if uri := r.URL.RequestURI(); uri != wi.own[name].uri {
		if other := wi.whose[uri]; other != "" {
			wi.wrong = append(wi.wrong, fmt.Sprintf("%s received the path and query of %s", name, other))
		} else {
			wi.wrong = append(wi.wrong, name+" received a path and query not its own")
		}
	}
	got, want := r.Header.Values("Authorization"), wi.own[name].auth
	switch {
	case len(got) == 0 && want == "":
	case len(got) == 1 && got[0] == want:
	case len(got) == 0:
		wi.wrong = append(wi.wrong, name+" received no credentials, not its own")
	case len(got) == 1 && wi.whose[got[0]] != "":
		wi.wrong = append(wi.wrong, fmt.Sprintf("%s received the credentials of %s", name, wi.whose[got[0]]))
	default:
		wi.wrong = append(wi.wrong, fmt.Sprintf("%s received %d Authorization headers that are not its own", name, len(got)))
	}
}

func (wi *wire) reset() {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	wi.wrong, wi.reads = nil, map[string]int{}
}

// take returns what was recorded since the last reset: each wrong
// credential, once per provider and kind, and the reads per provider.
func (wi *wire) take() ([]string, map[string]int) {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	var wrong []string
	seen := map[string]bool{}
	for _, w := range wi.wrong {
		if !seen[w] {
			seen[w] = true
			wrong = append(wrong, w)
		}
	}
	return wrong, wi.reads
}

// startProviders starts the providers and gives each a URL with a path
// key shaped like a hosted provider's and a query key of its own; those
// named keyed-… also get a user name and password of their own.
func startProviders() *providers {
	wi := &wire{own: map[string]creds{}, whose: map[string]string{}, reads: map[string]int{}}
	ps := &providers{urls: map[string]string{}, wire: wi}
	add := func(name, base, pathPrefix string) {
		pathKey, queryKey := newKey(32), newKey(40)
		own := creds{uri: pathPrefix + pathKey + "?apikey=" + queryKey}
		wi.whose[own.uri] = name
		ps.keyList = append(ps.keyList, pathKey, queryKey)
		if strings.HasPrefix(name, "keyed-") {
			user, password := newKey(12), newKey(24)
			basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
			// The header's base64 gives the pair away as surely as the pair.
			ps.keyList = append(ps.keyList, user, password, basic)
			own.auth = "Basic " + basic
			wi.whose[own.auth] = name
			base = strings.Replace(base, "://", "://"+user+":"+password+"@", 1)
		}
		wi.own[name] = own
		ps.urls[name] = base + own.uri
	}
	// serve starts an HTTP provider that records what each request carried
	// before handle answers it.
	serve := func(name, pathPrefix string, handle http.HandlerFunc) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wi.receive(name, r)
			handle(w, r)
		}))
		ps.closers = append(ps.closers, srv.Close)
		add(name, srv.URL, pathPrefix)
	}
	answer := func(height string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"`+height+`"}`)
		}
	}
	// A user:password@ provider answers only to its own credentials, as a
	// hosted one does; wire has recorded anything else.
	keyedAnswer := func(name, height string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != wi.own[name].auth {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			answer(height)(w, r)
		}
	}

	serve("healthy", "/v3/", answer("0x12"))
	serve("behind", "/v3/", answer("0xa"))
	serve("ahead", "/v3/", answer("0x3fa"))
	serve("keyed-a", "/v3/", keyedAnswer("keyed-a", "0x12"))
	serve("keyed-b", "/rpc/", keyedAnswer("keyed-b", "0x12"))
	serve("keyed-behind", "/v1/", keyedAnswer("keyed-behind", "0xa"))
	serve("rejecting", "/v2/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"invalid key in %s"}}`, r.URL.RequestURI())
	})

	// A port that was just released: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	refusing := "http://" + ln.Addr().String()
	ln.Close()
	add("refusing", refusing, "/eth/")

	add("hangup", listen(ps, func(c net.Conn) {
		if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			wi.receive("hangup", req) // then hang up
		}
		c.Close()
	}), "/")

	stop := make(chan struct{})
	ps.closers = append(ps.closers, func() { close(stop) })
	add("hung", listen(ps, func(c net.Conn) {
		if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			wi.receive("hung", req)
		}
		<-stop // then say nothing until the check ends
		c.Close()
	}), "/rpc/")
	return ps
}

// listen serves every connection to a loopback port with serve, each on a
// goroutine of its own, and returns the port's http URL.
func listen(ps *providers, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ps.closers = append(ps.closers, func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// newKey returns n random letters and digits, as hosted providers' keys
// are made of.
func newKey(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
