package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// With -metrics-addr, run serves blocklag's gauges at /metrics while it
// runs, on the address it logs, and stops serving them before it returns.
func TestRunServesMetricsWhileItRuns(t *testing.T) {
	n := startDevNode(t, 2)
	env := map[string]string{"ETH_RPC_PRIMARY_URL": n.URL, "ETH_RPC_BACKUP_URL": n.URL + "/"}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout) // a guard: the first check cancels
	defer cancel()
	r, w := io.Pipe()
	status := make(chan int, 1)
	go func() {
		defer w.Close()
		status <- run(ctx, []string{"-metrics-addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, w)
	}()

	var url, scraped string
	lines := bufio.NewScanner(r)
	for lines.Scan() { // to the end, so that run never blocks on its log
		line := lines.Text()
		if _, u, ok := strings.Cut(line, "metrics: serving "); ok {
			url = u
		}
		if strings.Contains(line, "check: ref=2") && url != "" && scraped == "" {
			var err error
			if scraped, err = fetch(url); err != nil {
				t.Errorf("scrape during the run: %v", err)
			}
			cancel()
		}
	}
	if code := <-status; code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	for _, want := range []string{
		`blocklag_provider_eligible{provider="primary"} 1`,
		`blocklag_provider_height{provider="backup"} 2`,
		`blocklag_reference_height 2`,
		`blocklag_checked_timestamp_seconds `,
	} {
		if !strings.Contains(scraped, want) {
			t.Errorf("the scrape of %q lacks %q:\n%s", url, want, scraped)
		}
	}
	if _, err := fetch(url); err == nil {
		t.Errorf("%s still answers after run returned", url)
	}
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
