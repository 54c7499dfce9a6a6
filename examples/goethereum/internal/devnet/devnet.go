// Package devnet runs go-ethereum development chains inside the process, as
// `geth --dev` assembles them: the node stack, the eth service and a
// simulated beacon that seals blocks, in memory, with no peers, serving HTTP
// JSON-RPC on a free loopback port.
//
// The example's tests use it to put real nodes at chosen heights, and the
// continuous command's -dev mode runs its loop against a [Demo], so that it
// needs no provider URL. None of this belongs in a program that talks to
// real providers.
package devnet

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
)

// Node is one running dev chain. Stop may be called from any goroutine, at
// any time, any number of times; Commit must not run during or after Stop.
type Node struct {
	// URL is the node's HTTP JSON-RPC address, http://127.0.0.1:PORT.
	URL string

	// ChainID is the chain ID the node answers to eth_chainId: go-ethereum's
	// developer chain ID, the same for every dev node.
	ChainID uint64

	beacon *catalyst.SimulatedBeacon // set by Start, read-only afterwards

	mu    sync.Mutex
	stack *node.Node // nil once Stop has run; guarded by mu
}

// Start starts a dev chain at block 0. With period 0 it adds blocks only
// when Commit is called; otherwise it seals one block at once and then one
// every period, which must be a whole number of seconds. Call Stop to shut
// it down.
func Start(period time.Duration) (*Node, error) {
	if period < 0 || period%time.Second != 0 {
		return nil, fmt.Errorf("devnet: period %v is not a whole number of seconds", period)
	}
	cfg := node.DefaultConfig
	cfg.DataDir = "" // in memory
	cfg.HTTPHost = "127.0.0.1"
	cfg.HTTPPort = 0
	cfg.HTTPModules = []string{"eth", "net", "web3"}
	cfg.P2P = p2p.Config{NoDiscovery: true, ListenAddr: ""}
	stack, err := node.New(&cfg)
	if err != nil {
		return nil, fmt.Errorf("devnet: creating the node: %w", err)
	}
	ethCfg := ethconfig.Defaults
	ethCfg.Genesis = core.DeveloperGenesisBlock(11_500_000, nil)
	ethCfg.SyncMode = ethconfig.FullSync
	backend, err := eth.New(stack, &ethCfg)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("devnet: creating the eth service: %w", err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(uint64(period/time.Second), common.Address{}, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("devnet: creating the simulated beacon: %w", err)
	}
	catalyst.RegisterSimulatedBeaconAPIs(stack, beacon)
	stack.RegisterLifecycle(beacon)
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("devnet: starting the node: %w", err)
	}
	return &Node{
		URL:     stack.HTTPEndpoint(),
		ChainID: ethCfg.Genesis.Config.ChainID.Uint64(),
		beacon:  beacon,
		stack:   stack,
	}, nil
}

// Commit seals the given number of blocks at once, one after another.
func (n *Node) Commit(blocks int) {
	for range blocks {
		n.beacon.Commit()
	}
}

// Stop shuts the node down: from then on its URL refuses connections. Calls
// after the first do nothing.
func (n *Node) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stack != nil {
		n.stack.Close()
		n.stack = nil
	}
}

// The demo's two chains: the primary seals a block every PrimaryPeriod and
// soon falls behind the backup, which seals one every BackupPeriod.
const (
	PrimaryPeriod = 4 * time.Second
	BackupPeriod  = 1 * time.Second
)

// Demo is what -dev runs against: a slow primary, a fast backup, and
// perhaps a timer that stops the backup.
type Demo struct {
	Primary, Backup *Node
	timer           *time.Timer // nil when StartDemo was given no time
}

// StartDemo starts both chains, logs where they listen, and, when
// stopBackupAfter is positive, stops the backup after that long through
// StopBackup.
func StartDemo(stopBackupAfter time.Duration) (*Demo, error) {
	primary, err := Start(PrimaryPeriod)
	if err != nil {
		return nil, err
	}
	backup, err := Start(BackupPeriod)
	if err != nil {
		primary.Stop()
		return nil, err
	}
	slog.Info("dev: primary node started", "url", primary.URL, "block_every", PrimaryPeriod)
	slog.Info("dev: backup node started", "url", backup.URL, "block_every", BackupPeriod,
		"stops_in", stopBackupAfter)
	d := &Demo{Primary: primary, Backup: backup}
	if stopBackupAfter > 0 {
		d.timer = time.AfterFunc(stopBackupAfter, d.StopBackup)
	}
	return d, nil
}

// StopBackup logs that the backup stops, and stops it.
func (d *Demo) StopBackup() {
	slog.Info("dev: stopping the backup node")
	d.Backup.Stop()
}

// Stop stops both chains, and the timer if it has not fired yet.
func (d *Demo) Stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
	d.Backup.Stop()
	d.Primary.Stop()
}
