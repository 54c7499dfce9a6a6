// Command leakcheck runs a program that reads its providers from
// ETH_RPC_URLS (or from ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL), as the
// example's continuous command does, against hostile local providers whose
// URLs hold API keys, and fails when the program gives a key away or
// misbehaves in a way a newcomer would not notice.
//
//	leakcheck PROGRAM [ARG...]
//
// The providers listen on loopback, each URL with a key in its path and
// another in its query, and some with a user:password@ of their own: ones
// that answer eth_blockNumber (one at the others' height, one behind, one
// 1000 blocks ahead), one that rejects the key with HTTP 401 and echoes the
// request's path and query in its body, one that does so for its
// user:password@ and echoes its Authorization header too, one that
// refuses connections, one that hangs up, one that never answers, and one
// that answers probes but redirects every other request, with a 307, to
// another provider's URL.
//
// PROGRAM runs, with ARGs, once per scenario: with all of them, with each
// failing one alone (so that its reads, not only its checks, meet the
// failure), in orders that send its reads to a provider with user:password@
// and to one without, first and not first, with three providers one of
// which is far ahead, with the two variables of the seed, with a URL that
// blocklag refuses, and with mistyped lists and variables. Each run lasts
// until PROGRAM has logged a read or exited. One more run gives it two
// providers, stops one from accepting connections for several checks, and
// then lets it accept them again; ARGs must make PROGRAM check often (the
// continuous command: -check-every 100ms).
//
// It fails when anything PROGRAM printed holds 8 bytes in a row of a key,
// a user name, a password or the base64 of user:password that a Basic
// Authorization header carries; when a provider receives a request whose
// path and query are not its own, whose Authorization is not its own Basic
// credentials (or none, for a provider without user:password@), or any
// header holding 8 bytes of another provider's secrets (Referer included);
// when a read does not reach the provider it should; when a mistyped list
// or variable does not end PROGRAM with one line that says what to write
// and shows no part of what was written; and when PROGRAM logs a provider
// that refuses connections more than once while it refuses, or more than
// once when it recovers.
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
	"sort"
	"strings"
	"sync"
	"time"
)

// readLogged matches a line in which the program logged a read, either way
// it can end, and readServed one in which the read succeeded.
var (
	readLogged = regexp.MustCompile(`\bread (block=|failed)`)
	readServed = regexp.MustCompile(`\bread block=`)
)

// runTimeout bounds one run: a first Check (at most its 5 s context) and
// one read (at most 5 s) take far less.
const runTimeout = 60 * time.Second

// pieceLen is the length of the shortest piece of a secret that must not
// show, or reach another provider.
const pieceLen = 8

// recoveryChecks is how many checks the recovery run waits for while the
// provider refuses connections, and again once it accepts them.
const recoveryChecks = 8

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: leakcheck PROGRAM [ARG...]")
		os.Exit(2)
	}
	if err := check(os.Args[1], os.Args[2:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "leakcheck:", err)
		os.Exit(1)
	}
}

// scenario is one run of the program: the variables it gets and what it
// must do with them.
type scenario struct {
	name string
	env  map[string]string
	// reader, when set, is the provider whose answer the program's read
	// must log: the first eligible one.
	reader string
	// refused, when set, says that the variables are written wrong: the
	// program must exit, without reading, after one line that matches
	// refused and shows no part of them.
	refused *regexp.Regexp
}

// What a refusal must say: how to write the list, or which variable to
// set, or that the two forms do not mix.
var (
	howToWrite     = regexp.MustCompile(`ETH_RPC_URLS='[a-z]+=https?://`)
	backupMissing  = regexp.MustCompile(`ETH_RPC_BACKUP_URL`)
	primaryMissing = regexp.MustCompile(`ETH_RPC_PRIMARY_URL`)
	notBoth        = regexp.MustCompile(`not both`)
)

func list(urls string) map[string]string { return map[string]string{"ETH_RPC_URLS": urls} }

