package main

import (
	"testing"

	"github.com/yermakovsa/failnext-blocklag/examples/goethereum/internal/devnet"
)

// startDevNode starts an in-process dev chain that adds blocks only when
// told to, brings it to the given height, and stops it when the test ends.
func startDevNode(t *testing.T, blocks int) *devnet.Node {
	t.Helper()
	n, err := devnet.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	n.Commit(blocks)
	return n
}
