package main

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
)

// -dev tells the whole story on its own, in order: the slow primary falls
// behind and is skipped, reads come from the backup, the backup stops, the
// next check shows its probe error, reads come from the primary again, and
// the demo ends by itself with status 0.
//
// The demo runs on the wall clock: the backup stops after 14 s, when the
// primary (a block every 4 s against the backup's 1 s) is normally 9 or
// more blocks behind, and the story needs 3 (MaxLag) plus one. After the
// stop, the next check and read come within a second each, and the demo
// runs 12 s more. Both margins leave room for a slow machine.
func TestDevDemo(t *testing.T) {
	args := []string{"-dev", "-dev-fail-after", "14s", "-dev-duration", "26s", "-check-every", "1s", "-read-every", "1s"}
	env := map[string]string{"ETH_RPC_PRIMARY_URL": "https://user:k3y@provider.example/v3/k3y"}
	r, w := io.Pipe()
	status := make(chan int, 1)
	go func() {
		defer w.Close()
		status <- run(context.Background(), args, func(k string) string { return env[k] }, w)
	}()

	story := []*regexp.Regexp{
		regexp.MustCompile(`dev: ignoring ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL`),
		regexp.MustCompile(`dev: both nodes serve chain ID 1337, which each must confirm before its height counts$`),
		regexp.MustCompile(`check: ref=\d+ primary=\d+ \(lag \d+, ineligible\) backup=\d+ \(eligible\)$`),
		regexp.MustCompile(`read: block \d+ from backup$`),
		regexp.MustCompile(`dev: stopping the backup node`),
		regexp.MustCompile(`check: ref=\d+ primary=\d+ \(eligible\) backup=failed \(ineligible: .*(refused|reset|EOF).*\)$`),
		regexp.MustCompile(`read: block \d+ from primary$`),
		regexp.MustCompile(`stopped$`),
	}
	next := 0
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		line := lines.Text()
		t.Log(line)
		if strings.Contains(line, "k3y") {
			t.Errorf("line %q leaks the ignored URL", line)
		}
		if next < len(story) && story[next].MatchString(line) {
			next++
		}
	}
	if next < len(story) {
		t.Errorf("the log never showed a line matching %q after the ones before it", story[next])
	}
	if code := <-status; code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

func TestChainCheckLine(t *testing.T) {
	tests := []struct {
		want uint64
		line string
	}{
		{0, "dev: both nodes serve chain ID 1337; -chain-id 0 turns the chain check off"},
		{1337, "dev: both nodes serve chain ID 1337, which each must confirm before its height counts"},
		{1, "dev: both nodes serve chain ID 1337, not the 1 that -chain-id asks for, so every probe will fail"},
	}
	for _, tt := range tests {
		if got := chainCheckLine(1337, tt.want); got != tt.line {
			t.Errorf("with -chain-id %d: %q, want %q", tt.want, got, tt.line)
		}
	}
}