// check runs program with args in every scenario, copies what each run
// printed to w, and returns an error naming every failure.
func check(program string, args []string, w io.Writer) error {
	ps := startProviders()
	defer ps.close()
	// An invalid escape in the path, which New refuses.
	bad := "bad=" + strings.Replace(ps.urlOf("refusing"), "?", "%zz?", 1)
	healthy := ps.urlOf("healthy")
	keyed := ps.urlOf("keyed-a")
	scenarios := []scenario{
		{name: "every provider", reader: "healthy", env: list(ps.list("healthy", "rejecting",
			"keyed-rejecting", "refusing", "hangup", "hung", "redirecting", "keyed-a"))},
		{name: "only the one that rejects the key", env: list(ps.list("rejecting"))},
		{name: "only the one that rejects its user:password@", env: list(ps.list("keyed-rejecting"))},
		{name: "only the one that refuses connections", env: list(ps.list("refusing"))},
		{name: "only the one that hangs up", env: list(ps.list("hangup"))},
		{name: "only the one that never answers", env: list(ps.list("hung"))},
		{name: "only the one that redirects", env: list(ps.list("redirecting"))},
		// Reads go to the first eligible provider, so each order sends
		// them somewhere else, with and without user:password@.
		{name: "user:password@ first, answering", env: list(ps.list("keyed-a", "healthy")),
			reader: "keyed-a"},
		{name: "user:password@ first, lagging", env: list(ps.list("keyed-behind", "healthy", "keyed-a")),
			reader: "healthy"},
		{name: "user:password@ first, lagging, another next",
			env: list(ps.list("keyed-behind", "keyed-b", "healthy")), reader: "keyed-b"},
		{name: "user:password@ after one without", env: list(ps.list("behind", "keyed-a", "keyed-b")),
			reader: "keyed-a"},
		{name: "user:password@ last", env: list(ps.list("healthy", "behind", "keyed-b")), reader: "healthy"},
		// A read sent to the first provider's URL and redirected would
		// carry that URL to the next provider in its Referer.
		{name: "a redirect after one lagging", env: list(ps.list("keyed-behind", "redirecting", "healthy"))},
		// With three providers the program sets Quorum and MaxAhead, so one
		// 1000 blocks ahead of the others, though first, is not read.
		{name: "one far ahead, first", env: list(ps.list("ahead", "keyed-a", "healthy")), reader: "keyed-a"},
		{name: "the seed's two variables", reader: "healthy", env: map[string]string{
			"ETH_RPC_PRIMARY_URL": ps.urlOf("keyed-behind"), "ETH_RPC_BACKUP_URL": healthy}},
		{name: "a URL that blocklag refuses", env: list(bad)},
		{name: "no list", env: list(""), refused: howToWrite},
		{name: "URLs without names", env: list(healthy + " " + keyed), refused: howToWrite},
		{name: "a URL with user:password@ and no name", env: list(keyed), refused: howToWrite},
		{name: "commas between entries", env: list("a=" + healthy + ",b=" + keyed), refused: howToWrite},
		{name: "commas and spaces between entries", env: list("a=" + healthy + ", b=" + keyed),
			refused: howToWrite},
		{name: "a name holding '/'", env: list("mainnet/a=" + healthy), refused: howToWrite},
		{name: "a name holding ':'", env: list("eth:a=" + keyed), refused: howToWrite},
		{name: "a name holding '?'", env: list("a?=" + keyed), refused: howToWrite},
		{name: "a name holding '@'", env: list("me@a=" + keyed), refused: howToWrite},
		{name: "a name holding ','", env: list("a,b=" + keyed), refused: howToWrite},
		{name: "a stray '='", env: list("a==" + healthy), refused: howToWrite},
		{name: "a missing '='", env: list("a " + keyed), refused: howToWrite},
		{name: "spaces around '='", env: list("a = " + healthy), refused: howToWrite},
		{name: "a name and no URL", env: list("a= " + keyed), refused: howToWrite},
		{name: "the primary without the backup", env: map[string]string{"ETH_RPC_PRIMARY_URL": keyed},
			refused: backupMissing},
		{name: "the backup without the primary", env: map[string]string{"ETH_RPC_BACKUP_URL": keyed},
			refused: primaryMissing},
		{name: "both forms", refused: notBoth, env: map[string]string{
			"ETH_RPC_URLS": ps.list("healthy"), "ETH_RPC_PRIMARY_URL": keyed, "ETH_RPC_BACKUP_URL": healthy}},
	}

	if err := canary(ps); err != nil {
		return err
	}
	var leaked, wire, refused []string
	note := func(list *[]string, name string, problems []string) {
		for _, p := range problems {
			*list = append(*list, name+": "+p)
		}
	}
	for _, sc := range scenarios {
		ps.wire.reset()
		run, err := runOnce(program, args, sc.env)
		if err != nil {
			return fmt.Errorf("%s: %v; it printed:\n%s", sc.name, err, run.out)
		}
		fmt.Fprintf(w, "== %s: %d lines\n%s", sc.name, bytes.Count(run.out, []byte("\n")), run.out)
		note(&leaked, sc.name, leaks(run.out, ps.keys()))
		wrong, reads := ps.wire.take()
		note(&wire, sc.name, wrong)
		if sc.reader != "" && (reads[sc.reader] == 0 || !run.read) {
			missed := fmt.Sprintf("no read served by %s (reads received: %v)", sc.reader, reads)
			note(&wire, sc.name, []string{missed})
		}
		if sc.refused != nil {
			if why := refusal(run, sc.refused, sc.env); why != "" {
				note(&refused, sc.name, []string{why})
			}
		}
	}

	const name = "a provider that refuses connections, then accepts them"
	ps.wire.reset()
	out, noisy, err := recovery(program, args, ps)
	if err != nil {
		return fmt.Errorf("%s: %v; it printed:\n%s", name, err, out)
	}
	fmt.Fprintf(w, "== %s: %d lines\n%s", name, bytes.Count(out, []byte("\n")), out)
	note(&leaked, name, leaks(out, ps.keys()))
	wrong, _ := ps.wire.take()
	note(&wire, name, wrong)

	var failures []string
	if len(leaked) > 0 {
		failures = append(failures, "the program printed pieces of keys:")
		failures = append(failures, leaked...)
	}
	if len(wire) > 0 {
		failures = append(failures, "providers received another's secrets, or lacked their own:")
		failures = append(failures, wire...)
	}
	if len(refused) > 0 {
		failures = append(failures, "mistyped variables were not refused in one line saying what to write:")
		failures = append(failures, refused...)
	}
	if len(noisy) > 0 {
		failures = append(failures, "a provider's failure was not logged once:")
		failures = append(failures, noisy...)
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "\n"))
	}
	fmt.Fprintln(w, "leakcheck: no piece of any key in anything the program printed; "+
		"every provider received its own credentials and nothing of another's; "+
		"every mistyped variable refused in one line; "+
		"a provider refusing connections logged once, and once when it recovered")
	return nil
}

