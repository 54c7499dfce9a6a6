package main

import (
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// The -dev demo tells its story in order: the slow primary falls behind and
// becomes ineligible, reads come from the backup, the backup stops, the next
// check shows its probe error and says why the reference fell, and reads
// come from the primary again.
//
// The chains run on the wall clock, so the test stops the backup itself,
// once the log has shown the primary behind and a read from the backup.
func TestDevDemoTellsItsStory(t *testing.T) {
	log := &cursor{tap: tapLog(t)}
	demo, err := devnet.StartDemo(0)
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Stop()
	endpoints := []failnext.Endpoint{
		{ID: "primary", URL: demo.Primary.URL},
		{ID: "backup", URL: demo.Backup.URL},
	}
	stop := startRun(t, endpoints, time.Second, time.Second, "")

	log.waitFor(t, "the primary behind and ineligible", "provider ineligible: behind", names("primary"))
	log.waitFor(t, "a read served by the backup", "read", func(r slog.Record) bool {
		return attr(r, "endpoint") == failnext.EndpointID("backup")
	})
	demo.StopBackup()
	log.waitFor(t, "the backup stopping", "dev: stopping the backup node", anyRecord)
	log.waitFor(t, "the backup's probe error", "provider ineligible: probe failed", names("backup"))
	log.waitFor(t, "the reference's fall explained", fellLeaderFailed, func(r slog.Record) bool {
		return attr(r, "led") == failnext.EndpointID("backup")
	})
	log.waitFor(t, "a read served by the primary", "read", func(r slog.Record) bool {
		return attr(r, "endpoint") == failnext.EndpointID("primary") && attr(r, "block") != nil
	})
	stop()
}

// Without -dev, startDev does nothing; with it, a negative -dev-duration
// is refused before any node starts or any variable changes.
func TestStartDevStartsNothingItShouldNot(t *testing.T) {
	tests := []struct {
		name     string
		dev      bool
		duration time.Duration
		wantErr  bool
	}{
		{"without -dev it does nothing", false, time.Minute, false},
		{"without -dev it lets any -dev-duration be", false, -time.Second, false},
		{"with -dev it refuses a negative -dev-duration", true, -time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const list = "mine=https://a.example"
			t.Setenv("ETH_RPC_URLS", list)
			setFlag(t, "dev", fmt.Sprint(tt.dev))
			setFlag(t, "dev-duration", tt.duration.String())
			err := startDev()
			if (err != nil) != tt.wantErr {
				t.Errorf("startDev() = %v, want an error: %v", err, tt.wantErr)
			}
			if got := os.Getenv("ETH_RPC_URLS"); got != list {
				t.Errorf("startDev() changed ETH_RPC_URLS to %q", got)
			}
		})
	}
}
