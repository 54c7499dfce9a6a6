package main

import (
	"log/slog"
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
	endpoints := []failnext.Endpoint{{ID: "primary", URL: demo.Primary.URL}, {ID: "backup", URL: demo.Backup.URL}}
	stop := startRun(t, endpoints, time.Second, time.Second, "")

	log.waitFor(t, "the primary behind and ineligible", "provider ineligible: behind", names("primary"))
	log.waitFor(t, "a read served by the backup", "read", func(r slog.Record) bool {
		return attr(r, "endpoint") == failnext.EndpointID("backup")
	})
	demo.StopBackup()
	log.waitFor(t, "the backup stopping", "dev: stopping the backup node", func(slog.Record) bool { return true })
	log.waitFor(t, "the backup's probe error", "provider ineligible: probe failed", names("backup"))
	log.waitFor(t, "the reference's fall explained", fellLeaderFailed, func(r slog.Record) bool {
		return attr(r, "led") == failnext.EndpointID("backup")
	})
	log.waitFor(t, "a read served by the primary", "read", func(r slog.Record) bool {
		return attr(r, "endpoint") == failnext.EndpointID("primary") && attr(r, "block") != nil
	})
	stop()
}

// -dev-duration takes a duration of zero or more, and nothing else.
func TestDemoDurationFlag(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"a minute and a half", "90s", 90 * time.Second, true},
		{"zero, to run until Ctrl-C", "0", 0, true},
		{"a negative duration", "-1s", 0, false},
		{"not a duration", "soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := demoTimer{}
			err := d.Set(tt.value)
			if (err == nil) != tt.ok || tt.ok && d.after != tt.want {
				t.Errorf("Set(%q) = %v, after %v; want ok %v, after %v", tt.value, err, d.after, tt.ok, tt.want)
			}
			if d.timer != nil {
				t.Errorf("Set(%q) started a timer before -dev started the demo", tt.value)
			}
		})
	}
}
