package blocklag

import (
	"context"
	"fmt"
)

// chainIDRequest asks a provider which chain it serves. Like the height
// probe, it always carries id 1.
const chainIDRequest = `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`

// confirmChain returns nil when the provider reports Config.ChainID as its
// chain ID, and otherwise says why not. It sends the request and judges the
// answer exactly as the height probe does. A mismatch shows both IDs in
// decimal, as users configure them, with the hex the provider sent.
func (m *Monitor) confirmChain(ctx context.Context, ep endpoint) error {
	id, err := m.fetch(ctx, ep, chainIDRequest)
	if err != nil {
		return fmt.Errorf("chain ID request: %w", err)
	}
	if id != m.chainID {
		return fmt.Errorf("chain ID %d (%#x), want %d", id, id, m.chainID)
	}
	return nil
}
