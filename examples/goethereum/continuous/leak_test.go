package main

import (
	"regexp"
	"strings"
	"testing"
)

// The command as a user builds and runs it, driven through its environment
// alone, against local providers whose URLs hold keys in the path, in the
// query and in user:password@.
func TestTheBuiltCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command, which takes minutes the first time")
	}
	bin := buildCommand(t)
	t.Run("keeps each key with its provider", func(t *testing.T) { keepsEachKeyWithItsProvider(t, bin) })
	t.Run("refuses mistyped providers in one line", func(t *testing.T) { refusesMistypedProviders(t, bin) })
	t.Run("logs a refusing provider once, and its recovery once", func(t *testing.T) {
		logsRefusalAndRecoveryOnce(t, bin)
	})
}

// Nothing the command prints holds 8 bytes of a key, each provider
// receives its own credentials and nothing of another's URL, the provider
// far ahead is not read, and each first read is served by the provider it
// should be, or fails.
func keepsEachKeyWithItsProvider(t *testing.T, bin string) {
	tests := []struct {
		name   string
		list   []string // providers for ETH_RPC_URLS, in order
		seed   []string // or the two for ETH_RPC_PRIMARY_URL and ETH_RPC_BACKUP_URL
		served string   // the name the first read's line gives; "" when that read must fail
	}{
		{name: "every kind of provider, the one far ahead first", list: []string{"ahead", "keyed-behind",
			"refusing", "hung", "rejecting", "keyed-rejecting", "keyed-a", "redirecting", "healthy"},
			served: "keyed-a"},
		{name: "user:password@ first, answering", list: []string{"keyed-a", "healthy"}, served: "keyed-a"},
		{name: "user:password@ first and behind, another next",
			list: []string{"keyed-behind", "keyed-b", "healthy"}, served: "keyed-b"},
		{name: "user:password@ after one without",
			list: []string{"behind", "keyed-a", "keyed-b"}, served: "keyed-a"},
		{name: "user:password@ last", list: []string{"healthy", "behind", "keyed-b"}, served: "healthy"},
		{name: "the seed's two variables, user:password@ primary and behind",
			seed: []string{"keyed-behind", "healthy"}, served: "backup"},
		{name: "a redirect of reads after one behind",
			list: []string{"keyed-behind", "redirecting", "healthy"}},
		{name: "only one that rejects its key, echoing it", list: []string{"rejecting"}},
		{name: "only one that rejects its user:password@, echoing it", list: []string{"keyed-rejecting"}},
		{name: "only one that hangs", list: []string{"hung"}},
		{name: "only one that redirects reads", list: []string{"redirecting"}},
		{name: "only one that refuses connections", list: []string{"refusing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFleet(t)
			env := map[string]string{"ETH_RPC_URLS": f.list(tt.list...)}
			if tt.seed != nil {
				env = map[string]string{
					"ETH_RPC_PRIMARY_URL": f.urlOf(tt.seed[0]),
					"ETH_RPC_BACKUP_URL":  f.urlOf(tt.seed[1]),
				}
			}
			c := f.start(t, bin, env)
			read := c.waitForRead(t)
			c.kill()
			want := "read failed"
			if tt.served != "" {
				want = "read block=18 endpoint=" + tt.served
			}
			if !strings.Contains(read, want) {
				t.Errorf("the first read's line is %q, want it to hold %q; the command printed:\n%s",
					read, want, c.text())
			}
			f.checkPrinted(t, c.text())
			f.checkReceived(t)
			if n := f.readsOf("ahead"); n != 0 {
				t.Errorf("the provider far ahead received %d reads, want none", n)
			}
		})
	}
}

// A list or a pair of variables written wrong ends the command, before it
// sends anything, with one line that says what to write and shows nothing
// of what was written.
func refusesMistypedProviders(t *testing.T, bin string) {
	f := startFleet(t)
	healthy := f.urlOf("healthy")
	keyed := f.urlOf("keyed-a")
	const howToWrite = "write ETH_RPC_URLS='"
	tests := []struct {
		name string
		env  map[string]string
		want string // in the one line
	}{
		{"no list", map[string]string{}, howToWrite},
		{"URLs without names", list(healthy + " " + keyed), howToWrite},
		{"a URL with user:password@ and no name", list(keyed), howToWrite},
		{"commas between pairs", list("a=" + healthy + ",b=" + keyed), howToWrite},
		{"a comma and a space between pairs", list("a=" + healthy + ", b=" + keyed), howToWrite},
		{"a name holding '/'", list("mainnet/a=" + healthy), howToWrite},
		{"a name holding '@'", list("me@a=" + keyed), howToWrite},
		{"a stray '='", list("a==" + healthy), howToWrite},
		{"a missing '='", list("a " + keyed), howToWrite},
		{"the primary without the backup",
			map[string]string{"ETH_RPC_PRIMARY_URL": keyed}, "ETH_RPC_BACKUP_URL"},
		{"both forms", map[string]string{"ETH_RPC_URLS": "a=" + healthy, "ETH_RPC_PRIMARY_URL": keyed,
			"ETH_RPC_BACKUP_URL": healthy}, "not both"},
		{"a URL with an invalid escape", list("bad=" + strings.Replace(keyed, "?", "%zz?", 1)), `"bad"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.start(t, bin, tt.env)
			code := c.wait(t)
			lines := c.lines()
			if code <= 0 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("the command exited with status %d after printing %q, want one line holding %q",
					code, lines, tt.want)
			}
			for name, value := range tt.env {
				if piece := pieceOf(c.text(), value); piece != "" {
					t.Errorf("the command printed %q, a piece of %s: %q", piece, name, c.text())
				}
			}
			f.checkPrinted(t, c.text())
			if n := f.requests(); n != 0 {
				t.Errorf("the providers received %d requests, want none", n)
			}
		})
	}
}

// A provider that refuses connections for several checks is logged once,
// and once when it accepts them again.
func logsRefusalAndRecoveryOnce(t *testing.T, bin string) {
	f := startFleet(t)
	c := f.start(t, bin, list(f.list("healthy", "flaky")), "-check-every", "100ms")
	c.waitForRead(t)
	flaky := regexp.MustCompile(`\bflaky\b`)
	for _, phase := range []struct {
		name   string
		change func(*testing.T)
	}{
		{"refusing connections", f.flaky.down},
		{"accepting them again", f.flaky.up},
	} {
		from := len(c.lines())
		probes := f.probesOf("healthy")
		phase.change(t)
		// The probes that healthy receives count the checks.
		f.bell.wait(t, "eight checks "+phase.name, func() bool { return f.probesOf("healthy") >= probes+8 })
		var named []string
		for _, l := range c.lines()[from:] {
			if flaky.MatchString(l) {
				named = append(named, l)
			}
		}
		if len(named) != 1 {
			t.Errorf("over eight checks %s, %d lines named it, want 1: %q", phase.name, len(named), named)
		}
	}
	c.kill()
	f.checkPrinted(t, c.text())
	f.checkReceived(t)
}
