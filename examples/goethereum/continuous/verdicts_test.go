package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// published is a Status as a Check publishes it, with each provider at the
// height given, or failed with err when err is set.
func published(reference uint64, eps ...blocklag.EndpointStatus) blocklag.Status {
	return blocklag.Status{Checked: time.Unix(1700000000, 0), Reference: reference, MaxLag: maxLag, Endpoints: eps}
}

func at(id failnext.EndpointID, height, reference uint64) blocklag.EndpointStatus {
	return blocklag.EndpointStatus{ID: id, Eligible: reference-height <= maxLag, Height: height, Lag: reference - height}
}

func failed(id failnext.EndpointID, err error) blocklag.EndpointStatus {
	return blocklag.EndpointStatus{ID: id, Err: &blocklag.ProbeError{Endpoint: id, Err: err}}
}

func TestReferenceFellSaysWhy(t *testing.T) {
	before := published(20, at("primary", 5, 20), at("backup", 20, 20))
	tests := []struct {
		name      string
		before    blocklag.Status
		now       blocklag.Status
		wantMsg   string
		wantAttrs string
	}{
		{"a reference that rose is not a fall", before,
			published(21, at("primary", 6, 21), at("backup", 21, 21)), "", "[]"},
		{"a reference that stayed is not a fall", before,
			published(20, at("primary", 6, 20), at("backup", 20, 20)), "", "[]"},
		{"nothing falls from the fail-open state", blocklag.Status{},
			published(5, at("primary", 5, 5), failed("backup", errors.New("refused"))), "", "[]"},
		{"the leader that stopped answering is named with its reason", before,
			published(6, at("primary", 6, 6), failed("backup", errors.New("refused"))),
			fellLeaderFailed, "[from 20 to 6 led backup reason transport]"},
		{"a leader that went back is named with its height", before,
			published(8, at("primary", 6, 8), at("backup", 8, 8)),
			fellLeaderLower, "[from 20 to 8 led backup height 8]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, attrs := referenceFell(tt.before, tt.now)
			if msg != tt.wantMsg || fmt.Sprint(attrs) != tt.wantAttrs {
				t.Errorf("referenceFell = %q, %v; want %q, %s", msg, attrs, tt.wantMsg, tt.wantAttrs)
			}
		})
	}
}

// A check line holds each provider's verdict with its height and lag, or
// the reason its probe failed, and fits in 200 bytes with the standard
// logger's date and time, for two providers at mainnet heights.
func TestVerdictsFitOneShortLine(t *testing.T) {
	tests := []struct {
		name string
		st   blocklag.Status
		want string
	}{
		{"before any check", blocklag.Status{MaxLag: maxLag, Endpoints: []blocklag.EndpointStatus{{ID: "primary", Eligible: true}}},
			`verdicts="none published yet: every provider eligible"`},
		{"both answered", published(21500013, at("primary", 21500000, 21500013), at("backup", 21500013, 21500013)),
			`reference=21500013 primary.eligible=false primary.height=21500000 primary.lag=13 backup.eligible=true backup.height=21500013 backup.lag=0`},
		{"one failed", published(21500000, at("primary", 21500000, 21500000), failed("backup", errors.New("refused"))),
			`reference=21500000 primary.eligible=true primary.height=21500000 primary.lag=0 backup.eligible=false backup.reason=transport`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: dropTime}))
			logger.Info("check", verdicts(tt.st)...)
			got := strings.TrimPrefix(strings.TrimSuffix(b.String(), "\n"), "level=INFO msg=check ")
			if got != tt.want {
				t.Errorf("the check line's attributes are\n%s\nwant\n%s", got, tt.want)
			}
			// The command logs through the standard logger: date, time, level, message.
			if n := len("2006/01/02 15:04:05 INFO check ") + len(got); n > 200 {
				t.Errorf("the check line takes %d bytes, more than 200", n)
			}
		})
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
