package blocklag_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// With OwnCredentials as failnext's Base, a read that fails over reaches each
// provider with its own credentials only. The read's URL holds no key: it is
// the first provider's scheme and host, and failnext replaces it anyway.
func ExampleOwnCredentials() {
	var mu sync.Mutex
	var seen []string
	record := func(name string, status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			user, _, ok := r.BasicAuth()
			if !ok {
				user = "no credentials"
			}
			mu.Lock()
			seen = append(seen, name+" received "+user)
			mu.Unlock()
			w.WriteHeader(status)
		}
	}
	first := httptest.NewServer(record("first", http.StatusServiceUnavailable))
	defer first.Close()
	second := httptest.NewServer(record("second", http.StatusOK))
	defer second.Close()
	secondURL := strings.Replace(second.URL, "://", "://rpcuser:hunter2hunter2@", 1)

	transport, err := failnext.New(failnext.Config{
		Endpoints: []failnext.Endpoint{
			{ID: "first", URL: first.URL + "/v3/firstkey0123456789"},
			{ID: "second", URL: secondURL},
		},
		Base: blocklag.OwnCredentials(nil),
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{
		Transport: transport,
		// failnext drops a redirect's Location, so following one only
		// repeats the read.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	readURL, err := url.Parse(first.URL) // scheme and host alone: no key
	if err != nil {
		panic(err)
	}
	ctx := failnext.WithFailoverAllowed(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, readURL.String(), strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("status:", resp.StatusCode)
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		fmt.Println(s)
	}

	// Output:
	// status: 200
	// first received no credentials
	// second received rpcuser
}

// Redact redacts what a provider said in the error of an application's own
// read: here a 401 whose body echoes the key, as go-ethereum's HTTP errors
// print it.
func ExampleMonitor_Redact() {
	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{
		{ID: "infura", URL: "https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161"},
	}})
	if err != nil {
		panic(err)
	}
	read := fmt.Errorf("401 Unauthorized: invalid project id 9aa3d95b3bc440fa88ea12eaa4456161: %w",
		context.DeadlineExceeded)
	redacted := monitor.Redact(read)
	fmt.Println(redacted)
	fmt.Println("deadline:", errors.Is(redacted, context.DeadlineExceeded))

	// Output:
	// 401 Unauthorized: invalid project id [redacted]: context deadline exceeded
	// deadline: true
}
