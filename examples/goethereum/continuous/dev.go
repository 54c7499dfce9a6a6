package main

import (
	"fmt"
	"log"
	"time"

	"github.com/yermakovsa/failnext"
	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// The demo's two chains: the primary seals a block every slowPeriod and
// falls behind the backup, which seals one every fastPeriod.
const (
	slowPeriod = 4 * time.Second
	fastPeriod = 1 * time.Second
)

// demo is what -dev runs against: two in-process dev nodes, the slow one
// configured first, so failnext would use it if blocklag let it.
type demo struct {
	endpoints  []failnext.Endpoint
	chainID    uint64 // the chain both nodes serve
	slow, fast *devnet.Node
	failTimer  *time.Timer
}

// startDemo starts both nodes and arranges for the fast one to stop after
// s.devFailAfter, saying so in the log.
func startDemo(s settings, logger *log.Logger) (*demo, error) {
	slow, err := devnet.Start(slowPeriod)
	if err != nil {
		return nil, fmt.Errorf("dev: %w", err)
	}
	fast, err := devnet.Start(fastPeriod)
	if err != nil {
		slow.Stop()
		return nil, fmt.Errorf("dev: %w", err)
	}
	logger.Printf("dev: primary is a go-ethereum dev node sealing a block every %v at %s", slowPeriod, slow.URL)
	logger.Printf("dev: backup is a go-ethereum dev node sealing a block every %v at %s", fastPeriod, fast.URL)
	logger.Printf("dev: the backup will be stopped after %v", s.devFailAfter)
	d := &demo{
		endpoints: []failnext.Endpoint{{ID: "primary", URL: slow.URL}, {ID: "backup", URL: fast.URL}},
		chainID:   slow.ChainID,
		slow:      slow,
		fast:      fast,
	}
	d.failTimer = time.AfterFunc(s.devFailAfter, func() {
		logger.Print("dev: stopping the backup node now; its reads and probes will fail")
		fast.Stop()
	})
	return d, nil
}

// stop shuts both nodes down, and cancels the backup's stop if it has not
// happened yet.
func (d *demo) stop() {
	d.failTimer.Stop()
	d.fast.Stop()
	d.slow.Stop()
}

// chainCheckLine says what -chain-id, set to want, does with dev nodes that
// serve chain ID served.
func chainCheckLine(served, want uint64) string {
	switch want {
	case 0:
		return fmt.Sprintf("dev: both nodes serve chain ID %d; -chain-id 0 turns the chain check off", served)
	case served:
		return fmt.Sprintf("dev: both nodes serve chain ID %d, which each must confirm before its height counts", served)
	default:
		return fmt.Sprintf("dev: both nodes serve chain ID %d, not the %d that -chain-id asks for, so every probe will fail", served, want)
	}
}
