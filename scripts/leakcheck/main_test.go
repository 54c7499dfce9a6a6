package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// With LEAKCHECK_FAKE set, the test binary plays the program under check:
// it sends one POST to every URL in ETH_RPC_URLS and logs each failure as
// the variable says, the raw error's text ("raw") or its own words
// ("words"), then logs that it read.
func TestMain(m *testing.M) {
	switch os.Getenv("LEAKCHECK_FAKE") {
	case "":
		os.Exit(m.Run())
	case "raw":
		fake(func(err error) string { return err.Error() })
	case "words":
		fake(func(error) string { return "no answer" })
	}
	os.Exit(0)
}

func fake(show func(error) string) {
	client := &http.Client{Timeout: 2 * time.Second} // one provider never answers
	for _, field := range strings.Fields(os.Getenv("ETH_RPC_URLS")) {
		_, url, _ := strings.Cut(field, "=")
		resp, err := client.Post(url, "application/json", strings.NewReader("{}"))
		if err != nil {
			fmt.Println("read failed:", show(err))
			continue
		}
		resp.Body.Close()
		fmt.Println("latest block: 18")
	}
}

func TestCheckFailsAProgramThatLogsARawRequestError(t *testing.T) {
	tests := []struct {
		name     string
		fake     string
		wantLeak bool
	}{
		{"a program that logs the raw error fails", "raw", true},
		{"a program that logs its own words passes", "words", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LEAKCHECK_FAKE", tt.fake)
			err := check(os.Args[0], io.Discard)
			if got := err != nil && strings.Contains(err.Error(), "pieces of keys"); got != tt.wantLeak {
				t.Errorf("check = %v, want a leak reported: %v", err, tt.wantLeak)
			}
		})
	}
}

func TestLeaksFindsEveryEightBytePieceOfAKey(t *testing.T) {
	const key = "abcdefghij0123456789"
	tests := []struct {
		name string
		out  string
		want bool
	}{
		{"the whole key", "url /v3/" + key, true},
		{"its first 8 bytes", "key abcdefgh...", true},
		{"8 bytes from its middle", "x ij012345 y", true},
		{"its last 8 bytes", "23456789", true},
		{"7 bytes of it", "abcdefg", false},
		{"two pieces split across lines", "abcd\nefgh", false},
		{"nothing of it", "read failed: no answer", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(leaks([]byte(tt.out), []string{key})) > 0; got != tt.want {
				t.Errorf("leaks(%q) found a piece: %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}