// refusal says what is wrong with a run given mistyped variables, or ""
// when the program exited with an error status, read nothing, and printed
// one line that matches want and shows no 8 bytes of any value it was
// given.
func refusal(run result, want *regexp.Regexp, env map[string]string) string {
	lines := strings.Split(strings.TrimSuffix(string(run.out), "\n"), "\n")
	var values []string
	for _, v := range env {
		values = append(values, v)
	}
	switch {
	case run.read:
		return "it read, as if the variables were right"
	case run.exitCode == 0:
		return "it exited with status 0"
	case len(lines) != 1:
		return fmt.Sprintf("it printed %d lines, want 1", len(lines))
	case !want.MatchString(lines[0]):
		return fmt.Sprintf("its line does not say what to write (want it to match %s)", want)
	case len(leaks(run.out, values)) > 0:
		return "its line shows part of what was written: " + lines[0]
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

// command returns program with args, and with env in place of any
// ETH_RPC_ variable of this process's environment.
func command(ctx context.Context, program string, args []string, env map[string]string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, program, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETH_RPC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// runOnce runs program until it logs a read or exits, and returns all it
// printed on standard output and standard error together. A program that
// exits before logging a read must have printed something: a refused
// configuration is reported, not silent.
func runOnce(program string, args []string, env map[string]string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := command(ctx, program, args, env)
	r, w := io.Pipe()
	cmd.Stdout = w
	cmd.Stderr = w
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

// flakyLine matches a line that names the provider that stops accepting
// connections.
var flakyLine = regexp.MustCompile(`\bflaky\b`)

// recovery runs program against two providers, waits for its first read,
// stops the second from accepting connections for recoveryChecks checks
// (counted as requests to the first), then lets it accept them again for
// as many. It returns what program printed and, unless exactly one line
// named that provider while it refused and exactly one once it recovered,
// what was wrong.
func recovery(program string, args []string, ps *providers) (out []byte, noisy []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := command(ctx, program, args, list(ps.list("healthy", "flaky")))
	r, w := io.Pipe()
	cmd.Stdout = w
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	defer func() {
		cmd.Process.Kill()
		<-ps.events.lines.done
	}()
	go func() {
		cmd.Wait()
		w.Close()
	}()
	ps.events.lines.follow(r)

	if err := ps.events.waitUntil(ctx, func() bool { return ps.events.lines.reads() > 0 }); err != nil {
		return ps.events.lines.text(), nil, fmt.Errorf("no read logged: %v", err)
	}
	phase := func(name string, change func() error) (int, error) {
		start := ps.events.lines.count()
		from := ps.wire.count("healthy")
		if err := change(); err != nil {
			return 0, err
		}
		enough := func() bool { return ps.wire.count("healthy") >= from+recoveryChecks }
		err := ps.events.waitUntil(ctx, enough)
		if err != nil {
			return 0, fmt.Errorf("%d checks %s: %v", recoveryChecks, name, err)
		}
		return ps.events.lines.named(start, ps.events.lines.count(), flakyLine), nil
	}
	refusing, err := phase("while it refuses", ps.flaky.down)
	if err != nil {
		return ps.events.lines.text(), nil, err
	}
	recovered, err := phase("once it accepts", ps.flaky.up)
	if err != nil {
		return ps.events.lines.text(), nil, err
	}
	if refusing != 1 {
		noisy = append(noisy, fmt.Sprintf(
			"%d lines named it while it refused connections for %d checks, want 1", refusing, recoveryChecks))
	}
	if recovered != 1 {
		noisy = append(noisy, fmt.Sprintf("%d lines named it in the %d checks after it recovered, want 1",
			recovered, recoveryChecks))
	}
	return ps.events.lines.text(), noisy, nil
}

// leaks returns, for each secret, the first line of out that shows a piece
// of it, and the piece.
func leaks(out []byte, secrets []string) []string {
	var found []string
	for _, secret := range secrets {
		for n, line := range strings.Split(string(out), "\n") {
			if piece := pieceOf(line, secret); piece != "" {
				found = append(found, fmt.Sprintf("line %d shows %q of a secret: %s", n+1, piece, line))
				break
			}
		}
	}
	return found
}

// pieceOf returns the first piece of pieceLen bytes of secret that text
// holds, or "".
func pieceOf(text, secret string) string {
	for i := 0; i+pieceLen <= len(secret); i++ {
		if piece := secret[i : i+pieceLen]; strings.Contains(text, piece) {
			return piece
		}
	}
	return ""
}

// events lets the recovery run wait for what the program prints and what
// the providers receive.
type events struct {
	mu    sync.Mutex
	more  chan struct{} // closed when something happens, then replaced
	lines *lines
}

func (e *events) bump() {
	e.mu.Lock()
	defer e.mu.Unlock()
	close(e.more)
	e.more = make(chan struct{})
}

// waitUntil returns once cond holds, or an error when ctx ends first.
func (e *events) waitUntil(ctx context.Context, cond func() bool) error {
	for {
		e.mu.Lock()
		more := e.more
		e.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-more:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// lines are what the program printed in the recovery run, line by line.
type lines struct {
	events *events
	mu     sync.Mutex
	all    []string
	done   chan struct{} // closed when the program's output ends
}

// follow reads r into l, line by line, until r ends.
func (l *lines) follow(r io.Reader) {
	l.mu.Lock()
	l.all = nil
	l.done = make(chan struct{})
	l.mu.Unlock()
	go func() {
		defer close(l.done)
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			l.mu.Lock()
			l.all = append(l.all, scanner.Text())
			l.mu.Unlock()
			l.events.bump()
		}
		io.Copy(io.Discard, r)
	}()
}

func (l *lines) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

func (l *lines) reads() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.all {
		if readLogged.MatchString(line) {
			n++
		}
	}
	return n
}

// named counts the lines from start to end that match re.
func (l *lines) named(start, end int, re *regexp.Regexp) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.all[start:end] {
		if re.MatchString(line) {
			n++
		}
	}
	return n
}

func (l *lines) text() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return nil
	}
	return []byte(strings.Join(l.all, "\n") + "\n")
}

// providers are the local providers, by name, each with the secrets in
// its URL.
type providers struct {
	urls    map[string]string
	keyList []string
	closers []func()
	wire    *wire
	flaky   *switchable
	events  *events
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
// that provider's own credentials and nothing of another's, and counts the
// requests and the reads (requests that are not blocklag's probes) each
// provider received.
type wire struct {
	events  *events
	mu      sync.Mutex
	own     map[string]creds    // provider name: what each request to it must carry
	secrets map[string][]string // provider name: the secrets in its URL
	whose   map[string]string   // a path and query, or an Authorization: whose it is
	wrong   []string
	reads   map[string]int
	all     map[string]int
}

// creds are what a provider must receive: its path and query, which hold
// its keys, and its Authorization header ("" for none). Keys travel in the
// URL as much as in the header, so a request sent to one provider with
// another's path gives that other's keys away just the same.
type creds struct{ uri, auth string }

// receive records one request that provider name received.
func (wi *wire) receive(name string, r *http.Request) {
	defer wi.events.bump()
	wi.mu.Lock()
	defer wi.mu.Unlock()
	wi.all[name]++
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
	got := r.Header.Values("Authorization")
	want := wi.own[name].auth
	switch {
	case len(got) == 0 && want == "":
	case len(got) == 1 && got[0] == want:
	case len(got) == 0:
		wi.wrong = append(wi.wrong, name+" received no credentials, not its own")
	case len(got) == 1 && wi.whose[got[0]] != "":
		wi.wrong = append(wi.wrong, fmt.Sprintf("%s received the credentials of %s", name, wi.whose[got[0]]))
	default:
		wi.wrong = append(wi.wrong, fmt.Sprintf("%s received %d Authorization headers that are not its own",
			name, len(got)))
	}
	for header, values := range r.Header {
		for other, secrets := range wi.secrets {
			if other == name {
				continue
			}
			for _, secret := range secrets {
				for _, v := range values {
					if pieceOf(v, secret) != "" {
						wi.wrong = append(wi.wrong, fmt.Sprintf(
							"%s received a piece of a secret of %s in its %s header", name, other, header))
					}
				}
			}
		}
	}
}

// count returns how many requests provider name has received since the
// last reset.
func (wi *wire) count(name string) int {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	return wi.all[name]
}

func (wi *wire) reset() {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	wi.wrong = nil
	wi.reads = map[string]int{}
	wi.all = map[string]int{}
}

// take returns what was recorded since the last reset: each wrong
// request, once per provider and kind, in order, and the reads per
// provider.
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
	sort.Strings(wrong)
	return wrong, wi.reads
}

// switchable is a provider that can stop accepting connections, and then
// accept them again on the same port.
type switchable struct {
	addr    string
	handler http.Handler
	mu      sync.Mutex
	srv     *http.Server
}

// up starts serving at addr ("127.0.0.1:0" the first time, which picks a
// port) and keeps the address it got.
func (s *switchable) up() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.handler}
	go s.srv.Serve(ln)
	return nil
}

