package main

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
)

// devNode is an in-memory go-ethereum dev chain, assembled as geth --dev
// assembles it, serving HTTP JSON-RPC on a free loopback port. Blocks are
// added only by commit.
type devNode struct {
	stack  *node.Node
	beacon *catalyst.SimulatedBeacon
	url    string
}

func startDevNode(t *testing.T, blocks int) *devNode {
	t.Helper()
	cfg := node.DefaultConfig
	cfg.DataDir = "" // in memory
	cfg.HTTPHost, cfg.HTTPPort = "127.0.0.1", 0
	cfg.HTTPModules = []string{"eth", "net", "web3"}
	cfg.P2P = p2p.Config{NoDiscovery: true, ListenAddr: ""}
	stack, err := node.New(&cfg)
	if err != nil {
		t.Fatalf("node.New: %v", err)
	}
	ethCfg := ethconfig.Defaults
	ethCfg.Genesis = core.DeveloperGenesisBlock(11_500_000, nil)
	ethCfg.SyncMode = ethconfig.FullSync
	backend, err := eth.New(stack, &ethCfg)
	if err != nil {
		t.Fatalf("eth.New: %v", err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend) // period 0: blocks only on Commit
	if err != nil {
		t.Fatalf("NewSimulatedBeacon: %v", err)
	}
	catalyst.RegisterSimulatedBeaconAPIs(stack, beacon)
	stack.RegisterLifecycle(beacon)
	if err := stack.Start(); err != nil {
		t.Fatalf("starting the node: %v", err)
	}
	n := &devNode{stack: stack, beacon: beacon, url: stack.HTTPEndpoint()}
	t.Cleanup(n.stop)
	n.commit(blocks)
	return n
}

// commit adds blocks, one per Commit.
func (n *devNode) commit(blocks int) {
	for range blocks {
		n.beacon.Commit()
	}
}

// stop shuts the node down; later calls do nothing.
func (n *devNode) stop() {
	if n.stack != nil {
		n.stack.Close()
		n.stack = nil
	}
}
