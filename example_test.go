package blocklag_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// fakeNode starts a JSON-RPC server that reports the given block height and
// balance. Like many simple providers, it answers every request with id 1.
// Real code points at real providers instead.
func fakeNode(height, balance string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Method string }
		json.NewDecoder(r.Body).Decode(&req)
		result := height
		if req.Method == "eth_getBalance" {
			result = balance
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%q}`, result)
	}))
}

// A Monitor marks the lagging primary ineligible, and a failnext
// transport using monitor.Eligible sends a request meant for the primary to
// the backup instead.
func ExampleMonitor() {
	primary := fakeNode("0x64", "0x0") // block 100
	defer primary.Close()
	backup := fakeNode("0x6e", "0x2a") // block 110
	defer backup.Close()

	endpoints := []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "backup", URL: backup.URL},
	}
	monitor, err := blocklag.New(blocklag.Config{Endpoints: endpoints, MaxLag: 3})
	if err != nil {
		panic(err)
	}
	if err := monitor.Check(context.Background()); err != nil {
		fmt.Println("check:", err)
	}
	fmt.Println("primary eligible:", monitor.Eligible("primary"))
	fmt.Println("backup eligible:", monitor.Eligible("backup"))

	transport, err := failnext.New(failnext.Config{Endpoints: endpoints, Eligible: monitor.Eligible})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}
	ctx := failnext.WithFailoverAllowed(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000000","latest"]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, primary.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var answer struct{ Result string }
	data, _ := io.ReadAll(resp.Body)
	json.Unmarshal(data, &answer)
	fmt.Println("balance:", answer.Result)

	// Output:
	// primary eligible: false
	// backup eligible: true
	// balance: 0x2a
}

// When some providers fail, Check still publishes and returns one
// *ProbeError per failed provider, joined; errors.As on each joined error
// tells which provider failed and why.
func ExampleProbeError() {
	primary := fakeNode("0x64", "0x0")
	defer primary.Close()
	backup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer backup.Close()

	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "backup", URL: backup.URL},
	}})
	if err != nil {
		panic(err)
	}
	err = monitor.Check(context.Background())
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			var pe *blocklag.ProbeError
			if errors.As(e, &pe) {
				fmt.Printf("%s failed: %v\n", pe.Endpoint, pe.Err)
			}
		}
	}
	fmt.Println("primary eligible:", monitor.Eligible("primary"))
	fmt.Println("backup eligible:", monitor.Eligible("backup"))

	// Output:
	// backup failed: HTTP status 503
	// primary eligible: true
	// backup eligible: false
}

// Status logs through log/slog as one group with a group per provider. The
// handler here drops the time-valued attributes (the record's time, checked
// and advanced) only so that the output below stays the same on every run.
func ExampleMonitor_Status() {
	primary := fakeNode("0x64", "0x0") // block 100
	defer primary.Close()
	backup := fakeNode("0x6e", "0x0") // block 110
	defer backup.Close()

	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{
		{ID: "primary", URL: primary.URL},
		{ID: "backup", URL: backup.URL},
	}, MaxLag: 3})
	if err != nil {
		panic(err)
	}
	if err := monitor.Check(context.Background()); err != nil {
		fmt.Println("check:", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindTime {
				return slog.Attr{}
			}
			return a
		},
	}))
	logger.Info("lag check", "status", monitor.Status())

	// Output:
	// level=INFO msg="lag check" status.reference=110 status.primary.eligible=false status.primary.height=100 status.primary.lag=10 status.backup.eligible=true status.backup.height=110 status.backup.lag=0
}