// down closes the listener and every connection: from then on a dial is
// refused.
func (s *switchable) down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	s.srv = nil
	return err
}

// startProviders starts the providers and gives each a URL with a path
// key shaped like a hosted provider's and a query key of its own; those
// named keyed-… also get a user name and password of their own.
func startProviders() *providers {
	ev := &events{more: make(chan struct{})}
	ev.lines = &lines{events: ev, done: make(chan struct{})}
	close(ev.lines.done)
	wi := &wire{events: ev, own: map[string]creds{}, secrets: map[string][]string{},
		whose: map[string]string{}}
	wi.reset()
	ps := &providers{urls: map[string]string{}, wire: wi, events: ev}
	add := func(name, base, pathPrefix string) {
		pathKey := newKey(32)
		queryKey := newKey(40)
		own := creds{uri: pathPrefix + pathKey + "?apikey=" + queryKey}
		wi.whose[own.uri] = name
		secrets := []string{pathKey, queryKey}
		if strings.HasPrefix(name, "keyed-") {
			user := newKey(12)
			password := newKey(24)
			basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
			// The header's base64 gives the pair away as surely as the pair.
			secrets = append(secrets, user, password, basic)
			own.auth = "Basic " + basic
			wi.whose[own.auth] = name
			base = strings.Replace(base, "://", "://"+user+":"+password+"@", 1)
		}
		ps.keyList = append(ps.keyList, secrets...)
		wi.secrets[name] = secrets
		wi.own[name] = own
		ps.urls[name] = base + own.uri
	}
	// record wraps a handler so that wire records what each request
	// carried before the handler answers it.
	record := func(name string, handle http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wi.receive(name, r)
			handle(w, r)
		})
	}
	serve := func(name, pathPrefix string, handle http.HandlerFunc) {
		srv := httptest.NewServer(record(name, handle))
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
	serve("ahead", "/v3/", answer("0x3fa")) // 1000 blocks above 0x12
	serve("keyed-a", "/v3/", keyedAnswer("keyed-a", "0x12"))
	serve("keyed-b", "/rpc/", keyedAnswer("keyed-b", "0x12"))
	serve("keyed-behind", "/v1/", keyedAnswer("keyed-behind", "0xa"))
	reject := func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		message := fmt.Sprintf("invalid key in %s (%s; %s:%s)",
			r.URL.RequestURI(), r.Header.Get("Authorization"), user, password)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":%q}}`, message)
	}
	serve("rejecting", "/v2/", reject)
	serve("keyed-rejecting", "/v2/", reject)
	// It answers probes as the others do, but sends every read to
	// healthy's URL, keys and all.
	serve("redirecting", "/v3/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("User-Agent"), "failnext-blocklag") {
			answer("0x12")(w, r)
			return
		}
		w.Header().Set("Location", ps.urls["healthy"])
		w.WriteHeader(http.StatusTemporaryRedirect)
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

	ps.flaky = &switchable{addr: "127.0.0.1:0", handler: record("flaky", answer("0x12"))}
	if err := ps.flaky.up(); err != nil {
		panic(err)
	}
	ps.closers = append(ps.closers, func() { ps.flaky.down() })
	add("flaky", "http://"+ps.flaky.addr, "/v3/")
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
