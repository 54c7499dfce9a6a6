// Command leakcheck runs a program that reads its providers from
// ETH_RPC_URLS, as the README's Quick start does, against hostile local
// providers whose URLs hold API keys, and fails when anything the program
// prints shows a piece of a key.
//
//	leakcheck PROGRAM
//
// The providers listen on loopback, each URL with a key in its path and
// another in its query: one answers eth_blockNumber, one rejects the key
// with HTTP 401 and echoes the request's path and query in its body, one
// refuses connections, one hangs up without answering and one never
// answers. PROGRAM runs once with all of them and once with each failing
// one alone (so that its reads, not only its checks, meet the failure),
// and once with a URL that blocklag refuses. Each run lasts until PROGRAM
// has logged a read or exited, whichever comes first. A piece is any 8
// bytes of a key.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
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
	"time"
)

// readLogged matches a line in which the Quick start logged a read, either
// way it can end.
var readLogged = regexp.MustCompile(`latest block|read failed`)

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

// check runs program in every scenario, copies what each run printed to
// w, and returns an error naming each piece of a key that any run printed.
func check(program string, w io.Writer) error {
	ps := startProviders()
	defer ps.close()
	// An invalid escape in the path, which New refuses.
	bad := "bad=" + strings.Replace(ps.urlOf("refusing"), "?", "%zz?", 1)
	scenarios := []struct {
		name string
		urls string
	}{
		{"every provider", ps.list("healthy", "rejecting", "refusing", "hangup", "hung")},
		{"only the one that rejects the key", ps.list("rejecting")},
		{"only the one that refuses connections", ps.list("refusing")},
		{"only the one that hangs up", ps.list("hangup")},
		{"only the one that never answers", ps.list("hung")},
		{"a URL that blocklag refuses", bad},
	}

	if err := canary(ps); err != nil {
		return err
	}
	var failures []string
	for _, sc := range scenarios {
		out, err := runOnce(program, sc.urls)
		if err != nil {
			return fmt.Errorf("%s: %v; it printed:\n%s", sc.name, err, out)
		}
		fmt.Fprintf(w, "== %s: %d lines\n%s", sc.name, bytes.Count(out, []byte("\n")), out)
		for _, leak := range leaks(out, ps.keys()) {
			failures = append(failures, fmt.Sprintf("%s: %s", sc.name, leak))
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("the program printed pieces of keys:\n%s", strings.Join(failures, "\n"))
	}
	fmt.Fprintln(w, "leakcheck: no piece of any key in anything the program printed")
	return nil
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

// runOnce runs program with ETH_RPC_URLS set to urls until it logs a read
// or exits, and returns all it printed on standard output and standard
// error together. A program that exits before logging a read must have
// printed something: a refused configuration is reported, not silent.
func runOnce(program, urls string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program)
	cmd.Env = append(os.Environ(), "ETH_RPC_URLS="+urls)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		w.Close()
		exited <- err
	}()

	var out bytes.Buffer
	sawRead := false
	lines := bufio.NewReader(r)
	for {
		line, err := lines.ReadBytes('\n')
		out.Write(line)
		if readLogged.Match(line) {
			sawRead = true
			break
		}
		if err != nil {
			break // the program exited, or was killed at runTimeout
		}
	}
	cmd.Process.Kill()
	io.Copy(&out, lines) // whatever it wrote before the kill
	<-exited
	switch {
	case ctx.Err() != nil:
		return out.Bytes(), fmt.Errorf("no read logged within %v", runTimeout)
	case !sawRead && out.Len() == 0:
		return out.Bytes(), errors.New("it exited without printing anything")
	}
	return out.Bytes(), nil
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

// startProviders starts the five providers and gives each a URL with a
// path key shaped like a hosted provider's and a query key of its own.
func startProviders() *providers {
	ps := &providers{urls: map[string]string{}}
	add := func(name, base, pathPrefix string) {
		pathKey, queryKey := newKey(32), newKey(40)
		ps.urls[name] = base + pathPrefix + pathKey + "?apikey=" + queryKey
		ps.keyList = append(ps.keyList, pathKey, queryKey)
	}

	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x12"}`)
	}))
	ps.closers = append(ps.closers, healthy.Close)
	add("healthy", healthy.URL, "/v3/")

	rejecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"invalid key in %s"}}`, r.URL.RequestURI())
	}))
	ps.closers = append(ps.closers, rejecting.Close)
	add("rejecting", rejecting.URL, "/v2/")

	// A port that was just released: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	refusing := "http://" + ln.Addr().String()
	ln.Close()
	add("refusing", refusing, "/eth/")

	add("hangup", listen(ps, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n') // the request line, then hang up
		c.Close()
	}), "/")

	stop := make(chan struct{})
	ps.closers = append(ps.closers, func() { close(stop) })
	add("hung", listen(ps, func(c net.Conn) {
		<-stop // accept, then say nothing until the check ends
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
