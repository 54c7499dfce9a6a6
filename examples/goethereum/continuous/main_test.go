package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad or missing configuration exits with status 2 and a message that
// names the problem without the URL's secrets.
func TestRunRejectsBadEnvironment(t *testing.T) {
	const secret = "k3y"
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		message string
	}{
		{"no primary", map[string]string{"ETH_RPC_BACKUP_URL": "http://b"}, nil, "ETH_RPC_PRIMARY_URL is not set"},
		{"no backup", map[string]string{"ETH_RPC_PRIMARY_URL": "http://a"}, nil, "ETH_RPC_BACKUP_URL is not set"},
		{"an invalid URL", map[string]string{
			"ETH_RPC_PRIMARY_URL": "ftp://user:" + secret + "@a/v3/" + secret,
			"ETH_RPC_BACKUP_URL":  "http://b",
		}, nil, `endpoint 0 ("primary")`},
		{"a URL with a fragment", map[string]string{
			"ETH_RPC_PRIMARY_URL": "http://a/?key=" + secret + "#x",
			"ETH_RPC_BACKUP_URL":  "http://b",
		}, nil, "fragment"},
		{"a bad flag", map[string]string{"ETH_RPC_PRIMARY_URL": "http://a", "ETH_RPC_BACKUP_URL": "http://b"}, []string{"-check-every", "soon"}, "check-every"},
		{"a metrics address it cannot listen on", map[string]string{"ETH_RPC_PRIMARY_URL": "http://a", "ETH_RPC_BACKUP_URL": "http://b"}, []string{"-metrics-addr", "127.0.0.1:no-port"}, "metrics:"},
		{"a negative quorum", map[string]string{"ETH_RPC_PRIMARY_URL": "http://a", "ETH_RPC_BACKUP_URL": "http://b"}, []string{"-quorum", "-1"}, "Quorum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), tt.args, func(k string) string { return tt.env[k] }, &out)
			if code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if !strings.Contains(out.String(), tt.message) {
				t.Errorf("output %q does not say %q", out.String(), tt.message)
			}
			if strings.Contains(out.String(), secret) {
				t.Errorf("output %q leaks the URL", out.String())
			}
		})
	}
}

// run returns 0 when its context ends, as it does on SIGINT or SIGTERM.
func TestRunStopsCleanly(t *testing.T) {
	n := startDevNode(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	env := map[string]string{"ETH_RPC_PRIMARY_URL": n.URL, "ETH_RPC_BACKUP_URL": n.URL + "/"}
	out := &cancelOn{stopAt: "read: block 2 from primary", stop: cancel}
	if code := run(ctx, nil, func(k string) string { return env[k] }, out); code != 0 {
		t.Errorf("exit status %d, want 0; output:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "check: ref=2 primary=2 (eligible) backup=2 (eligible)") || !strings.Contains(out.String(), "stopped") {
		t.Errorf("output lacks the check or the shutdown:\n%s", out.String())
	}
}

// -chain-id makes each provider confirm its chain: a dev node, whose chain
// ID is 1337 (0x539), fails the check for mainnet and passes its own.
func TestRunChainIDFlag(t *testing.T) {
	n := startDevNode(t, 2)
	env := map[string]string{"ETH_RPC_PRIMARY_URL": n.URL, "ETH_RPC_BACKUP_URL": n.URL + "/"}
	tests := []struct {
		chainID, want string
	}{
		{"1", `endpoint "primary": chain ID 1337 (0x539), want 1`},
		{"1337", "check: ref=2 primary=2 (eligible) backup=2 (eligible)"},
	}
	for _, tt := range tests {
		t.Run("with -chain-id "+tt.chainID, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout) // a guard: the wanted line cancels
			defer cancel()
			out := &cancelOn{stopAt: tt.want, stop: cancel}
			if code := run(ctx, []string{"-chain-id", tt.chainID}, func(k string) string { return env[k] }, out); code != 0 {
				t.Errorf("exit status %d, want 0; output:\n%s", code, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out.String())
			}
		})
	}
}

// cancelOn collects run's output and calls stop once a write contains stopAt.
// run logs from its own goroutine only, so no lock is needed.
type cancelOn struct {
	bytes.Buffer
	stopAt string
	stop   func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.stopAt) {
		c.stop()
	}
	return c.Buffer.Write(p)
}
